import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import {
  APRIL,
  addRule,
  anotherContract,
  assertInvoicesMatchEvents,
  companyWithContract,
  eventsOf,
  invoiceFor,
  lineNamed,
  project,
  submitInParallel,
  sum,
  usageEvent,
  minimumWords,
} from "../support/api.js";
import { assertDecimal, expectStatus } from "../support/assertions.js";

// Once with the defaults (2 lanes per company, one call in flight in each), once with one lane and several calls
// in flight: then calls of one company race inside one process for the same draft invoices, and only the
// invoice locks keep them apart.
const settings = [
  { BILLING_INGEST_LANES: "2", BILLING_INGEST_CALLS_IN_FLIGHT: "1" },
  { BILLING_INGEST_LANES: "1", BILLING_INGEST_CALLS_IN_FLIGHT: "4" },
];
for (const env of settings)
  describeEachEngine(
    `usage under concurrency (${env.BILLING_INGEST_LANES} lane(s), ${env.BILLING_INGEST_CALLS_IN_FLIGHT} call(s) in flight each)`,
    (t) => {
      afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

      it("stores and bills an event once when 30 requests send it at the same time", async () => {
        const { key, contract } = await companyWithContract(t());
        const event = usageEvent(contract.id, { quantity: 2 });
        const results = await submitInParallel(
          t(),
          key,
          Array.from({ length: 30 }, () => [event]),
        );
        for (const result of results) {
          assert.equal(result.accepted, 1);
          assert.equal(result.events[0]!.status, "accepted");
        }
        assert.equal(
          results.filter((r) => r.events[0]!.duplicate === false).length,
          1,
          "exactly one request stored it",
        );
        const events = await eventsOf(t(), key, contract.id);
        assert.equal(events.length, 1);
        const line = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
        assert.equal(line.quantity, 2);
        assert.equal(line.amount, 40);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });

      it("stores and bills an event once when concurrent copies of it differ in body", async () => {
        const { key, contract } = await companyWithContract(t());
        const event = usageEvent(contract.id, { quantity: 1 });
        const results = await submitInParallel(
          t(),
          key,
          Array.from({ length: 20 }, (_, i) => [{ ...event, quantity: i + 1 }]),
        );
        assert.equal(results.filter((r) => r.events[0]!.duplicate === false).length, 1);
        const events = await eventsOf(t(), key, contract.id);
        assert.equal(events.length, 1);
        const invoice = await invoiceFor(t(), key, contract.id);
        assert.equal(invoice.total, events[0]!.rated_amount);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });

      it("loses no charge when 20 requests of 5 different events arrive at once", async () => {
        const { key, contract } = await companyWithContract(t());
        const batches = Array.from({ length: 20 }, () =>
          Array.from({ length: 5 }, () => usageEvent(contract.id, { quantity: 1 })),
        );
        const results = await submitInParallel(t(), key, batches);
        for (const result of results) assert.equal(result.accepted, 5);
        const events = await eventsOf(t(), key, contract.id);
        assert.equal(events.length, 100);
        const line = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
        assert.equal(line.quantity, 100);
        assert.equal(line.amount, 2000);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });

      it("charges exactly the monthly cap in all when 20 requests of 5 events cross it at once", async () => {
        const { key, contract } = await companyWithContract(t());
        await addRule(t(), key, contract.id, { id: "api", metric: "api_call", amount: "0.70", monthly_cap: "37.50" });
        const batches = Array.from({ length: 20 }, () =>
          Array.from({ length: 5 }, () => usageEvent(contract.id, { metric: "api_call", quantity: 1 })),
        );
        const results = await submitInParallel(t(), key, batches);
        for (const result of results) assert.equal(result.accepted, 5);
        const events = await eventsOf(t(), key, contract.id);
        assert.equal(events.length, 100);
        assertDecimal(sum(events.map((e) => e.rated_amount)), "37.50", "the rated amounts add up to the cap");
        assert.equal(
          events.filter((e) => e.rated_amount > 0 && e.rated_amount < 0.7).length,
          1,
          "one event got the remainder",
        );
        const invoice = await invoiceFor(t(), key, contract.id);
        assertDecimal(sum(invoice.line_items.filter((l) => l.rule_id === "api").map((l) => l.amount)), "37.50");
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });

      it("stores each of overlapping event ids once when concurrent batches share some of them", async () => {
        const { key, contract } = await companyWithContract(t());
        const pool = Array.from({ length: 12 }, () => usageEvent(contract.id, { quantity: 1 }));
        // Batch i sends events i..i+4 of the pool (wrapping), so every event comes in 5 requests.
        const batches = Array.from({ length: 12 }, (_, i) =>
          Array.from({ length: 5 }, (_, j) => pool[(i + j) % pool.length]!),
        );
        const results = await submitInParallel(t(), key, batches);
        for (const result of results) assert.equal(result.accepted, 5);
        const firstCopies = results.flatMap((r) => r.events).filter((e) => e.duplicate === false);
        assert.deepEqual(
          firstCopies.map((e) => e.event_id).sort(),
          pool.map((e) => e.event_id as string).sort(),
          "each id stored by exactly one request",
        );
        const events = await eventsOf(t(), key, contract.id);
        assert.equal(events.length, 12);
        const line = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
        assert.equal(line.quantity, 12);
        assert.equal(line.amount, 240);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });

      it("completes concurrent batches that touch the same invoices in opposite orders", async () => {
        const { key, contract } = await companyWithContract(t());
        const other = await anotherContract(t(), key);
        // April, so that April's events are not refused as timestamp_in_future.
        t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
        const batches = Array.from({ length: 16 }, (_, i) => {
          const pair = [
            usageEvent(contract.id, { quantity: 1 }),
            usageEvent(other.id, { quantity: 1 }),
            usageEvent(contract.id, { quantity: 1, timestamp: APRIL }),
          ];
          return i % 2 === 0 ? pair : pair.reverse();
        });
        const results = await submitInParallel(t(), key, batches);
        for (const result of results) assert.equal(result.accepted, 3);
        for (const id of [contract.id, other.id]) {
          await assertInvoicesMatchEvents(t(), key, id);
        }
        assert.equal(lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire").quantity, 16);
        assert.equal(lineNamed(await invoiceFor(t(), key, contract.id, "2026-04-01"), "Domestic wire").quantity, 16);
        assert.equal(lineNamed(await invoiceFor(t(), key, other.id), "Domestic wire").quantity, 16);
      });

      it("creates one draft invoice per contract and month however many first events race for it", async () => {
        const { key, contract } = await companyWithContract(t());
        // April, so that April's events are not refused as timestamp_in_future.
        t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
        await submitInParallel(
          t(),
          key,
          Array.from({ length: 20 }, () => [usageEvent(contract.id), usageEvent(contract.id, { timestamp: APRIL })]),
        );
        const res = await t().call({ method: "GET", url: `/v1/billing/invoices?contract=${contract.id}`, key });
        const periods = res
          .json()
          .data.map((i: { billing_period: { start: string } }) => i.billing_period.start)
          .sort();
        assert.deepEqual(periods, ["2026-03-01", "2026-04-01"]);
      });

      it("keeps lines, cap and minimum right when capped, uncapped and fee batches hit one projected invoice at once", async () => {
        const { key, contract } = await companyWithContract(t());
        await addRule(t(), key, contract.id, { id: "api", metric: "api_call", amount: "0.25", monthly_cap: "12.00" });
        await addRule(t(), key, contract.id, { metric: "usd_transaction_volume_processed", rate: 0 });
        await project(t(), key, contract.id);
        const batches = Array.from({ length: 24 }, (_, i) => {
          if (i % 3 === 0)
            return Array.from({ length: 5 }, () => usageEvent(contract.id, { metric: "api_call", quantity: 3 }));
          if (i % 3 === 1) return Array.from({ length: 5 }, () => usageEvent(contract.id, { quantity: 1 }));
          return [
            usageEvent(contract.id, { metric: "usd_transaction_volume_processed", quantity: 10, fee_amount: "0.125" }),
            usageEvent(contract.id, { metric: "api_call", quantity: 1 }),
            usageEvent(contract.id, { metric: "international_wire", quantity: 1 }),
          ];
        });
        const results = await submitInParallel(t(), key, batches);
        for (const [i, result] of results.entries()) assert.equal(result.rejected, 0, `batch ${i}`);
        const events = await eventsOf(t(), key, contract.id);
        assert.equal(events.length, 8 * 5 + 8 * 5 + 8 * 3);
        assertDecimal(
          sum(events.filter((e) => e.rule_id === "api").map((e) => e.rated_amount)),
          "12.00",
          "the cap holds",
        );
        const invoice = await invoiceFor(t(), key, contract.id);
        assert.equal(lineNamed(invoice, "Domestic wire").amount, 800);
        assert.equal(lineNamed(invoice, "International wire").amount, 240);
        assert.equal(lineNamed(invoice, "usd_transaction_volume_processed fees").amount, 1);
        assert.equal(
          invoice.line_items.filter((l) => l.kind === "minimum").length,
          0,
          "usage of 1053 passes the minimum",
        );
        assert.equal(invoice.total, 1053);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });

      it("keeps the minimum true-up right when projections and usage interleave", async () => {
        const { key, contract } = await companyWithContract(t());
        const batches = Array.from({ length: 10 }, () => [usageEvent(contract.id, { quantity: 2 })]); // 40 each, 400 in all
        await Promise.all([
          submitInParallel(t(), key, batches),
          ...Array.from({ length: 5 }, () => project(t(), key, contract.id)),
        ]);
        await project(t(), key, contract.id);
        const invoice = await invoiceFor(t(), key, contract.id);
        assert.equal(lineNamed(invoice, "Domestic wire").amount, 400);
        assert.equal(lineNamed(invoice, minimumWords("1,000.00", "400.00")).amount, 600);
        assert.equal(invoice.total, 1000);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      });
    },
    { env },
  );

describeEachEngine("invoice numbering under concurrency", (t) => {
  it("numbers drafts without gaps when ten first projections of one month race", async () => {
    const { key, contract } = await companyWithContract(t());
    const projections = await Promise.all(
      Array.from({ length: 10 }, () =>
        t().call({
          method: "POST",
          url: "/v1/billing/invoices/project",
          key,
          payload: {
            external_contract_id: contract.id,
            billing_period_start: "2026-03-01",
            billing_period_end: "2026-03-31",
          },
        }),
      ),
    );
    for (const res of projections) expectStatus(res, 200);
    assert.deepEqual(new Set(projections.map((res) => res.json().number)), new Set(["INV-000001"]));
    assert.equal(projections.filter((res) => res.json().is_new).length, 1);
    const april = await project(t(), key, contract.id, "2026-04-01", "2026-04-30");
    assert.equal(april.number, "INV-000002");
  });
});
