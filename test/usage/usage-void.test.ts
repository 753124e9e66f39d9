/**
 * Voiding a usage event of an open period (POST /v1/billing/usage/{event_id}/void): the event stays, voided; its
 * draft is priced again without it, so that its line and the events priced after it (a cap's room, a tier) come
 * out as if it had never been sent; an issued period is closed; replays, races and bad input.
 */
import assert from "node:assert/strict";
import { beforeEach, it } from "node:test";
import {
  addRule,
  assertInvoicesMatchEvents,
  companyWithContract,
  eventsOf,
  getEvent,
  INVOICES,
  invoiceFor,
  keyWithScopes,
  lineNamed,
  submit,
  submitAccepted,
  sum,
  USAGE,
  usageEvent,
  type UsageEvent,
  verifyProblems,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const voidEvent = (t: TestApp, key: string, eventId: string, payload?: object) =>
  t.call({
    method: "POST",
    url: `${USAGE}/${encodeURIComponent(eventId)}/void`,
    key,
    ...(payload === undefined ? {} : { payload }),
  });

async function contractWithRule(t: TestApp, rule: Record<string, unknown>) {
  const { key, companyId, contract } = await companyWithContract(t);
  await addRule(t, key, contract.id, { metric: "api_calls", ...rule });
  return { key, companyId, contractId: contract.id };
}

/** Sends one api_calls event per quantity, one request each (so that they are stored in this order); their ids. */
async function sendInOrder(t: TestApp, key: string, contractId: string, quantities: readonly number[]) {
  const ids: string[] = [];
  for (const quantity of quantities) {
    const event = usageEvent(contractId, { metric: "api_calls", quantity });
    await submitAccepted(t, key, [event]);
    ids.push(event.event_id as string);
  }
  return ids;
}

const byId = async (t: TestApp, key: string, contractId: string) =>
  new Map((await eventsOf(t, key, contractId)).map((e) => [e.id, e] as const));

/** The harness's clock: some tests move it to April to issue March. */
const MID_MARCH = new Date("2026-03-15T12:00:00.000Z");

describeEachEngine("voiding usage events", (t) => {
  beforeEach(() => t().clock.set(MID_MARCH));

  it("takes a flat event's charge off its line and keeps the event, voided, with when and why", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "0.25" });
    const [first, second] = await sendInOrder(t(), key, contractId, [4, 6]);
    const res = await voidEvent(t(), key, first!, { reason: "sent twice by the meter" });
    expectStatus(res, 200);
    const voided = res.json() as UsageEvent;
    assert.equal(voided.status, "voided");
    assert.equal(voided.void_reason, "sent twice by the meter");
    assert.equal(voided.voided_at, t().clock.now().toISOString());
    assertDecimal(voided.rated_amount, 1, "a voided event keeps the charge it had");
    assert.deepEqual(await getEvent(t(), key, first!), voided);

    const line = lineNamed(await invoiceFor(t(), key, contractId), "api_calls usage");
    assert.deepEqual([line.quantity, line.amount], [6, 1.5]);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
    const listed = await eventsOf(t(), key, contractId, "status=voided");
    assert.deepEqual(
      listed.map((e) => e.id),
      [first],
    );
    assert.equal((await getEvent(t(), key, second!)).status, "rated");
  });

  it("gives the events priced after it the cap room it took", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "1", monthly_cap: "10" });
    const [a, b, c] = await sendInOrder(t(), key, contractId, [6, 5, 3]);
    let events = await byId(t(), key, contractId);
    assert.deepEqual(
      [a, b, c].map((id) => events.get(id!)!.rated_amount),
      [6, 4, 0],
    );
    expectStatus(await voidEvent(t(), key, a!), 200);
    events = await byId(t(), key, contractId);
    assert.deepEqual(
      [b, c].map((id) => events.get(id!)!.rated_amount),
      [5, 3],
      "re-priced in the order they were stored, as if the voided event had never come",
    );
    assert.equal(events.get(a!)!.void_reason, undefined);
    const line = lineNamed(await invoiceFor(t(), key, contractId), "api_calls usage");
    assert.deepEqual([line.quantity, line.amount], [8, 8]);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("prices a graduated rule's later events on the quantity without it", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), {
      model: "graduated",
      tiers: [
        { up_to: 10, unit_amount: "1" },
        { up_to: null, unit_amount: "0.5" },
      ],
    });
    const [a, b] = await sendInOrder(t(), key, contractId, [8, 6]);
    expectStatus(await voidEvent(t(), key, a!), 200);
    const events = await byId(t(), key, contractId);
    assertDecimal(events.get(b!)!.rated_amount, 6, "all 6 units in the first tier now");
    const line = lineNamed(await invoiceFor(t(), key, contractId), "api_calls usage");
    assert.deepEqual([line.quantity, line.amount], [6, 6]);
    assert.deepEqual(
      line.tiers?.map((tier) => [tier.quantity, tier.amount]),
      [[6, 6]],
    );
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("keeps an event's own applied rate when its draft is priced again", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "1", monthly_cap: "100" });
    const named = usageEvent(contractId, { metric: "api_calls", quantity: 2, applied_rate: "3" });
    const plain = usageEvent(contractId, { metric: "api_calls", quantity: 2 });
    const [gone] = await sendInOrder(t(), key, contractId, [1]);
    await submitAccepted(t(), key, [named, plain]);
    expectStatus(await voidEvent(t(), key, gone!), 200);
    const events = await byId(t(), key, contractId);
    assertDecimal(events.get(named.event_id as string)!.rated_amount, 6);
    assertDecimal(events.get(named.event_id as string)!.applied_rate!, 3);
    assertDecimal(events.get(plain.event_id as string)!.rated_amount, 2);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("answers a second void with the event as it is, changing nothing", async () => {
    const { key, contractId } = await contractWithRule(t(), { amount: "1" });
    const [a] = await sendInOrder(t(), key, contractId, [2, 3]);
    const first = (await voidEvent(t(), key, a!, { reason: "wrong meter" })).json();
    const draft = await invoiceFor(t(), key, contractId);
    t().clock.advance(60_000);
    const again = await voidEvent(t(), key, a!, { reason: "another reason" });
    expectStatus(again, 200);
    assert.deepEqual(again.json(), first);
    assert.deepEqual(await invoiceFor(t(), key, contractId), draft);
  });

  it("takes a replay of a voided event's id as a duplicate: it stays voided and is not billed again", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "1" });
    const event = usageEvent(contractId, { metric: "api_calls", quantity: 5 });
    await submitAccepted(t(), key, [event]);
    expectStatus(await voidEvent(t(), key, event.event_id as string), 200);
    const replay = await submit(t(), key, [event]);
    assert.equal(replay.events[0]!.status, "accepted");
    assert.equal((await getEvent(t(), key, event.event_id as string)).status, "voided");
    const draft = await invoiceFor(t(), key, contractId);
    assert.equal(
      draft.line_items.some((l) => l.metric === "api_calls"),
      false,
    );
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("leaves the usage statement without the voided event", async () => {
    const { key, contractId } = await contractWithRule(t(), { amount: "1" });
    const [a, b] = await sendInOrder(t(), key, contractId, [2, 3]);
    expectStatus(await voidEvent(t(), key, a!), 200);
    const draft = await invoiceFor(t(), key, contractId);
    const csv = await t().call({ method: "GET", url: `${INVOICES}/${draft.number}/usage.csv`, key });
    expectStatus(csv, 200);
    assert.ok(csv.body.includes(b!));
    assert.ok(!csv.body.includes(a!), "the statement lists only what the invoice bills");
  });

  it("refuses an event on an issued invoice (period_closed) and changes nothing", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "1" });
    const [a] = await sendInOrder(t(), key, contractId, [2]);
    const draft = await invoiceFor(t(), key, contractId);
    t().clock.set(new Date("2026-04-02T09:00:00.000Z"));
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/finalize`, key }), 200);
    const before = await getEvent(t(), key, a!);
    expectError(await voidEvent(t(), key, a!), 409, "period_closed");
    assert.deepEqual(await getEvent(t(), key, a!), before);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("answers 404 for an unknown id and for another company's event, 400 for bad bodies, 403 without usage:write", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "1" });
    const [a] = await sendInOrder(t(), key, contractId, [2]);
    const other = await companyWithContract(t());
    expectError(await voidEvent(t(), other.key, a!), 404, "not_found");
    expectError(await voidEvent(t(), key, "no-such-event"), 404, "not_found");
    expectError(await voidEvent(t(), key, a!, { reason: "x".repeat(501) }), 400);
    expectError(await voidEvent(t(), key, a!, { reason: "ok", extra: 1 }), 400);
    expectError(await voidEvent(t(), key, a!, { reason: 12 }), 400);
    const readOnly = await keyWithScopes(t(), companyId, ["usage:read"]);
    expectError(await voidEvent(t(), readOnly, a!), 403);
    expectError(await voidEvent(t(), "bl_live_not-a-key", a!), 401);
    assert.equal((await getEvent(t(), key, a!)).status, "rated", "nothing was voided");
  });

  it("holds every line to its events when voids race new usage on the same draft", async () => {
    const { key, companyId, contractId } = await contractWithRule(t(), { amount: "1", monthly_cap: "20" });
    await addRule(t(), key, contractId, { metric: "calls_flat", amount: "0.5" });
    const first = await sendInOrder(t(), key, contractId, [3, 3, 3, 3, 3, 3]);
    const flat = Array.from({ length: 6 }, () => usageEvent(contractId, { metric: "calls_flat", quantity: 2 }));
    await submitAccepted(t(), key, flat);
    const more = Array.from({ length: 8 }, (_, i) =>
      usageEvent(contractId, { metric: i % 2 ? "calls_flat" : "api_calls", quantity: 4 }),
    );
    const answers = await Promise.all([
      ...first.slice(0, 4).map((id) => voidEvent(t(), key, id)),
      ...flat.slice(0, 3).map((e) => voidEvent(t(), key, e.event_id as string)),
      ...more.map((e) => t().call({ method: "POST", url: USAGE, key, payload: { events: [e] } })),
    ]);
    for (const res of answers) expectStatus(res, 200);
    const events = await eventsOf(t(), key, contractId);
    assert.equal(events.filter((e) => e.status === "voided").length, 7);
    const live = events.filter((e) => e.status !== "voided");
    const capped = live.filter((e) => e.metric === "api_calls");
    assertDecimal(sum(capped.map((e) => e.rated_amount)), 20, "the cap of 20 on 22 units left");
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });
});
