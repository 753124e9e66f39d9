/**
 * The dashboard's Receivables page, black-box over fastify.inject: the aging table per customer and currency
 * and the totals per currency, as GET /v1/billing/reports/receivables answers them; the empty state; the
 * navigation link; another company's invoices never shown; tables that scroll sideways on a narrow screen.
 */
import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { INVOICES, createCustomer, createSampleContract, project } from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { csrfIn, dashboardClient, dashboardCompany, signUp, tableRows } from "../support/dashboard-client.js";

const CUSTOMERS = "Receivables per customer and currency at 2026-05-20";
const TOTALS = "Receivables per currency at 2026-05-20";

/** A customer on Net `terms` whose March invoice (the sample's 1000.00 minimum) is issued on 2026-03-15. */
async function issued(t: TestApp, key: string, name: string, terms: number) {
  const customer = await createCustomer(t, key, { name, payment_terms_days: terms });
  const contract = await createSampleContract(t, key, customer.id);
  const { number } = await project(t, key, contract.id);
  expectStatus(await t.call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key }), 200);
  return { customer, number };
}

describeEachEngine("dashboard receivables", (t) => {
  afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

  it("shows what each customer owes by days past due, and the totals per currency", async () => {
    const { client: first, email, password } = await signUp(t);
    const created = await first.post("/settings/api-keys", { name: "receivables" });
    const key = /id="new-api-key">([^<]+)</.exec(created.body)![1]!;
    // At 2026-05-20, 66 days after issue: Net 70 is current, Net 30 is 36 days past due, Net 0 is 66.
    const current = await issued(t(), key, "Acme <Current>", 70);
    await issued(t(), key, "Beta Late", 30);
    await issued(t(), key, "Gamma Later", 0);
    t().clock.set(new Date("2026-05-20T09:00:00.000Z"));
    // Two months on, the first session has expired: sign in again.
    const client = dashboardClient(t);
    const login = await client.get("/login");
    expectStatus(await client.post("/login", { email, password, _csrf: csrfIn(login.body)! }), 303);
    const page = await client.get("/receivables");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>Receivables<\/h1>/);
    assert.match(page.body, /<a href="\/receivables" aria-current="page">Receivables<\/a>/);
    assert.doesNotMatch(page.body, /<Current>/, "names are escaped");
    const rows = tableRows(page.body, CUSTOMERS);
    assert.equal(rows.length, 3);
    assert.ok(rows[0]!.includes(`<a href="/customers/${current.customer.id}">Acme &lt;Current&gt;</a>`), rows[0]);
    const amounts = (row: string) => [...row.matchAll(/<td class="num">(?:<strong>)?([^<]*)/g)].map((m) => m[1]);
    assert.deepEqual(amounts(rows[0]!), ["$1,000.00", "$0.00", "$0.00", "$0.00", "$0.00", "$1,000.00", "1"]);
    assert.deepEqual(amounts(rows[1]!), ["$0.00", "$0.00", "$1,000.00", "$0.00", "$0.00", "$1,000.00", "1"]);
    assert.deepEqual(amounts(rows[2]!), ["$0.00", "$0.00", "$0.00", "$1,000.00", "$0.00", "$1,000.00", "1"]);
    const totals = tableRows(page.body, TOTALS);
    assert.equal(totals.length, 1);
    assert.deepEqual(amounts(totals[0]!), ["$1,000.00", "$0.00", "$1,000.00", "$1,000.00", "$0.00", "$3,000.00", "3"]);
    // Every table scrolls sideways in its own wrapper on a narrow screen, rather than losing columns.
    const tables = page.body.match(/<table>/g)?.length ?? 0;
    assert.equal(tables, 2);
    assert.equal(
      page.body.match(/<div class="table-wrap" role="region" aria-label="[^"]*" tabindex="0">\n<table>/g)?.length,
      tables,
    );
    const css = await client.get("/assets/dashboard.css");
    assert.match(css.body, /\.table-wrap \{ overflow-x: auto;/);
    // No column is hidden: the only rules that hide anything hide an empty cell of a stacked table, and the hosted
    // page's wide-screen columns, whose figures its narrow layout writes under the line's description.
    const hiding = [...css.body.matchAll(/([^{}\n]+)\{[^{}]*display: none/g)].map((m) => m[1]!.trim());
    assert.deepEqual(
      hiding,
      ["table.stacked td:empty", ".hosted .narrow-only", ".hosted table.lines .wide-only"],
      "no column is hidden",
    );
    assert.match(page.body, /<a href="\/invoices\?status=overdue">Overdue invoices<\/a>/);
  });

  it("says nothing is owed when no issued invoice waits for payment, and never shows another company's", async () => {
    const owner = await dashboardCompany(t);
    const theirs = await issued(t(), owner.key, "Private Receivable Co", 30);
    const other = await dashboardCompany(t);
    const page = await other.client.get("/receivables");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Nothing is owed: no issued invoice is waiting for payment/);
    assert.doesNotMatch(page.body, /Private Receivable Co/);
    assert.doesNotMatch(page.body, new RegExp(theirs.customer.id));
    const mine = await owner.client.get("/receivables");
    assert.match(mine.body, /Private Receivable Co/);
  });

  it("sends a signed-out browser to the login page", async () => {
    const { client } = await dashboardCompany(t);
    client.cookies.clear();
    const page = await client.get("/receivables");
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, "/login?next=%2Freceivables");
  });
});
