/**
 * Pricing changes with an effective_date (docs/api.md, "Scheduled changes"): events are priced by the version in
 * force on their day; a change dated into an open draft prices its events from that day again, in the change's
 * transaction, also while usage keeps coming; a change that reaches an issued period is refused.
 */
import assert from "node:assert/strict";
import { beforeEach, it } from "node:test";
import { Big } from "../../src/domain/kernel/money.js";
import {
  addRule,
  assertInvoicesMatchEvents,
  companyWithContract,
  CONTRACTS,
  eventsOf,
  getPricing,
  INVOICES,
  invoiceFor,
  project,
  submitAccepted,
  sum,
  USAGE,
  usageEvent,
  type UsageEvent,
  verifyProblems,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const MARCH_25 = new Date("2026-03-25T12:00:00.000Z");

const change = (t: TestApp, key: string, contractId: string, ruleId: string, payload: object) =>
  t.call({
    method: "PUT",
    url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing-rules/${encodeURIComponent(ruleId)}`,
    key,
    payload,
  });

const add = (t: TestApp, key: string, contractId: string, payload: object) =>
  t.call({ method: "POST", url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing-rules`, key, payload });

/** A contract made on March 1 with an api_calls rule at 1 a unit (its fields added), seen on March 25. */
async function contractFromMarch(t: TestApp, fields: Record<string, unknown> = {}) {
  t.clock.set(MARCH_1);
  const { key, companyId, contract } = await companyWithContract(t);
  const { rule } = await addRule(t, key, contract.id, { id: "calls", metric: "api_calls", amount: "1", ...fields });
  t.clock.set(MARCH_25);
  return { key, companyId, contractId: contract.id, ruleId: rule.id };
}

const callOn = (contractId: string, day: string, quantity: number, overrides: Record<string, unknown> = {}) =>
  usageEvent(contractId, { metric: "api_calls", quantity, timestamp: `${day}T10:00:00.000Z`, ...overrides });

const byId = (events: readonly UsageEvent[]) => new Map(events.map((e) => [e.id, e] as const));

describeEachEngine("scheduled pricing changes", (t) => {
  beforeEach(() => t().clock.set(MARCH_25));

  it("prices each event by the version in force on its day, and shows what is scheduled", async () => {
    const { key, contractId, ruleId } = await contractFromMarch(t());
    const scheduled = await change(t(), key, contractId, ruleId, { amount: "2", effective_date: "2026-04-01" });
    expectStatus(scheduled, 200);
    assert.equal(scheduled.json().effective_date, "2026-04-01");

    let pricing = await getPricing(t(), key, contractId);
    assert.equal(pricing.rules.find((r) => r.id === ruleId)!.amount, "1.00", "today: the old price");
    const upcoming = (pricing as unknown as { upcoming: { version: number; effective_date: string; rules: any[] }[] })
      .upcoming;
    assert.deepEqual(
      upcoming.map((u) => [u.version, u.effective_date, u.rules.find((r) => r.id === ruleId).amount]),
      [[scheduled.json().version, "2026-04-01", "2.00"]],
    );

    const march = callOn(contractId, "2026-03-26", 3);
    await submitAccepted(t(), key, [march]);
    t().clock.set(new Date("2026-04-02T09:00:00.000Z"));
    pricing = await getPricing(t(), key, contractId);
    assert.equal(pricing.rules.find((r) => r.id === ruleId)!.amount, "2.00", "from April 1: the new price");
    assert.deepEqual((pricing as unknown as { upcoming: unknown[] }).upcoming, []);
    const lateMarch = callOn(contractId, "2026-03-31", 3);
    const april = callOn(contractId, "2026-04-02", 3);
    await submitAccepted(t(), key, [lateMarch, april]);
    const events = byId(await eventsOf(t(), key, contractId));
    assertDecimal(events.get(march.event_id as string)!.rated_amount, 3);
    assertDecimal(events.get(lateMarch.event_id as string)!.rated_amount, 3, "March 31 is still the old price");
    assertDecimal(events.get(april.event_id as string)!.rated_amount, 6);
    assert.equal(events.get(april.event_id as string)!.pricing_version, scheduled.json().version);
    assert.notEqual(events.get(lateMarch.event_id as string)!.pricing_version, scheduled.json().version);
  });

  it("prices an open draft's events again from the change's day, leaving the days before as they were", async () => {
    const { key, companyId, contractId, ruleId } = await contractFromMarch(t(), { monthly_cap: "10" });
    const [early, mid, late] = [
      callOn(contractId, "2026-03-05", 3),
      callOn(contractId, "2026-03-20", 4),
      callOn(contractId, "2026-03-22", 5),
    ];
    await submitAccepted(t(), key, [early, mid, late]);
    const before = byId(await eventsOf(t(), key, contractId));
    assert.deepEqual(
      [early, mid, late].map((e) => before.get(e.event_id as string)!.rated_amount),
      [3, 4, 3],
    );

    const res = await change(t(), key, contractId, ruleId, { amount: "2", effective_date: "2026-03-20" });
    expectStatus(res, 200);
    const after = byId(await eventsOf(t(), key, contractId));
    assert.deepEqual(
      after.get(early.event_id as string),
      before.get(early.event_id as string),
      "before the day: untouched",
    );
    assert.deepEqual(
      [mid, late].map((e) => [
        after.get(e.event_id as string)!.rated_amount,
        after.get(e.event_id as string)!.pricing_version,
      ]),
      [
        [7, res.json().version],
        [0, res.json().version],
      ],
      "from the day: the new price, within what the cap has left",
    );
    const lines = (await invoiceFor(t(), key, contractId)).line_items.filter((l) => l.metric === "api_calls");
    assert.deepEqual(lines.map((l) => [l.quantity, l.unit_price, l.amount]).sort(), [
      [3, 1, 3],
      [9, 2, 7],
    ]);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("carries an undated change into the versions scheduled after it", async () => {
    const { key, contractId, ruleId } = await contractFromMarch(t());
    expectStatus(await change(t(), key, contractId, ruleId, { amount: "2", effective_date: "2026-04-01" }), 200);
    expectStatus(await add(t(), key, contractId, { id: "storage", metric: "storage_gb", amount: "0.5" }), 201);
    const pricing = (await getPricing(t(), key, contractId)) as unknown as {
      rules: { id: string; amount: string }[];
      upcoming: { rules: { id: string; amount: string }[] }[];
    };
    assert.deepEqual(
      pricing.rules.filter((r) => r.id === ruleId || r.id === "storage").map((r) => [r.id, r.amount]),
      [
        ["calls", "1.00"],
        ["storage", "0.50"],
      ],
    );
    assert.deepEqual(
      pricing.upcoming[0]!.rules.filter((r) => r.id === ruleId || r.id === "storage").map((r) => [r.id, r.amount]),
      [
        ["calls", "2.00"],
        ["storage", "0.50"],
      ],
      "April keeps its new price and gains the new rule",
    );
    expectError(await add(t(), key, contractId, { id: "storage", metric: "x", amount: "1" }), 409, "rule_exists");
  });

  it("bills a month with the version in force on its last day", async () => {
    const { key, contractId } = await contractFromMarch(t());
    expectStatus(
      await add(t(), key, contractId, {
        type: "subscription",
        name: "Platform",
        amount: "99",
        effective_date: "2026-04-01",
      }),
      201,
    );
    await project(t(), key, contractId);
    assert.ok(!(await invoiceFor(t(), key, contractId)).line_items.some((l) => l.kind === "subscription"));
    await project(t(), key, contractId, "2026-04-01", "2026-04-30");
    const april = await invoiceFor(t(), key, contractId, "2026-04-01");
    assert.deepEqual(
      april.line_items.filter((l) => l.kind === "subscription").map((l) => [l.description, l.amount]),
      [["Platform", 99]],
    );
  });

  it("refuses a change that reaches an issued period, and one that would leave events without a rule", async () => {
    const { key, contractId, ruleId } = await contractFromMarch(t());
    await submitAccepted(t(), key, [callOn(contractId, "2026-03-10", 2)]);
    const draft = await invoiceFor(t(), key, contractId);
    t().clock.set(new Date("2026-04-02T09:00:00.000Z"));
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/finalize`, key }), 200);
    await submitAccepted(t(), key, [callOn(contractId, "2026-04-01", 2)]);
    const pricing = await getPricing(t(), key, contractId);

    expectError(
      await change(t(), key, contractId, ruleId, { amount: "5", effective_date: "2026-03-31" }),
      409,
      "period_closed",
    );
    expectError(
      await change(t(), key, contractId, ruleId, { metric: "other_calls", effective_date: "2026-04-01" }),
      409,
      "usage_without_rule",
    );
    expectError(
      await change(t(), key, contractId, ruleId, { amount: "5", effective_date: "2025-04-01" }),
      400,
      "outside_contract_term",
    );
    expectError(await change(t(), key, contractId, ruleId, { amount: "5", effective_date: "April" }), 400);
    assert.deepEqual(await getPricing(t(), key, contractId), pricing, "nothing was written");
    expectStatus(await change(t(), key, contractId, ruleId, { amount: "5", effective_date: "2026-04-01" }), 200);
    const april = (await eventsOf(t(), key, contractId)).find((e) => e.timestamp.startsWith("2026-04"))!;
    assertDecimal(april.rated_amount, 10);
  });

  it("prices every event by its day's version when a dated change races usage (three rounds)", async () => {
    for (let round = 0; round < 3; round++) await raceOnce();
  });

  async function raceOnce() {
    t().clock.set(MARCH_25);
    const { key, companyId, contractId, ruleId } = await contractFromMarch(t());
    const first = Array.from({ length: 20 }, (_, i) =>
      callOn(contractId, `2026-03-${String(5 + i).padStart(2, "0")}`, 1 + (i % 4)),
    );
    await submitAccepted(t(), key, first);
    const racing = Array.from({ length: 16 }, (_, k) =>
      Array.from({ length: 5 }, (_, i) =>
        callOn(contractId, `2026-03-${String(5 + ((k + i * 3) % 20)).padStart(2, "0")}`, 1 + ((k + i) % 5)),
      ),
    );
    const answers = await Promise.all([
      ...racing.slice(0, 8).map((events) => t().call({ method: "POST", url: USAGE, key, payload: { events } })),
      change(t(), key, contractId, ruleId, { amount: "2", effective_date: "2026-03-15" }),
      ...racing.slice(8).map((events) => t().call({ method: "POST", url: USAGE, key, payload: { events } })),
    ]);
    for (const res of answers) expectStatus(res, 200);
    const events = await eventsOf(t(), key, contractId);
    assert.equal(events.length, 20 + 80);
    for (const e of events) {
      const price = e.timestamp.slice(0, 10) >= "2026-03-15" ? 2 : 1;
      assertDecimal(e.rated_amount, new Big(e.quantity).times(price), `${e.id} on ${e.timestamp}`);
    }
    const line = (await invoiceFor(t(), key, contractId)).line_items.filter((l) => l.metric === "api_calls");
    assertDecimal(sum(line.map((l) => l.amount)), sum(events.map((e) => e.rated_amount)));
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  }
});
