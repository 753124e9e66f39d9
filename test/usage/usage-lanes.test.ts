import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { createApp } from "../../src/app.js";
import type { Database } from "../../src/db/database.js";
import { describeEachEngine, testConfig, type TestApp } from "../support/harness.js";
import {
  assertInvoicesMatchEvents,
  contractsInBothLanes,
  eventsOf,
  getEvent,
  getPricing,
  invoiceFor,
  lineNamed,
  submit,
  submitInParallel,
  updateRule,
  usageEvent,
} from "../support/api.js";

/**
 * A company's usage is written in lanes (BILLING_INGEST_LANES, default 2): its contracts are spread over them
 * by a hash of their id, and a batch that spans lanes is written by one call per lane.
 */
const LANES = 2;

interface IngestCall {
  ids: string[];
  outcomes: string[];
}

/**
 * Another service process on the same database, whose calls of the ingest function are recorded; `after`
 * runs once a call has answered, before the process sees the answer (what another process might do then).
 */
async function watchedProcess(t: TestApp, key: string, after?: (call: IngestCall) => Promise<void>) {
  const base = t.app.db;
  const calls: IngestCall[] = [];
  const db: Database = {
    engine: base.engine,
    transaction: (work) => base.transaction(work),
    ping: () => base.ping(),
    close: async () => {},
    async query<Row>(sql: string, params?: readonly unknown[]) {
      const result = await base.query<Row>(sql, params);
      if (sql.includes("billing_ingest_usage_lines")) {
        const call = {
          ids: params![15] as string[],
          outcomes: (result.rows as { outcome: string }[]).map((r) => r.outcome),
        };
        calls.push(call);
        await after?.(call);
      }
      return result;
    },
  };
  const app = await createApp(testConfig({ BILLING_INGEST_LANES: String(LANES) }), { db, clock: t.clock });
  const process: TestApp = {
    ...t,
    app,
    call: (options) => app.http.inject({ ...options, headers: { authorization: `Bearer ${key}` } }),
  };
  return { process, calls, close: () => app.close() };
}

/** Another process raises the contract's domestic_wire price: a new pricing version. */
async function raisePrice(t: TestApp, key: string, contractId: string): Promise<void> {
  const domestic = (await getPricing(t, key, contractId)).rules.find((r) => r.metric === "domestic_wire")!;
  await updateRule(t, key, contractId, domestic.id, { amount: "25.00" });
}

describeEachEngine(
  "usage written in lanes",
  (t) => {
    it("stores a batch spread over both lanes whole: every event on its draft invoice, and a resend changes nothing", async () => {
      const { key, byLane } = await contractsInBothLanes(t(), LANES);
      const events = Array.from({ length: 40 }, (_, i) => usageEvent(byLane[i % 2]!.id, { quantity: (i % 3) + 1 }));
      const first = await submit(t(), key, events);
      assert.equal(first.accepted, 40);
      assert.ok(
        first.events.every((e) => e.duplicate === false),
        "every event is new",
      );
      const again = await submit(t(), key, events);
      assert.equal(again.accepted, 40);
      assert.ok(
        again.events.every((e) => e.duplicate === true),
        "a resend bills nothing",
      );
      for (const contract of byLane) {
        assert.equal((await eventsOf(t(), key, contract.id)).length, 20);
        const quantity = events
          .filter((e) => e.external_contract_id === contract.id)
          .reduce((n, e) => n + (e.quantity as number), 0);
        const line = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
        assert.equal(line.quantity, quantity);
        assert.equal(line.amount, quantity * 20);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      }
    });

    it("loses and doubles nothing when 16 batches spanning both lanes and sharing ids arrive at once", async () => {
      const { key, byLane } = await contractsInBothLanes(t(), LANES);
      const pool = Array.from({ length: 24 }, (_, i) => usageEvent(byLane[i % 2]!.id, { quantity: 1 }));
      // Batch i sends events i..i+5 of the pool (wrapping): every event comes in 6 requests, from both lanes.
      const batches = Array.from({ length: 16 }, (_, i) =>
        Array.from({ length: 6 }, (_, j) => pool[(i * 3 + j) % pool.length]!),
      );
      const results = await submitInParallel(t(), key, batches);
      for (const result of results) assert.equal(result.accepted, 6);
      const firstCopies = results
        .flatMap((r) => r.events)
        .filter((e) => e.duplicate === false)
        .map((e) => e.event_id);
      const sent = [...new Set(batches.flat().map((e) => e.event_id as string))];
      assert.deepEqual(firstCopies.sort(), sent.sort(), "each id sent is stored by exactly one request");
      for (const contract of byLane) {
        const stored = (await eventsOf(t(), key, contract.id)).length;
        assert.equal(
          stored,
          sent.filter((id) => pool.find((e) => e.event_id === id)!.external_contract_id === contract.id).length,
        );
        assert.equal(lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire").quantity, stored);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      }
    });

    it("stores each id once when concurrent batches send the same ids under contracts in different lanes", async () => {
      const { key, byLane } = await contractsInBothLanes(t(), LANES);
      const ids = Array.from({ length: 10 }, () => `shared-${randomUUID()}`);
      // Batch i sends every id, on the first lane's contract when i is even, else on the second's, in
      // opposite orders: the two lanes' calls race for the same ids.
      const batches = Array.from({ length: 12 }, (_, i) => {
        const events = ids.map((id) => usageEvent(byLane[i % 2]!.id, { event_id: id }));
        return i % 4 < 2 ? events : events.reverse();
      });
      const results = await submitInParallel(t(), key, batches);
      const firstCopies = results
        .flatMap((r) => r.events)
        .filter((e) => e.duplicate === false)
        .map((e) => e.event_id);
      assert.deepEqual(firstCopies.sort(), [...ids].sort(), "each id is new for exactly one request");
      let stored = 0;
      for (const contract of byLane) {
        const mine = await eventsOf(t(), key, contract.id);
        stored += mine.length;
        if (mine.length > 0)
          assert.equal(lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire").quantity, mine.length);
        await assertInvoicesMatchEvents(t(), key, contract.id);
      }
      assert.equal(stored, ids.length, "each id stored once, on one contract or the other");
    });

    it("rates again only what a changed contract touched: the other lane's events of the batch are still reported new", async () => {
      const { key, byLane } = await contractsInBothLanes(t(), LANES);
      const { process, calls, close } = await watchedProcess(t(), key);
      try {
        // The watched process learns both contracts (its cache); then another process raises the first one's
        // price, which the watched process finds out only when its write is refused as stale.
        await submit(
          process,
          key,
          byLane.map((c) => usageEvent(c.id)),
        );
        await raisePrice(t(), key, byLane[0].id);
        const changed = usageEvent(byLane[0].id);
        const unchanged = usageEvent(byLane[1].id);
        const result = await submit(process, key, [changed, unchanged]);
        const first = calls.find((c) => c.ids.includes(unchanged.event_id as string))!;
        assert.deepEqual(
          first.outcomes,
          ["stored"],
          "the second lane stored its event before the request was rated again",
        );
        assert.deepEqual(
          result.events.map((e) => [e.event_id, e.status, e.duplicate]),
          [
            [changed.event_id, "accepted", false],
            [unchanged.event_id, "accepted", false],
          ],
          "both events are this request's, neither a duplicate",
        );
        const stored = await getEvent(t(), key, changed.event_id as string);
        assert.equal(stored.rated_amount, 25, "rated at the new price");
        assert.equal(stored.pricing_version, 2);
        assert.equal((await getEvent(t(), key, unchanged.event_id as string)).rated_amount, 20);
        for (const contract of byLane) await assertInvoicesMatchEvents(t(), key, contract.id);
      } finally {
        await close();
      }
    });

    it("still reports an event the request stored as its own when its contract is ended before the request is rated again", async () => {
      const { key, companyId, byLane } = await contractsInBothLanes(t(), LANES);
      let endSecond = false;
      const { process, close } = await watchedProcess(t(), key, async (call) => {
        // Right after the second lane stored its event, another process ends that lane's contract.
        if (endSecond && call.outcomes.includes("stored") && call.ids.some((id) => id.startsWith("second-"))) {
          endSecond = false;
          const ended = await t().app.db.query(
            "UPDATE contracts SET status = 'terminated' WHERE company_id = $1 AND id = $2",
            [companyId, byLane[1].id],
          );
          assert.equal(ended.rowCount, 1);
        }
      });
      try {
        await submit(
          process,
          key,
          byLane.map((c) => usageEvent(c.id)),
        );
        await raisePrice(t(), key, byLane[0].id);
        endSecond = true;
        const a = usageEvent(byLane[0].id);
        const b = usageEvent(byLane[1].id, { event_id: `second-${randomUUID()}` });
        const result = await submit(process, key, [a, b]);
        assert.equal(endSecond, false, "the contract was ended between the attempts");
        assert.deepEqual(
          result.events.map((e) => [e.status, e.duplicate]),
          [
            ["accepted", false],
            ["accepted", false],
          ],
          "both events were stored by this request",
        );
        assert.equal((await getEvent(t(), key, a.event_id as string)).rated_amount, 25);
        assert.equal((await getEvent(t(), key, b.event_id as string)).rated_amount, 20);
      } finally {
        await close();
      }
    });
  },
  { env: { BILLING_INGEST_LANES: String(LANES) } },
);
