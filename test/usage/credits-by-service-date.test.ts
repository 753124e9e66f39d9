/**
 * Credits by service date (docs/api.md, "Credits"): a grant pays for the usage of the days it is valid on,
 * whatever the order the events and the grant arrived in. Creating a grant dated back burns the open drafts it
 * covers again, in its own transaction; an invoice that has left draft is left as it was, and the answer says so.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  addRule,
  assertInvoicesMatchEvents,
  companyWithContract,
  CONTRACTS,
  INVOICES,
  invoiceFor,
  submitAccepted,
  usageEvent,
  verifyProblems,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const APRIL_2 = new Date("2026-04-02T12:00:00.000Z");

/** A contract made on March 1 with api_calls at 1.00, 30 calls on March 15 and 5 on April 1, seen on April 2. */
async function marchAndApril(t: TestApp) {
  t.clock.set(MARCH_1);
  const { key, companyId, contract } = await companyWithContract(t);
  await addRule(t, key, contract.id, { metric: "api_calls", amount: "1" });
  t.clock.set(APRIL_2);
  await submitAccepted(t, key, [
    usageEvent(contract.id, { metric: "api_calls", quantity: 30, timestamp: "2026-03-15T10:00:00.000Z" }),
    usageEvent(contract.id, { metric: "api_calls", quantity: 5, timestamp: "2026-04-01T10:00:00.000Z" }),
  ]);
  return { key, companyId, contractId: contract.id };
}

const grantOn = async (t: TestApp, key: string, contractId: string, payload: object) => {
  const res = await t.call({
    method: "POST",
    url: `${CONTRACTS}/${encodeURIComponent(contractId)}/credits`,
    key,
    payload,
  });
  expectStatus(res, 201);
  return res.json();
};

const creditOf = async (t: TestApp, key: string, contractId: string, periodStart: string) =>
  (await invoiceFor(t, key, contractId, periodStart)).line_items
    .filter((l) => l.kind === "credit")
    .reduce((sum, l) => sum + l.amount, 0);

describeEachEngine("credits by service date", (t) => {
  it("a grant dated back pays for last month's usage on its open draft, in the grant's transaction", async () => {
    const { key, companyId, contractId } = await marchAndApril(t());
    const march = await invoiceFor(t(), key, contractId, "2026-03-01");
    const april = await invoiceFor(t(), key, contractId, "2026-04-01");
    assert.equal(await creditOf(t(), key, contractId, "2026-03-01"), 0);
    const grant = await grantOn(t(), key, contractId, { amount: "32", type: "promotional", starts_on: "2026-03-01" });
    // March's usage is the earlier: it is paid first, April gets what is left.
    assert.deepEqual(grant.recredited_invoices, [march.number, april.number]);
    assert.deepEqual(grant.unchanged_invoices, []);
    assert.equal(await creditOf(t(), key, contractId, "2026-03-01"), -30);
    assert.equal(await creditOf(t(), key, contractId, "2026-04-01"), -2);
    const after = await t().call({
      method: "GET",
      url: `${CONTRACTS}/${encodeURIComponent(contractId)}/credits/${grant.id}`,
      key,
    });
    assert.equal(after.json().balance, 0);
    // An event of March that arrives later finds nothing left: the grant went to the earliest usage.
    await submitAccepted(t(), key, [
      usageEvent(contractId, { metric: "api_calls", quantity: 4, timestamp: "2026-03-31T10:00:00.000Z" }),
    ]);
    assert.equal(await creditOf(t(), key, contractId, "2026-03-01"), -30);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("a grant dated back while usage arrives in parallel: it covers min(its amount, the usage), never more, never below zero", async () => {
    const { key, companyId, contractId } = await marchAndApril(t());
    // 35 already rated; 8 batches of 3 + 2 calls more race the grant, half in March, half in April.
    const batches = Array.from({ length: 8 }, (_, i) => [
      usageEvent(contractId, {
        metric: "api_calls",
        quantity: 3,
        timestamp: i % 2 === 0 ? "2026-03-20T10:00:00.000Z" : "2026-04-02T10:00:00.000Z",
      }),
      usageEvent(contractId, { metric: "api_calls", quantity: 2, timestamp: "2026-03-31T23:00:00.000Z" }),
    ]);
    const [grant] = await Promise.all([
      grantOn(t(), key, contractId, { amount: "60", type: "promotional", starts_on: "2026-03-01" }),
      ...batches.map((events) => submitAccepted(t(), key, events)),
    ]);
    // 35 + 8 × 5 = 75 of usage against 60 of credit: all of it burned, split between the two months.
    const credited =
      (await creditOf(t(), key, contractId, "2026-03-01")) + (await creditOf(t(), key, contractId, "2026-04-01"));
    assert.equal(credited, -60);
    const after = await t().call({
      method: "GET",
      url: `${CONTRACTS}/${encodeURIComponent(contractId)}/credits/${grant.id}`,
      key,
    });
    assert.equal(after.json().balance, 0);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("a grant that starts in April leaves March's draft as it was", async () => {
    const { key, contractId } = await marchAndApril(t());
    const april = await invoiceFor(t(), key, contractId, "2026-04-01");
    const grant = await grantOn(t(), key, contractId, { amount: "100", type: "promotional", starts_on: "2026-04-01" });
    assert.deepEqual(grant.recredited_invoices, [april.number]);
    assert.equal(await creditOf(t(), key, contractId, "2026-03-01"), 0);
    assert.equal(await creditOf(t(), key, contractId, "2026-04-01"), -5);
  });

  it("a grant on an issued month changes nothing there, and says so", async () => {
    const { key, companyId, contractId } = await marchAndApril(t());
    const march = await invoiceFor(t(), key, contractId, "2026-03-01");
    const finalized = await t().call({ method: "POST", url: `${INVOICES}/${march.number}/finalize`, key });
    expectStatus(finalized, 200);
    const before = finalized.json();
    const grant = await grantOn(t(), key, contractId, { amount: "100", type: "promotional", starts_on: "2026-03-01" });
    assert.deepEqual(grant.unchanged_invoices, [
      { number: march.number, status: "issued", billing_period: { start: "2026-03-01", end: "2026-03-31" } },
    ]);
    const issued = await invoiceFor(t(), key, contractId, "2026-03-01");
    assert.equal(issued.total, before.total);
    assert.deepEqual(issued.line_items, before.line_items);
    assert.equal(await creditOf(t(), key, contractId, "2026-04-01"), -5);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });
});
