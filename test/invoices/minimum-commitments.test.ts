/**
 * Monthly minimums that count the right charges (docs/api.md, "Monthly minimums and pass-through charges"): by
 * default the month's usage, pre-calculated fees and subscriptions, never a prepaid credit purchase nor a
 * pass-through rule's charges; a minimum rule may name what it counts; the true-up line states the commitment
 * and what counted. Credits pay pre-calculated fees, but not a pass-through rule's.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  addRule,
  assertInvoicesMatchEvents,
  companyWithContract,
  CONTRACTS,
  invoiceFor,
  minimumWords,
  project,
  submitAccepted,
  usageEvent,
  verifyProblems,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const MID_MARCH = new Date("2026-03-15T12:00:00.000Z");

/**
 * The sample contract (a 1,000.00 minimum, domestic wires at 20.00) with a `correspondent` rule (`fields`), an
 * 800.00 prepaid credit bought in March, one domestic wire and 100.00 sent pre-calculated under `correspondent`.
 */
async function monthWithPurchaseAndFee(t: TestApp, fields: Record<string, unknown>) {
  t.clock.set(MARCH_1);
  const { key, companyId, contract } = await companyWithContract(t);
  await addRule(t, key, contract.id, { metric: "correspondent", amount: "0", name: "Correspondent fees", ...fields });
  t.clock.set(MID_MARCH);
  const grant = await t.call({
    method: "POST",
    url: `${CONTRACTS}/${encodeURIComponent(contract.id)}/credits`,
    key,
    payload: { amount: "800", type: "prepaid" },
  });
  expectStatus(grant, 201);
  await submitAccepted(t, key, [
    usageEvent(contract.id, { metric: "domestic_wire", quantity: 1, timestamp: "2026-03-15T10:00:00.000Z" }),
    usageEvent(contract.id, {
      metric: "correspondent",
      quantity: 1,
      fee_amount: "100",
      timestamp: "2026-03-15T10:00:01.000Z",
    }),
  ]);
  await project(t, key, contract.id);
  return { key, companyId, contractId: contract.id, invoice: await invoiceFor(t, key, contract.id) };
}

const amounts = (invoice: { line_items: { kind: string; description: string; amount: number }[] }) =>
  invoice.line_items.map((l) => [l.kind, l.description, l.amount]);

describeEachEngine("monthly minimums and pass-through charges", (t) => {
  it("counts neither a prepaid purchase nor a pass-through fee: a 980.00 top-up of a 1,000.00 commitment", async () => {
    const { key, companyId, contractId, invoice } = await monthWithPurchaseAndFee(t(), { pass_through: true });
    assert.deepEqual(amounts(invoice), [
      ["one_time", "Prepaid credit", 800],
      ["usage", "Domestic wire", 20],
      ["fee", "Correspondent fees", 100],
      ["minimum", minimumWords("1,000.00", "20.00"), 980],
      // The credit pays the wire, not the fee collected for the correspondent bank.
      ["credit", "Prepaid credit", -20],
    ]);
    const fee = invoice.line_items.find((l) => l.kind === "fee")!;
    assert.equal(fee.pass_through, true);
    const minimum = invoice.line_items.find((l) => l.kind === "minimum")!;
    assert.deepEqual(minimum.minimum, { commitment: 1000, counted: 20, top_up: 980 });
    assert.equal(invoice.total, 1880);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("counts a pre-calculated fee of an ordinary rule, as the company's own charge, and credit pays it", async () => {
    const { key, companyId, contractId, invoice } = await monthWithPurchaseAndFee(t(), {});
    assert.deepEqual(amounts(invoice), [
      ["one_time", "Prepaid credit", 800],
      ["usage", "Domestic wire", 20],
      ["fee", "correspondent fees", 100],
      ["minimum", minimumWords("1,000.00", "120.00"), 880],
      ["credit", "Prepaid credit", -120],
    ]);
    assert.equal(invoice.line_items.find((l) => l.kind === "fee")!.pass_through, undefined);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("counts what a minimum rule names: a pass-through rule it names, and only its metrics", async () => {
    t().clock.set(MARCH_1);
    const { key, contract } = await companyWithContract(t());
    const pricing = await t().call({
      method: "GET",
      url: `${CONTRACTS}/${encodeURIComponent(contract.id)}/pricing`,
      key,
    });
    const sampleMinimum = pricing.json().rules.find((r: { type: string }) => r.type === "minimum");
    const res = await t().call({
      method: "PUT",
      url: `${CONTRACTS}/${encodeURIComponent(contract.id)}/pricing-rules/${sampleMinimum.id}`,
      key,
      payload: { counts: { metrics: ["international_wire", "network"], rule_ids: ["network", sampleMinimum.id] } },
    });
    expectStatus(res, 200);
    assert.deepEqual(res.json().rule.counts, {
      metrics: ["international_wire", "network"],
      rule_ids: ["network", sampleMinimum.id],
    });
    // Only rules named count: the network rule (a pass-through named) does; the wires do not (not named).
    await addRule(t(), key, contract.id, { id: "network", metric: "network", amount: "5", pass_through: true });
    t().clock.set(MID_MARCH);
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { metric: "network", quantity: 2, timestamp: "2026-03-15T10:00:00.000Z" }),
      usageEvent(contract.id, { metric: "international_wire", quantity: 1, timestamp: "2026-03-15T10:00:00.000Z" }),
    ]);
    await project(t(), key, contract.id);
    const invoice = await invoiceFor(t(), key, contract.id);
    assert.deepEqual(amounts(invoice), [
      ["usage", "International wire", 30],
      ["usage", "network usage (passed through)", 10],
      ["minimum", minimumWords("1,000.00", "10.00"), 990],
    ]);
  });

  it("refuses pass_through on a rule that is not usage, counts on a rule that is not a minimum, unknown kinds", async () => {
    t().clock.set(MARCH_1);
    const { key, contract } = await companyWithContract(t());
    const add = (payload: object) =>
      t().call({ method: "POST", url: `${CONTRACTS}/${encodeURIComponent(contract.id)}/pricing-rules`, key, payload });
    expectError(await add({ type: "subscription", amount: "10", pass_through: true }), 400, "invalid_pricing_rule");
    expectError(await add({ metric: "x", amount: "1", counts: { kinds: ["usage"] } }), 400, "invalid_pricing_rule");
    expectError(await add({ type: "minimum", amount: "10", counts: { kinds: ["credit"] } }), 400, "invalid_request");
    expectError(await add({ type: "minimum", amount: "10", counts: { kinds: [] } }), 400, "invalid_request");
    expectError(await add({ type: "minimum", amount: "10", counts: { colour: "red" } }), 400, "invalid_request");
    const stored = await add({ type: "minimum", amount: "10", counts: { kinds: ["one_time", "usage"] } });
    expectStatus(stored, 201);
    assert.deepEqual(stored.json().rule.counts, { kinds: ["usage", "one_time"] });
  });
});
