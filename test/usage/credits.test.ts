/**
 * Credit grants (docs/api.md, "Credits"): burned by usage as it is rated, in priority order, within their days and
 * metrics, never below zero whatever the concurrency; given back when a month is priced again; released when they
 * expire; a prepaid grant billed; every movement a ledger entry that billing verify checks.
 */
import assert from "node:assert/strict";
import { beforeEach, it } from "node:test";
import { Big } from "../../src/domain/kernel/money.js";
import {
  addRule,
  assertInvoicesMatchEvents,
  companyWithContract,
  CONTRACTS,
  INVOICES,
  invoiceFor,
  keyWithScopes,
  project,
  submitAccepted,
  sum,
  USAGE,
  usageEvent,
  verifyProblems,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const MID_MARCH = new Date("2026-03-15T12:00:00.000Z");

interface Grant {
  id: string;
  type: string;
  amount: number;
  balance: number;
  status: string;
  invoice_number: string | null;
  ledger?: { kind: string; amount: number; invoice_number: string | null }[];
}

const grantOn = (t: TestApp, key: string, contractId: string, payload: object) =>
  t.call({ method: "POST", url: `${CONTRACTS}/${encodeURIComponent(contractId)}/credits`, key, payload });

async function grant(t: TestApp, key: string, contractId: string, payload: object): Promise<Grant> {
  const res = await grantOn(t, key, contractId, payload);
  expectStatus(res, 201);
  return res.json();
}

async function grantNow(t: TestApp, key: string, contractId: string, id: string): Promise<Grant> {
  const res = await t.call({ method: "GET", url: `${CONTRACTS}/${encodeURIComponent(contractId)}/credits/${id}`, key });
  expectStatus(res, 200);
  return res.json();
}

/** A contract made on March 1 with api_calls at 1.00 a unit (and `fields`), seen mid-March. */
async function contractWithCalls(t: TestApp, fields: Record<string, unknown> = {}) {
  t.clock.set(MARCH_1);
  const { key, companyId, contract } = await companyWithContract(t);
  await addRule(t, key, contract.id, { metric: "api_calls", amount: "1", ...fields });
  await addRule(t, key, contract.id, { metric: "storage_gb", amount: "1" });
  t.clock.set(MID_MARCH);
  return { key, companyId, contractId: contract.id };
}

const calls = (contractId: string, quantity: number, overrides: Record<string, unknown> = {}) =>
  usageEvent(contractId, { metric: "api_calls", quantity, timestamp: "2026-03-15T10:00:00.000Z", ...overrides });

const creditLines = async (t: TestApp, key: string, contractId: string) =>
  (await invoiceFor(t, key, contractId)).line_items.filter((l) => l.kind === "credit");

describeEachEngine("credits", (t) => {
  beforeEach(() => t().clock.set(MID_MARCH));

  it("burns a grant down with usage as it is rated, to zero and no further", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    const g = await grant(t(), key, contractId, { amount: "100", type: "promotional" });
    assert.deepEqual([g.amount, g.balance, g.status, g.invoice_number], [100, 100, "active", null]);
    for (const quantity of [30, 50, 40]) await submitAccepted(t(), key, [calls(contractId, quantity)]);
    const after = await grantNow(t(), key, contractId, g.id);
    assertDecimal(after.balance, 0);
    assert.deepEqual(
      after.ledger!.map((e) => [e.kind, e.amount]),
      [
        ["grant", 100],
        ["burn", -30],
        ["burn", -50],
        ["burn", -20],
      ],
    );
    assert.deepEqual(
      (await creditLines(t(), key, contractId)).map((l) => [l.description, l.amount]),
      [["Promotional credit", -100]],
    );
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("bills a prepaid grant as a one-time line on this month's draft, which projection keeps", async () => {
    const { key, contractId } = await contractWithCalls(t());
    const g = await grant(t(), key, contractId, { amount: "250.00", type: "prepaid", name: "Prepaid calls" });
    const draft = await invoiceFor(t(), key, contractId);
    assert.equal(g.invoice_number, draft.number);
    await project(t(), key, contractId);
    const lines = (await invoiceFor(t(), key, contractId)).line_items;
    assert.deepEqual(
      lines.filter((l) => l.kind === "one_time").map((l) => [l.description, l.amount]),
      [["Prepaid calls", 250]],
    );
  });

  it("moves a void invoice's prepaid grant and its credit burns to the draft that reissues it", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    const g = await grant(t(), key, contractId, { amount: "100.00", type: "prepaid", name: "Prepaid calls" });
    await submitAccepted(t(), key, [calls(contractId, 30)]);
    const draft = await invoiceFor(t(), key, contractId);
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/finalize`, key }), 200);
    const voided = await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/void`, key });
    expectStatus(voided, 200);
    const reissue = voided.json().reissued_as as string;
    const after = await grantNow(t(), key, contractId, g.id);
    // The grant is billed, and its burn is on, the invoice that now stands for the month.
    assert.equal(after.invoice_number, reissue);
    assert.deepEqual(
      after.ledger!.filter((e) => e.kind === "burn").map((e) => [e.amount, e.invoice_number]),
      [[-30, reissue]],
    );
    const lines = (await t().call({ method: "GET", url: `${INVOICES}/${reissue}`, key })).json().line_items as {
      kind: string;
      amount: number;
    }[];
    assert.deepEqual(
      lines.filter((l) => l.kind === "one_time" || l.kind === "credit").map((l) => [l.kind, l.amount]),
      [
        ["one_time", 100],
        ["credit", -30],
      ],
    );
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("burns in priority order, only for its metrics and its days", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    const first = await grant(t(), key, contractId, {
      amount: "20",
      type: "promotional",
      metrics: ["api_calls"],
      priority: 10,
    });
    const rest = await grant(t(), key, contractId, { amount: "100", type: "prepaid" });
    const later = await grant(t(), key, contractId, { amount: "100", type: "promotional", starts_on: "2026-03-20" });
    const gone = await grant(t(), key, contractId, {
      amount: "100",
      type: "promotional",
      starts_on: "2026-03-01",
      expires_on: "2026-03-10",
      priority: 0,
    });
    await submitAccepted(t(), key, [calls(contractId, 30)]);
    await submitAccepted(t(), key, [
      usageEvent(contractId, { metric: "storage_gb", quantity: 5, timestamp: "2026-03-15T11:00:00.000Z" }),
    ]);
    const balances = await Promise.all([first, rest, later, gone].map((g) => grantNow(t(), key, contractId, g.id)));
    assert.deepEqual(
      balances.map((g) => g.balance),
      [0, 85, 100, 100],
      "20 from the first (api_calls, priority 10), 10 + 5 from the next; none from one not begun or one expired",
    );
    await submitAccepted(t(), key, [calls(contractId, 10, { timestamp: "2026-03-21T10:00:00.000Z" })]);
    assertDecimal((await grantNow(t(), key, contractId, rest.id)).balance, 75, "priority 50, the older first");
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("never burns below zero when many requests race for one grant", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    const g = await grant(t(), key, contractId, { amount: "50", type: "promotional" });
    const batches = Array.from({ length: 16 }, () => Array.from({ length: 5 }, () => calls(contractId, 1)));
    const answers = await Promise.all(
      batches.map((events) => t().call({ method: "POST", url: USAGE, key, payload: { events } })),
    );
    for (const res of answers) expectStatus(res, 200);
    const after = await grantNow(t(), key, contractId, g.id);
    assertDecimal(after.balance, 0);
    assertDecimal(sum(after.ledger!.map((e) => e.amount)), 0);
    assert.deepEqual(
      (await creditLines(t(), key, contractId)).map((l) => l.amount),
      [-50],
    );
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("gives credit back when an event is voided, and when a volume tier lowers the month", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    await addRule(t(), key, contractId, {
      metric: "seats",
      model: "volume",
      tiers: [
        { up_to: 10, unit_amount: "2" },
        { up_to: null, unit_amount: "1" },
      ],
    });
    const g = await grant(t(), key, contractId, { amount: "100", type: "promotional" });
    const first = calls(contractId, 30);
    await submitAccepted(t(), key, [first, calls(contractId, 50)]);
    assertDecimal((await grantNow(t(), key, contractId, g.id)).balance, 20);
    expectStatus(await t().call({ method: "POST", url: `${USAGE}/${first.event_id}/void`, key }), 200);
    const afterVoid = await grantNow(t(), key, contractId, g.id);
    assertDecimal(afterVoid.balance, 50, "the voided 30 came back");
    assert.deepEqual(
      afterVoid.ledger!.slice(-1).map((e) => [e.kind, e.amount]),
      [["void", 30]],
    );

    const seats = (quantity: number) =>
      usageEvent(contractId, { metric: "seats", quantity, timestamp: "2026-03-15T12:00:00.000Z" });
    await submitAccepted(t(), key, [seats(8)]); // 16.00
    assertDecimal((await grantNow(t(), key, contractId, g.id)).balance, 34);
    await submitAccepted(t(), key, [seats(4)]); // 12 seats at 1.00: the month's seats fall from 16.00 to 12.00
    assertDecimal((await grantNow(t(), key, contractId, g.id)).balance, 38, "4.00 of seats no longer to pay: back");
    assertDecimal(sum((await creditLines(t(), key, contractId)).map((l) => l.amount)), -62);
    await assertInvoicesMatchEvents(t(), key, contractId);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("releases what is left of a grant after its last day", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    const g = await grant(t(), key, contractId, { amount: "40", type: "promotional", expires_on: "2026-03-20" });
    await submitAccepted(t(), key, [calls(contractId, 15)]);
    t().clock.set(new Date("2026-03-21T00:30:00.000Z"));
    assert.ok((await t().app.services.credits.expireDue()) >= 1, "this grant (and any other company's due)");
    const after = await grantNow(t(), key, contractId, g.id);
    assert.deepEqual([after.status, after.balance], ["expired", 0]);
    assert.deepEqual(
      after.ledger!.map((e) => [e.kind, e.amount]),
      [
        ["grant", 40],
        ["burn", -15],
        ["expiry", -25],
      ],
    );
    assert.equal(await t().app.services.credits.expireDue(), 0, "once");
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("previews a program with the month's credits applied as they would be", async () => {
    const { key, contractId } = await contractWithCalls(t());
    await grant(t(), key, contractId, { amount: "60", type: "promotional" });
    await submitAccepted(t(), key, [calls(contractId, 50)]);
    const program = (await t().call({ method: "GET", url: `${CONTRACTS}/${contractId}/pricing`, key }))
      .json()
      .rules.map((r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)));
    const same = await t().call({
      method: "POST",
      url: `${CONTRACTS}/${contractId}/pricing/preview`,
      key,
      payload: { rules: program, billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" },
    });
    expectStatus(same, 200);
    assert.deepEqual(same.json().preview.line_items, same.json().actual.line_items);
    const calls2 = program.find((r: { metric?: string }) => r.metric === "api_calls");
    calls2.amount = "2";
    const dearer = await t().call({
      method: "POST",
      url: `${CONTRACTS}/${contractId}/pricing/preview`,
      key,
      payload: { rules: program, billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" },
    });
    const credit = dearer.json().preview.line_items.find((l: { kind: string }) => l.kind === "credit");
    assertDecimal(credit.amount, -60, "the whole grant, no more");
  });

  it("refuses bad grants with 400 naming the field, other companies' contracts with 404, and checks scopes", async () => {
    const { key, companyId, contractId } = await contractWithCalls(t());
    const bad = async (payload: object, path: string) => {
      const body = expectError(await grantOn(t(), key, contractId, payload), 400, "invalid_credit_grant");
      assert.ok(
        body.details?.some((d) => d.path === path),
        JSON.stringify(body),
      );
    };
    await bad({ amount: "10", type: "prepaid", currency: "EUR" }, "currency");
    await bad({ amount: "0", type: "prepaid" }, "amount");
    await bad({ amount: "10.005", type: "prepaid" }, "amount");
    await bad({ amount: "10", type: "prepaid", starts_on: "2026-03-10", expires_on: "2026-03-09" }, "expires_on");
    await bad({ amount: "10", type: "prepaid", metrics: ["no_such_metric"] }, "metrics");
    expectError(await grantOn(t(), key, contractId, { amount: "10", type: "gift" }), 400, "invalid_request");
    expectError(await grantOn(t(), key, contractId, { amount: "10", type: "prepaid", extra: 1 }), 400);
    expectError(await grantOn(t(), key, contractId, { amount: "10", type: "prepaid", priority: 101 }), 400);
    expectError(await grantOn(t(), key, "no-such-contract", { amount: "10", type: "prepaid" }), 404);
    const other = await companyWithContract(t());
    expectError(await grantOn(t(), other.key, contractId, { amount: "10", type: "prepaid" }), 404);
    const g = await grant(t(), key, contractId, { amount: "10", type: "promotional" });
    expectError(
      await t().call({ method: "GET", url: `${CONTRACTS}/${contractId}/credits/${g.id}`, key: other.key }),
      404,
    );
    expectError(await t().call({ method: "GET", url: `${CONTRACTS}/${contractId}/credits`, key: other.key }), 404);
    const readOnly = await keyWithScopes(t(), companyId, ["contracts:read"]);
    expectError(await grantOn(t(), readOnly, contractId, { amount: "10", type: "prepaid" }), 403);
    const list = await t().call({ method: "GET", url: `${CONTRACTS}/${contractId}/credits`, key: readOnly });
    expectStatus(list, 200);
    assert.deepEqual(
      list.json().data.map((x: Grant) => [x.id, x.balance]),
      [[g.id, 10]],
      "only the valid grant was made",
    );
    assertDecimal(new Big(list.json().data[0].amount), 10);
  });
});
