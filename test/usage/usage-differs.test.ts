import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { createApp } from "../../src/app.js";
import type { Database } from "../../src/db/database.js";
import { describeEachEngine, testConfig, type TestApp } from "../support/harness.js";
import {
  MARCH,
  USAGE,
  addRule,
  anotherContract,
  assertInvoicesMatchEvents,
  companyWithContract,
  contractsInBothLanes,
  eventsOf,
  getEvent,
  getPricing,
  invoiceFor,
  invoicesOf,
  lineNamed,
  setContractStatus,
  submit,
  submitAccepted,
  updateRule,
  usageEvent,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";

/**
 * A duplicate (an event_id stored already, or earlier in the batch) answers `accepted` and changes nothing,
 * as always; when its copy differs from the stored event it also says `differs: true`.
 */

const LANES = 2;

type Answer = { event_id: string | null; status: string; duplicate?: boolean; differs?: boolean };

/** The answers of one request, as [duplicate, differs] pairs (`differs` undefined when absent). */
async function flags(
  t: TestApp,
  key: string,
  events: unknown[],
): Promise<[boolean | undefined, boolean | undefined][]> {
  const result = await submit(t, key, events);
  return (result.events as Answer[]).map((e) => {
    assert.equal(e.status, "accepted", JSON.stringify(e));
    return [e.duplicate, e.differs];
  });
}

/** What a duplicate must leave alone: the stored event, the contract's events and its March invoice (lines, totals). */
async function billingOf(t: TestApp, key: string, contractId: string, eventId: string) {
  return {
    event: await getEvent(t, key, eventId),
    events: (await eventsOf(t, key, contractId)).map((e) => e.id).sort(),
    invoice: await invoiceFor(t, key, contractId),
  };
}

/** A counter of /metrics (0 when absent). */
async function counted(t: TestApp, name: string): Promise<number> {
  const res = await t.call({ method: "GET", url: "/metrics" });
  expectStatus(res, 200);
  const match = new RegExp(`^${name} (\\d+)$`, "m").exec(res.body);
  return match ? Number(match[1]) : 0;
}

describeEachEngine(
  "usage duplicates whose body differs",
  (t) => {
    it("answers an identical retry exactly as before, without differs, and a changed one with differs: true", async () => {
      const { key, contract } = await companyWithContract(t());
      const event = usageEvent(contract.id, { quantity: 2 });
      await submitAccepted(t(), key, [event]);
      const before = await billingOf(t(), key, contract.id, event.event_id as string);

      const res = await t().call({ method: "POST", url: USAGE, key, payload: { events: [event] } });
      expectStatus(res, 200);
      assert.equal(
        res.body,
        JSON.stringify({
          accepted: 1,
          rejected: 0,
          events: [{ event_id: event.event_id, status: "accepted", duplicate: true }],
        }),
      );

      const changed = await submit(t(), key, [{ ...event, quantity: 3 }]);
      assert.deepEqual(changed, {
        accepted: 1,
        rejected: 0,
        events: [{ event_id: event.event_id, status: "accepted", duplicate: true, differs: true }],
      });
      assert.deepEqual(await billingOf(t(), key, contract.id, event.event_id as string), before);
    });

    it("says differs when any one field changes, and changes neither the stored event nor its invoice", async () => {
      const { key, contract } = await companyWithContract(t());
      const other = await anotherContract(t(), key);
      // Every optional field set, at a rate of its own (the rule's is 20); one without any; a fee event.
      const full = usageEvent(contract.id, {
        quantity: 2,
        applied_rate: 15,
        counterparty: "acme",
        counterparty_side: "buy",
        pair: "EUR/USD",
      });
      const plain = usageEvent(contract.id, { quantity: 2 });
      const fee = usageEvent(contract.id, { quantity: 1, fee_amount: 5 });
      const without = (event: Record<string, unknown>, field: string) =>
        Object.fromEntries(Object.entries(event).filter(([k]) => k !== field));
      const variants: [string, Record<string, unknown>, Record<string, unknown>][] = [
        ["contract", full, { external_contract_id: other.id }],
        ["metric", full, { metric: "international_wire" }],
        ["quantity", full, { quantity: 3 }],
        ["quantity by a millionth", full, { quantity: "2.000001" }],
        ["fee_amount added", full, { fee_amount: 30 }],
        ["applied_rate", full, { applied_rate: 16 }],
        ["applied_rate dropped (the rule's 20 instead of 15)", full, { applied_rate: undefined }],
        ["timestamp", full, { timestamp: "2026-03-20T10:00:01.000Z" }],
        ["timestamp by a microsecond", full, { timestamp: "2026-03-20T10:00:00.000001Z" }],
        ["counterparty", full, { counterparty: "globex" }],
        ["counterparty dropped", full, { counterparty: undefined }],
        ["counterparty_side", full, { counterparty_side: "sell" }],
        ["pair", full, { pair: "GBP/USD" }],
        ["pair dropped", full, { pair: undefined }],
        ["applied_rate added", plain, { applied_rate: 21 }],
        ["counterparty added", plain, { counterparty: "acme" }],
        ["fee_amount", fee, { fee_amount: 6 }],
        ["fee_amount dropped", fee, { fee_amount: undefined }],
      ];
      // One stored event per variant, so that a batch can carry every variant at once.
      const stored = variants.map(([, base], i) => ({ ...base, event_id: `${base.event_id}-${i}` }));
      const copies = variants.map(([, , change], i) => {
        let copy: Record<string, unknown> = { ...stored[i]!, ...change };
        for (const [field, value] of Object.entries(change)) if (value === undefined) copy = without(copy, field);
        return copy;
      });
      await submitAccepted(t(), key, stored);
      const before = await Promise.all(stored.map((e) => billingOf(t(), key, contract.id, e.event_id as string)));
      const all = variants.map(() => [true, true]);
      // Alone; as a replayed batch (judged by the ingest function); behind a new event (judged by the service).
      for (const [i, copy] of copies.entries())
        assert.deepEqual(await flags(t(), key, [copy]), [[true, true]], variants[i]![0]);
      assert.deepEqual(await flags(t(), key, copies), all);
      assert.deepEqual((await flags(t(), key, [usageEvent(contract.id), ...copies])).slice(1), all);
      const after = await Promise.all(stored.map((e) => billingOf(t(), key, contract.id, e.event_id as string)));
      for (const [i, state] of after.entries())
        assert.deepEqual(state.event, before[i]!.event, `${variants[i]![0]}: the stored event is unchanged`);
      // The invoice gained the one new event (at the rule's 20) and nothing else. (Its `projected` month, which
      // follows the lines, is left out: the lines are what this compares.)
      const { projected: _projectedBefore, ...invoice } = before[0]!.invoice;
      const { projected: _projectedAfter, ...invoiceAfter } = after[0]!.invoice;
      assert.deepEqual(invoiceAfter, {
        ...invoice,
        subtotal: invoice.subtotal + 20,
        total: invoice.total + 20,
        line_items: invoice.line_items.map((l) =>
          l.description === "Domestic wire" && l.unit_price === 20
            ? {
                ...l,
                quantity: l.quantity + 1,
                amount: l.amount + 20,
                ...(l.event_count === undefined ? {} : { event_count: l.event_count + 1 }),
              }
            : l,
        ),
      });
      assert.deepEqual(await eventsOf(t(), key, other.id), []);
      assert.deepEqual(await invoicesOf(t(), key, other.id), [], "no draft for the other contract");
      await assertInvoicesMatchEvents(t(), key, contract.id);
    });

    it("compares decimals by value and timestamps as instants: equal copies do not differ", async () => {
      const { key, contract } = await companyWithContract(t());
      const rated = usageEvent(contract.id, { quantity: 1.1, applied_rate: "15.5", timestamp: "2026-03-20T10:00:00Z" });
      const fee = usageEvent(contract.id, { quantity: "2", fee_amount: 5.5 });
      const plain = usageEvent(contract.id, { quantity: 2 });
      const cases: [Record<string, unknown>, Record<string, unknown>, boolean | undefined][] = [
        [rated, { quantity: "1.10", applied_rate: 15.5 }, undefined],
        [rated, { timestamp: "2026-03-20T11:00:00+01:00" }, undefined],
        [rated, { timestamp: "2026-03-20T05:30:00.000000-04:30" }, undefined],
        [fee, { quantity: "2.000", fee_amount: "5.50" }, undefined],
        // The rule's own rate named outright is the rate the stored event was billed at.
        [plain, { applied_rate: "20.00" }, undefined],
        // ... and a copy that does differ, beside them.
        [plain, { quantity: 2.5 }, true],
      ];
      const stored = cases.map(([base], i) => ({ ...base, event_id: `${base.event_id}-${i}` }));
      await submitAccepted(t(), key, stored);
      const before = await billingOf(t(), key, contract.id, stored[0]!.event_id as string);
      const copies = cases.map(([, change], i) => ({ ...stored[i]!, ...change }));
      const expected = cases.map(([, , differs]) => [true, differs]);
      assert.deepEqual(await flags(t(), key, copies), expected, "a replayed batch");
      assert.deepEqual(
        (await flags(t(), key, [usageEvent(contract.id), ...copies])).slice(1),
        expected,
        "behind a new event",
      );
      const after = await billingOf(t(), key, contract.id, stored[0]!.event_id as string);
      assert.deepEqual(after.event, before.event);
    });

    it("compares with the rate the stored event was billed at when the rule's price changed since", async () => {
      const { key, contract } = await companyWithContract(t());
      const plain = usageEvent(contract.id, { quantity: 2 });
      const own = usageEvent(contract.id, { quantity: 2, applied_rate: 15 });
      await submitAccepted(t(), key, [plain, own]);
      const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
      await updateRule(t(), key, contract.id, domestic.id, { amount: "25.00" });
      const before = await billingOf(t(), key, contract.id, plain.event_id as string);
      // Retries of both are the same events; the own-rate event without its rate is not (15 against 20 then).
      assert.deepEqual(
        await flags(t(), key, [
          plain,
          own,
          Object.fromEntries(Object.entries(own).filter(([k]) => k !== "applied_rate")),
        ]),
        [
          [true, undefined],
          [true, undefined],
          [true, true],
        ],
      );
      assert.deepEqual(await billingOf(t(), key, contract.id, plain.event_id as string), before);
    });

    it("says differs on a stored id whose copy would be refused, and not on a refused copy that is the stored event", async () => {
      const { key, companyId, contract } = await companyWithContract(t());
      const event = usageEvent(contract.id, { quantity: 2 });
      const ended = usageEvent(contract.id, { quantity: 4 });
      await submitAccepted(t(), key, [event, ended]);
      const before = await billingOf(t(), key, contract.id, event.event_id as string);
      assert.deepEqual(
        await flags(t(), key, [
          { ...event, external_contract_id: "no-such-contract" }, // contract_not_found
          { ...event, metric: "card_swipe" }, // unknown_metric
          { ...event, timestamp: "2025-12-31T10:00:00Z" }, // outside_contract_term
          { ...event, quantity: "two" }, // invalid_event: not the stored event either
        ]),
        [
          [true, true],
          [true, true],
          [true, true],
          [true, true],
        ],
      );
      // Once the contract has ended, a retry is refused as a copy (contract_not_active) but is the stored event.
      await setContractStatus(t(), companyId, contract.id, "terminated");
      assert.deepEqual(await flags(t(), key, [ended, { ...ended, quantity: 5 }]), [
        [true, undefined],
        [true, true],
      ]);
      await setContractStatus(t(), companyId, contract.id, "active");
      assert.deepEqual(await billingOf(t(), key, contract.id, event.event_id as string), before);
    });

    it("compares a later copy in the same batch with the copy that was taken", async () => {
      const { key, contract } = await companyWithContract(t());
      const event = usageEvent(contract.id, { quantity: 3 });
      assert.deepEqual(await flags(t(), key, [event, { ...event }, { ...event, quantity: 50 }]), [
        [false, undefined],
        [true, undefined],
        [true, true],
      ]);
      // A refused copy before the taken one keeps its refusal; the taken copy is the second.
      const later = usageEvent(contract.id, { quantity: 1 });
      const result = await submit(t(), key, [
        { ...later, metric: "card_swipe" },
        later,
        { ...later, quantity: 1.0 },
        { ...later, quantity: 2 },
      ]);
      assert.deepEqual(
        (result.events as Answer[]).map((e) => [e.status, e.duplicate, e.differs]),
        [
          ["rejected", undefined, undefined],
          ["accepted", false, undefined],
          ["accepted", true, undefined],
          ["accepted", true, true],
        ],
      );
      // The first copy of an id stored before is a duplicate of the stored event, and so are the later ones.
      assert.deepEqual(await flags(t(), key, [{ ...event, quantity: 4 }, event]), [
        [true, true],
        [true, undefined],
      ]);
      assert.equal((await getEvent(t(), key, event.event_id as string)).quantity, 3);
      assert.equal((await getEvent(t(), key, later.event_id as string)).quantity, 1);
      const line = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
      assert.equal(line.quantity, 4);
      assert.equal(line.amount, 80);
    });

    it("says differs on the locking path too (a batch that touches a capped rule)", async () => {
      const { key, contract } = await companyWithContract(t());
      await addRule(t(), key, contract.id, { id: "api", metric: "api_call", amount: "1.00", monthly_cap: "10.00" });
      const wire = usageEvent(contract.id, { quantity: 2 });
      const call = usageEvent(contract.id, { metric: "api_call", quantity: 4 });
      await submitAccepted(t(), key, [wire, call]);
      const wireBefore = await getEvent(t(), key, wire.event_id as string);
      const callBefore = await getEvent(t(), key, call.event_id as string);
      const wireLine = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
      const fresh = usageEvent(contract.id, { metric: "api_call", quantity: 3 });
      assert.deepEqual(await flags(t(), key, [fresh, { ...wire, quantity: 5 }, wire, { ...call, quantity: 9 }, call]), [
        [false, undefined],
        [true, true],
        [true, undefined],
        [true, true],
        [true, undefined],
      ]);
      assert.deepEqual(await getEvent(t(), key, wire.event_id as string), wireBefore);
      assert.deepEqual(await getEvent(t(), key, call.event_id as string), callBefore);
      const invoice = await invoiceFor(t(), key, contract.id);
      assert.deepEqual(lineNamed(invoice, "Domestic wire"), wireLine);
      assert.equal(
        (await getEvent(t(), key, fresh.event_id as string)).rated_amount,
        3,
        "only the new event was billed: 4 + 3 of the cap of 10",
      );
      await assertInvoicesMatchEvents(t(), key, contract.id);
    });

    it("compares with the request's own copy after a request over both lanes went again for a stale contract", async () => {
      const { key, byLane } = await contractsInBothLanes(t(), LANES);
      // Another process, whose cache learns both contracts; then this one raises the first one's price: the
      // other process's next write for that lane is refused as stale, after the second lane stored its event.
      const app = await createApp(testConfig({ BILLING_INGEST_LANES: String(LANES) }), {
        db: t().app.db,
        clock: t().clock,
      });
      const other: TestApp = {
        ...t(),
        app,
        call: (options) => app.http.inject({ ...options, headers: { authorization: `Bearer ${key}` } }),
      };
      try {
        await submitAccepted(
          other,
          key,
          byLane.map((c) => usageEvent(c.id)),
        );
        const domestic = (await getPricing(t(), key, byLane[0].id)).rules.find((r) => r.metric === "domestic_wire")!;
        await updateRule(t(), key, byLane[0].id, domestic.id, { amount: "25.00" });
        const changed = usageEvent(byLane[0].id);
        const unchanged = usageEvent(byLane[1].id, { event_id: `second-${randomUUID()}` });
        assert.deepEqual(
          await flags(other, key, [changed, unchanged, { ...unchanged, quantity: 7 }, { ...unchanged }]),
          [
            [false, undefined],
            [false, undefined],
            [true, true],
            [true, undefined],
          ],
        );
        assert.equal(
          (await getEvent(t(), key, changed.event_id as string)).rated_amount,
          25,
          "rated again at the new price",
        );
        assert.equal((await getEvent(t(), key, unchanged.event_id as string)).quantity, 1);
        for (const contract of byLane) await assertInvoicesMatchEvents(t(), key, contract.id);
      } finally {
        await app.close();
      }
    });

    it("judges a replayed batch within its write: an honest replay, and a changed one, take no query of their own", async () => {
      const { key, contract } = await companyWithContract(t());
      // Another process on the same database, whose queries are recorded.
      const base = t().app.db;
      const queries: string[] = [];
      const db: Database = {
        engine: base.engine,
        transaction: (work) => base.transaction(work),
        ping: () => base.ping(),
        close: async () => {},
        query: (sql, params) => {
          queries.push(sql);
          return base.query(sql, params);
        },
      };
      const app = await createApp(testConfig({ BILLING_INGEST_LANES: String(LANES) }), { db, clock: t().clock });
      const other: TestApp = {
        ...t(),
        app,
        call: (options) => app.http.inject({ ...options, headers: { authorization: `Bearer ${key}` } }),
      };
      const ofUsage = () => queries.filter((q) => /usage_events|billing_ingest_usage_lines/.test(q));
      try {
        const events = Array.from({ length: 10 }, (_, i) => usageEvent(contract.id, { quantity: i + 1 }));
        await submitAccepted(other, key, events);
        queries.length = 0;
        assert.deepEqual(
          await flags(other, key, events),
          events.map(() => [true, undefined]),
        );
        assert.equal(ofUsage().length, 1, `only the write: ${ofUsage().join("\n")}`);
        queries.length = 0;
        const changed = events.map((e, i) => (i === 4 ? { ...e, quantity: 99 } : e));
        assert.deepEqual(
          await flags(other, key, changed),
          events.map((_, i) => [true, i === 4 ? true : undefined]),
        );
        assert.equal(ofUsage().length, 1, `only the write: ${ofUsage().join("\n")}`);
      } finally {
        await app.close();
      }
    });

    it("counts duplicates, and those that differ, in /metrics", async () => {
      const { key, contract } = await companyWithContract(t());
      const event = usageEvent(contract.id, { quantity: 2 });
      await submitAccepted(t(), key, [event]);
      const duplicates = await counted(t(), "billing_usage_duplicates_total");
      const differing = await counted(t(), "billing_usage_duplicates_differing_total");
      await flags(t(), key, [event, { ...event, quantity: 3 }, { ...event, timestamp: MARCH.replace("Z", "+00:00") }]);
      assert.equal(await counted(t(), "billing_usage_duplicates_total"), duplicates + 3);
      assert.equal(await counted(t(), "billing_usage_duplicates_differing_total"), differing + 1);
    });
  },
  { env: { BILLING_INGEST_LANES: String(LANES) } },
);
