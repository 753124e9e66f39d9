/**
 * The invoice list's status filter (open, overdue, an unknown status refused) and the receivables report
 * (GET /v1/billing/reports/receivables) through the API, on both engines: aging buckets at their edges, amounts
 * due after payments and credits (amountDue), draft, paid and void invoices left out, totals per currency,
 * scopes, and another company's invoices never in the answer.
 */
import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { INVOICES, createCustomer, createSampleContract, keyWithScopes, project } from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const RECEIVABLES = "/v1/billing/reports/receivables";
const HARNESS_NOW = new Date("2026-03-15T12:00:00.000Z");
/** 100 days after the invoices are issued (2026-03-15): an invoice on Net n is 100 − n days past due. */
const AS_OF = new Date("2026-06-23T08:00:00.000Z");

interface Row {
  customer: string;
  customer_name: string;
  currency: string;
  current: number;
  "1_30": number;
  "31_60": number;
  "61_90": number;
  over_90: number;
  total: number;
  invoices: number;
}
interface Report {
  object: string;
  as_of: string;
  data: Row[];
  totals: (Omit<Row, "customer" | "customer_name"> & { currency: string })[];
}

const invoiceAction = async (t: TestApp, key: string, number: string, verb: "finalize" | "pay" | "void") =>
  expectStatus(await t.call({ method: "POST", url: `${INVOICES}/${number}/${verb}`, key }), 200);

/** A customer on Net `terms` with a sample contract whose March invoice (its 1000.00 minimum) is issued today. */
async function issuedInvoice(t: TestApp, key: string, name: string, terms: number) {
  const customer = await createCustomer(t, key, { name, payment_terms_days: terms });
  const contract = await createSampleContract(t, key, customer.id);
  const { number } = await project(t, key, contract.id);
  await invoiceAction(t, key, number, "finalize");
  return { customer, contract, number };
}

async function report(t: TestApp, key: string, query = ""): Promise<Report> {
  const res = await t.call({ method: "GET", url: `${RECEIVABLES}${query}`, key });
  expectStatus(res, 200);
  return res.json();
}

const listed = async (t: TestApp, key: string, query: string) => {
  const res = await t.call({ method: "GET", url: `${INVOICES}?${query}`, key });
  expectStatus(res, 200);
  return (res.json().data as { number: string }[]).map((i) => i.number);
};

const bucketsOf = (row: Row) => [row.current, row["1_30"], row["31_60"], row["61_90"], row.over_90];

describeEachEngine("receivables and the invoice status filter", (t) => {
  afterEach(() => t().clock.set(HARNESS_NOW));

  it("ages each issued invoice's amount due by whole days past due, at the edges of every bucket", async () => {
    const { key } = await t().newCompany();
    // Days past due at AS_OF → the bucket it falls in (index into current, 1_30, 31_60, 61_90, over_90).
    const edges: [days: number, bucket: number][] = [
      [-5, 0],
      [0, 0],
      [1, 1],
      [30, 1],
      [31, 2],
      [60, 2],
      [61, 3],
      [90, 3],
      [91, 4],
    ];
    const names = new Map<string, number>();
    for (const [days] of edges) {
      const name = `Aging ${String(days + 10).padStart(3, "0")}`; // names sort as the days do
      const { customer } = await issuedInvoice(t(), key, name, 100 - days);
      names.set(customer.id, days);
    }
    t().clock.set(AS_OF);
    const answer = await report(t(), key);
    assert.equal(answer.object, "receivables_report");
    assert.equal(answer.as_of, "2026-06-23");
    assert.equal(answer.data.length, edges.length);
    answer.data.forEach((row, i) => {
      const [days, bucket] = edges[i]!;
      assert.equal(names.get(row.customer), days, "rows by customer name");
      assert.equal(row.currency, "USD");
      const expected = [0, 0, 0, 0, 0];
      expected[bucket] = 1000;
      assert.deepEqual(bucketsOf(row), expected, `${days} days past due`);
      assert.equal(row.total, 1000);
      assert.equal(row.invoices, 1);
    });
    assert.deepEqual(answer.totals, [
      {
        currency: "USD",
        current: 2000,
        "1_30": 2000,
        "31_60": 2000,
        "61_90": 2000,
        over_90: 1000,
        total: 9000,
        invoices: 9,
      },
    ]);
    // Money as JSON numbers with the currency's two decimals.
    const res = await t().call({ method: "GET", url: RECEIVABLES, key });
    assert.match(res.body, /"current":1000\.00,"1_30":0\.00/);
  });

  it("sums amounts due exactly, per customer and currency; draft, paid and void invoices and those that owe nothing are left out", async () => {
    const { key } = await t().newCompany();
    const partly = await issuedInvoice(t(), key, "Partly Paid", 30);
    // Payments and credit notes are recorded elsewhere; here their sums, as the columns amountDue reads.
    await t().app.db.query(
      "UPDATE invoices SET amount_paid = '250.1', amount_credited = '100.2' WHERE number = $1 AND contract_id = $2",
      [partly.number, partly.contract.id],
    );
    // A second invoice of the same customer, in another currency: a row of its own.
    const april = await project(t(), key, partly.contract.id, "2026-04-01", "2026-04-30");
    await invoiceAction(t(), key, april.number, "finalize");
    await t().app.db.query("UPDATE invoices SET currency = 'EUR' WHERE number = $1 AND contract_id = $2", [
      april.number,
      partly.contract.id,
    ]);
    const credited = await issuedInvoice(t(), key, "Fully Credited", 30);
    await t().app.db.query("UPDATE invoices SET amount_credited = '1000' WHERE number = $1 AND contract_id = $2", [
      credited.number,
      credited.contract.id,
    ]);
    const paid = await issuedInvoice(t(), key, "Paid Up", 30);
    await invoiceAction(t(), key, paid.number, "pay");
    const voided = await issuedInvoice(t(), key, "Voided", 30);
    await invoiceAction(t(), key, voided.number, "void");
    const draftOnly = await createCustomer(t(), key, { name: "Draft Only" });
    await project(t(), key, (await createSampleContract(t(), key, draftOnly.id)).id);

    const answer = await report(t(), key);
    assert.equal(answer.as_of, "2026-03-15");
    assert.deepEqual(
      answer.data.map((r) => [r.customer_name, r.currency, r.current, r.total, r.invoices]),
      [
        ["Partly Paid", "EUR", 1000, 1000, 1],
        ["Partly Paid", "USD", 649.7, 649.7, 1],
      ],
    );
    assert.equal(answer.data[0]!.customer, partly.customer.id);
    assert.deepEqual(
      answer.totals.map((r) => [r.currency, r.total]),
      [
        ["EUR", 1000],
        ["USD", 649.7],
      ],
    );
    assert.deepEqual(
      (await report(t(), key, "?currency=EUR")).data.map((r) => r.currency),
      ["EUR"],
    );
    assert.deepEqual((await report(t(), key, "?currency=JPY")).data, []);
  });

  it("answers an empty report to a company with nothing owed, and never another company's invoices", async () => {
    const a = await t().newCompany();
    await issuedInvoice(t(), a.key, "Company A's customer", 0);
    const b = await t().newCompany();
    const empty = await report(t(), b.key);
    assert.deepEqual(empty, { object: "receivables_report", as_of: "2026-03-15", data: [], totals: [] });
    assert.equal((await report(t(), a.key)).data.length, 1);
    assert.deepEqual(await listed(t(), b.key, "status=open"), []);
  });

  it("refuses a bad currency (400), no key (401) and a key without invoices:read (403)", async () => {
    const { key, companyId } = await t().newCompany();
    for (const bad of ["usd", "US", "EURO", ""]) {
      expectError(
        await t().call({ method: "GET", url: `${RECEIVABLES}?currency=${bad}`, key }),
        400,
        "invalid_request",
      );
    }
    expectError(await t().call({ method: "GET", url: RECEIVABLES }), 401);
    const usageOnly = await keyWithScopes(t(), companyId, ["usage:write"]);
    expectError(await t().call({ method: "GET", url: RECEIVABLES, key: usageOnly }), 403, "insufficient_scope");
    const reader = await keyWithScopes(t(), companyId, ["invoices:read"]);
    expectStatus(await t().call({ method: "GET", url: RECEIVABLES, key: reader }), 200);
  });

  it("lists open (issued, not paid) and overdue (open, due before today) invoices", async () => {
    const { key } = await t().newCompany();
    const dueSoon = await issuedInvoice(t(), key, "Due Soon", 30); // due 2026-04-14
    const dueToday = await issuedInvoice(t(), key, "Due Today", 0); // due 2026-03-15
    const paid = await issuedInvoice(t(), key, "Paid", 0);
    await invoiceAction(t(), key, paid.number, "pay");
    const voided = await issuedInvoice(t(), key, "Voided", 0);
    await invoiceAction(t(), key, voided.number, "void");
    const draftCustomer = await createCustomer(t(), key, { name: "Draft" });
    const draft = await project(t(), key, (await createSampleContract(t(), key, draftCustomer.id)).id);

    assert.deepEqual(await listed(t(), key, "status=open"), [dueToday.number, dueSoon.number]);
    assert.deepEqual(await listed(t(), key, "status=issued"), [dueToday.number, dueSoon.number]);
    assert.deepEqual(await listed(t(), key, "status=overdue"), [], "due today is not overdue yet");
    const reissue = (await t().call({ method: "GET", url: `${INVOICES}/${voided.number}`, key })).json().reissued_as;
    assert.deepEqual(await listed(t(), key, "status=draft"), [draft.number, reissue], "the void one's reissue too");
    assert.deepEqual(await listed(t(), key, "status=paid"), [paid.number]);
    assert.deepEqual(await listed(t(), key, "status=void"), [voided.number]);
    t().clock.set(new Date("2026-03-16T00:00:00.000Z"));
    assert.deepEqual(await listed(t(), key, "status=overdue"), [dueToday.number]);
    t().clock.set(new Date("2026-04-15T00:00:00.000Z"));
    assert.deepEqual(await listed(t(), key, "status=overdue"), [dueToday.number, dueSoon.number]);
    assert.deepEqual(await listed(t(), key, `status=overdue&contract=${dueSoon.contract.id}`), [dueSoon.number]);
    assert.deepEqual(await listed(t(), key, "status=overdue&limit=1"), [dueToday.number]);

    // Each listed invoice names its customer.
    const res = await t().call({ method: "GET", url: `${INVOICES}?status=open`, key });
    assert.deepEqual(
      (res.json().data as { customer: string; customer_name: string }[]).map((i) => [i.customer, i.customer_name]),
      [
        [dueToday.customer.id, "Due Today"],
        [dueSoon.customer.id, "Due Soon"],
      ],
    );
  });

  it("refuses an unknown status with a 400 that names the valid ones, and bad dates", async () => {
    const { key } = await t().newCompany();
    for (const bad of ["unpaid", "OPEN", "overdue ", "x".repeat(60)]) {
      const body = expectError(
        await t().call({ method: "GET", url: `${INVOICES}?status=${encodeURIComponent(bad)}`, key }),
        400,
        "invalid_request",
      );
      assert.match(body.error, /status: must be one of draft, issued, paid, void, open, overdue/);
    }
    for (const bad of ["from=2026-02-30", "to=March", "from=2026-3-01"]) {
      expectError(await t().call({ method: "GET", url: `${INVOICES}?status=open&${bad}`, key }), 400);
    }
  });
});
