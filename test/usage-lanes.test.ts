import assert from "node:assert/strict";
import { it } from "node:test";
import { createApp } from "../src/app.js";
import { laneOf } from "../src/domain/usage/batch-writer.js";
import { describeEachEngine, testConfig, type TestApp } from "./harness.js";
import {
  USAGE,
  anotherContract,
  assertInvoicesMatchEvents,
  companyWithContract,
  eventsOf,
  expectStatus,
  getEvent,
  getPricing,
  invoiceFor,
  lineNamed,
  submit,
  updateRule,
  usageEvent,
  type Contract,
  type SubmitResult,
} from "./billing-helpers.js";

/**
 * A company's usage is written in lanes (BILLING_INGEST_LANES, default 2): its contracts are spread over them
 * by a hash of their id, and a batch that spans lanes is written by one call per lane.
 */
const LANES = 2;

/** A company with a contract in each lane (contract ids are random: new ones until both lanes have one). */
async function contractsInBothLanes(t: TestApp): Promise<{ key: string; byLane: [Contract, Contract] }> {
  const { key, contract } = await companyWithContract(t);
  const byLane: (Contract | undefined)[] = [undefined, undefined];
  byLane[laneOf(contract.id, LANES)] = contract;
  for (let guard = 0; guard < 40 && (!byLane[0] || !byLane[1]); guard++) {
    const next = await anotherContract(t, key);
    byLane[laneOf(next.id, LANES)] ??= next;
  }
  assert.ok(byLane[0] && byLane[1], "contracts in both lanes");
  return { key, byLane: byLane as [Contract, Contract] };
}

describeEachEngine("usage written in lanes", (t) => {
  it("stores a batch spread over both lanes whole: every event on its draft invoice, and a resend changes nothing", async () => {
    const { key, byLane } = await contractsInBothLanes(t());
    const events = Array.from({ length: 40 }, (_, i) => usageEvent(byLane[i % 2]!.id, { quantity: (i % 3) + 1 }));
    const first = await submit(t(), key, events);
    assert.equal(first.accepted, 40);
    assert.ok(first.events.every((e) => e.duplicate === false), "every event is new");
    const again = await submit(t(), key, events);
    assert.equal(again.accepted, 40);
    assert.ok(again.events.every((e) => e.duplicate === true), "a resend bills nothing");
    for (const contract of byLane) {
      assert.equal((await eventsOf(t(), key, contract.id)).length, 20);
      const quantity = events.filter((e) => e.external_contract_id === contract.id).reduce((n, e) => n + (e.quantity as number), 0);
      const line = lineNamed(await invoiceFor(t(), key, contract.id), "domestic_wire usage");
      assert.equal(line.quantity, quantity);
      assert.equal(line.amount, quantity * 20);
      await assertInvoicesMatchEvents(t(), key, contract.id);
    }
  });

  it("loses and doubles nothing when 16 batches spanning both lanes and sharing ids arrive at once", async () => {
    const { key, byLane } = await contractsInBothLanes(t());
    const pool = Array.from({ length: 24 }, (_, i) => usageEvent(byLane[i % 2]!.id, { quantity: 1 }));
    // Batch i sends events i..i+5 of the pool (wrapping): every event comes in 6 requests, from both lanes.
    const batches = Array.from({ length: 16 }, (_, i) => Array.from({ length: 6 }, (_, j) => pool[(i * 3 + j) % pool.length]!));
    const results = await Promise.all(
      batches.map(async (events) => {
        const res = await t().call({ method: "POST", url: USAGE, key, payload: { events } });
        expectStatus(res, 200);
        return res.json() as SubmitResult;
      }),
    );
    for (const result of results) assert.equal(result.accepted, 6);
    const firstCopies = results.flatMap((r) => r.events).filter((e) => e.duplicate === false).map((e) => e.event_id);
    const sent = [...new Set(batches.flat().map((e) => e.event_id as string))];
    assert.deepEqual(firstCopies.sort(), sent.sort(), "each id sent is stored by exactly one request");
    for (const contract of byLane) {
      const stored = (await eventsOf(t(), key, contract.id)).length;
      assert.equal(stored, sent.filter((id) => pool.find((e) => e.event_id === id)!.external_contract_id === contract.id).length);
      assert.equal(lineNamed(await invoiceFor(t(), key, contract.id), "domestic_wire usage").quantity, stored);
      await assertInvoicesMatchEvents(t(), key, contract.id);
    }
  });

  it("rates again only what a changed contract touched: the other lane's events of the batch are still reported new", async () => {
    const { key, byLane } = await contractsInBothLanes(t());
    // This process learns both contracts (its cache), then another process sharing the database raises the
    // first one's price: this process finds out only when its write is refused as stale.
    await submit(t(), key, byLane.map((c) => usageEvent(c.id)));
    const other = await createApp(testConfig(), { db: t().app.db, clock: t().clock });
    try {
      const otherT: TestApp = { ...t(), app: other, call: (options) => other.http.inject({ ...options, headers: { authorization: `Bearer ${key}` } }) };
      const domestic = (await getPricing(otherT, key, byLane[0].id)).rules.find((r) => r.metric === "domestic_wire")!;
      await updateRule(otherT, key, byLane[0].id, domestic.id, { amount: "25.00" });
    } finally {
      await other.close();
    }
    const changed = usageEvent(byLane[0].id);
    const unchanged = usageEvent(byLane[1].id);
    const result = await submit(t(), key, [changed, unchanged]);
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
  });
});
