/**
 * A contract's credits on the dashboard (docs/api.md, "Credits"): the grants table and the "Grant credit" form on
 * the contract's page, a grant's page with its ledger, and the credit line on the invoice page. Usage is sent
 * through the API, as a customer's system sends it; every check reads what the pages show.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { CONTRACTS, invoiceFor, submitAccepted, usageEvent } from "../support/api.js";
import {
  dashboardCompany,
  fieldErrorOf,
  formValuesIn,
  sampleContract,
  tableRows,
  type DashboardClient,
} from "../support/dashboard-client.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

/** The grants the API lists for a contract: to check that a refused form stored nothing. */
async function grantCount(t: () => TestApp, key: string, contractId: string): Promise<number> {
  const res = await t().call({ method: "GET", url: `${CONTRACTS}/${contractId}/credits`, key });
  assert.equal(res.statusCode, 200);
  return (res.json() as { data: unknown[] }).data.length;
}

/** The row of the contract page's grants table naming this grant. */
async function grantRow(client: DashboardClient, contractId: string, name: string): Promise<string> {
  const page = await client.get(`/contracts/${contractId}`);
  assert.equal(page.statusCode, 200);
  const row = tableRows(page.body, "Credit grants").find((r) => r.includes(`>${name}</a>`));
  assert.ok(row, `a row for ${name}: ${tableRows(page.body, "Credit grants").join("\n")}`);
  return row;
}

/** The grant page's link in a row of the grants table. */
const grantLinkIn = (row: string): string => /<a href="(\/contracts\/[^"]+\/credits\/[^"]+)">/.exec(row)![1]!;

describeEachEngine("dashboard credits", (t) => {
  async function withContract() {
    const company = await dashboardCompany(t);
    const contract = await sampleContract(t, company.key, "Credit Corp");
    return { ...company, contract };
  }

  it("offers a labelled “Grant credit” form with the contract's metrics, and says when nothing is granted yet", async () => {
    const { client, contract } = await withContract();
    const page = await client.get(`/contracts/${contract.id}`);
    assert.match(page.body, /<h2 id="credits">Credits<\/h2>/);
    assert.match(page.body, /No credit granted on this contract yet\./);
    assert.match(page.body, /<summary><strong>Grant credit<\/strong><\/summary>/);
    assert.ok(page.body.includes(`<form class="stack" method="post" action="/contracts/${contract.id}/credits">`));
    for (const id of [
      "grant-amount",
      "grant-type",
      "grant-name",
      "grant-starts_on",
      "grant-expires_on",
      "grant-priority",
    ])
      assert.match(page.body, new RegExp(`<label for="${id}">`), id);
    assert.match(page.body, /<option value="prepaid">prepaid: bought by the customer/);
    assert.match(page.body, /<option value="promotional">promotional: given, not billed<\/option>/);
    for (const metric of ["domestic_wire", "international_wire"])
      assert.ok(
        page.body.includes(
          `<label><input type="checkbox" name="metrics" value="${metric}"> <code>${metric}</code></label>`,
        ),
        metric,
      );
  });

  it("grants credit from the form and shows it in the table with its balance, then usage burns it", async () => {
    const { client, key, contract } = await withContract();
    const res = await client.post(`/contracts/${contract.id}/credits`, {
      amount: "100",
      type: "promotional",
      name: "Launch <b>credit</b>",
      expires_on: "2026-06-30",
      metrics: ["domestic_wire"],
      priority: "10",
    });
    assert.equal(res.statusCode, 303, res.body.slice(0, 2000));
    assert.equal(res.headers.location, `/contracts/${contract.id}?done=credit-granted`);
    const shown = await client.get(String(res.headers.location));
    assert.match(shown.body, /role="status">Credit granted: usage burns it/);
    assert.ok(!shown.body.includes("<b>credit</b>"), "the grant's name is escaped");
    const name = "Launch &lt;b&gt;credit&lt;/b&gt;";
    const row = await grantRow(client, contract.id, name);
    assert.ok(
      row.includes(
        '<td>promotional</td><td class="num">$100.00</td><td class="num">$100.00</td><td>2026-03-15</td><td>2026-06-30</td><td><code>domestic_wire</code></td><td class="num">10</td><td><span class="badge ok">active</span></td><td>—</td>',
      ),
      row,
    );

    // Usage sent through the API: 1 and then 2 domestic wires at $20.00 each, paid from the grant.
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 1 })]);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 2 })]);
    const burned = await grantRow(client, contract.id, name);
    assert.ok(burned.includes('<td class="num">$100.00</td><td class="num">$40.00</td>'), burned);

    const grantPage = await client.get(grantLinkIn(burned));
    assert.equal(grantPage.statusCode, 200);
    assert.ok(grantPage.body.includes(`<h1>Credit grant ${name}</h1>`));
    assert.match(grantPage.body, /<dt>Balance<\/dt><dd><strong>\$40\.00<\/strong><\/dd>/);
    assert.match(grantPage.body, /<dt>Expires on<\/dt><dd>2026-06-30<\/dd>/);
    assert.match(grantPage.body, /<dt>Billed on<\/dt><dd>not billed \(promotional\)<\/dd>/);
    assert.ok(grantPage.body.includes(`<a href="/contracts/${contract.id}">← Contract ${contract.id}</a>`));
    const invoice = await invoiceFor(t(), key, contract.id);
    const ledger = tableRows(grantPage.body, `Ledger of credit grant ${/cg_[0-9a-f]+/.exec(grantLinkIn(burned))![0]}`);
    assert.equal(ledger.length, 3, "granted, then two burns: oldest first");
    assert.match(
      ledger[0]!,
      /^<td>Granted <span class="hint">\(grant\)<\/span><\/td><td class="num">\+\$100\.00<\/td><td>—<\/td>/,
    );
    for (const [i, amount] of [
      [1, "-\\$20\\.00"],
      [2, "-\\$40\\.00"],
    ] as const)
      assert.match(
        ledger[i]!,
        new RegExp(
          `^<td>Burned by usage <span class="hint">\\(burn\\)</span></td><td class="num">${amount}</td><td><a href="/invoices/${invoice.number}">${invoice.number}</a></td><td><time`,
        ),
      );
  });

  it("shows the grant's credit line on the invoice page as a negative amount", async () => {
    const { client, key, contract } = await withContract();
    const granted = await client.post(`/contracts/${contract.id}/credits`, { amount: "50", type: "promotional" });
    assert.equal(granted.statusCode, 303);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 3 })]);
    const invoice = await invoiceFor(t(), key, contract.id);
    const page = await client.get(`/invoices/${invoice.number}`);
    assert.equal(page.statusCode, 200);
    const line = tableRows(page.body, `Line items of invoice ${invoice.number}`).find((r) =>
      r.includes("Promotional credit"),
    );
    assert.ok(line, "a line for the grant");
    assert.match(line, /<td>Promotional credit<\/td><td>credit<\/td>/);
    assert.match(line, /<td class="num"><\/td><td class="num"><\/td><td class="num">-\$50\.00<\/td>$/);
  });

  it("bills a prepaid grant on the contract's draft and links that invoice from the table", async () => {
    const { client, key, contract } = await withContract();
    const res = await client.post(`/contracts/${contract.id}/credits`, { amount: "500", type: "prepaid", name: "Q2" });
    assert.equal(res.statusCode, 303, res.body.slice(0, 2000));
    assert.equal(res.headers.location, `/contracts/${contract.id}?done=prepaid-granted`);
    const shown = await client.get(String(res.headers.location));
    assert.match(shown.body, /role="status">Prepaid credit granted and billed as a one-time line/);
    const invoice = await invoiceFor(t(), key, contract.id);
    const row = await grantRow(client, contract.id, "Q2");
    assert.ok(row.includes(`<td>prepaid</td>`), row);
    assert.ok(row.includes(`<td>never</td><td>all usage</td><td class="num">50</td>`), row);
    assert.ok(row.includes(`<td><a href="/invoices/${invoice.number}">${invoice.number}</a></td>`), row);
    const invoicePage = await client.get(`/invoices/${invoice.number}`);
    const line = tableRows(invoicePage.body, `Line items of invoice ${invoice.number}`).find((r) =>
      r.includes("<td>Q2</td>"),
    );
    assert.match(line ?? "", /<td>one_time<\/td>.*<td class="num">\$500\.00<\/td>$/);
    const grantPage = await client.get(grantLinkIn(row));
    assert.ok(grantPage.body.includes(`<dt>Billed on</dt><dd><a href="/invoices/${invoice.number}">`));
  });

  it("shows an expired grant as expired, its balance released, with the expiry in its ledger", async () => {
    const { client, key, contract } = await withContract();
    const granted = await client.post(`/contracts/${contract.id}/credits`, {
      amount: "30",
      type: "promotional",
      name: "Short credit",
      expires_on: "2026-03-20",
    });
    assert.equal(granted.statusCode, 303);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 1 })]);
    // The worker's round the day after its last day; the pages are read back on the harness's day (a session
    // does not outlive six idle days).
    t().clock.set(new Date("2026-03-21T08:00:00.000Z"));
    try {
      assert.ok((await t().app.services.credits.expireDue()) >= 1);
    } finally {
      t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    }
    const row = await grantRow(client, contract.id, "Short credit");
    assert.ok(row.includes('<td class="num">$30.00</td><td class="num">$0.00</td>'), row);
    assert.ok(
      row.includes(
        '<td>2026-03-20</td><td>all usage</td><td class="num">50</td><td><span class="badge">expired</span></td>',
      ),
      row,
    );
    const page = await client.get(grantLinkIn(row));
    assert.match(page.body, /<dt>Status<\/dt><dd><span class="badge">expired<\/span><\/dd>/);
    const ledger = tableRows(page.body, `Ledger of credit grant ${grantLinkIn(row).split("/").pop()}`);
    assert.deepEqual(
      ledger.map((r) =>
        /^<td>([^<]+) <span class="hint">\((\w+)\)<\/span><\/td><td class="num">([^<]+)<\/td>/.exec(r)?.slice(1),
      ),
      [
        ["Granted", "grant", "+$30.00"],
        ["Burned by usage", "burn", "-$20.00"],
        ["Released at expiry", "expiry", "-$10.00"],
      ],
    );
  });

  it("refuses bad input beside its fields in plain words, keeps what was typed, answers 400 and stores nothing", async () => {
    const { client, key, contract } = await withContract();
    const action = `/contracts/${contract.id}/credits`;
    const zero = await client.post(action, { amount: "0", type: "promotional", name: "Zero", priority: "7" });
    assert.equal(zero.statusCode, 400);
    assert.match(zero.body, /role="alert">One field needs your attention/);
    assert.equal(fieldErrorOf(zero.body, "grant-amount"), "Enter an amount more than 0.");
    const kept = formValuesIn(zero.body, action);
    assert.deepEqual([kept.amount, kept.type, kept.name, kept.priority], ["0", "promotional", "Zero", "7"]);
    assert.match(zero.body, /<details class="card" open>\s*<summary><strong>Grant credit/);

    const dates = await client.post(action, {
      amount: "10",
      type: "promotional",
      starts_on: "2026-05-01",
      expires_on: "2026-04-30",
      metrics: ["international_wire"],
    });
    assert.equal(dates.statusCode, 400);
    assert.equal(fieldErrorOf(dates.body, "grant-expires_on"), "Must be on or after the start date.");
    assert.ok(dates.body.includes('value="2026-04-30"'), "the typed date comes back");
    assert.ok(
      dates.body.includes('<input type="checkbox" name="metrics" value="international_wire" checked>'),
      "the ticked metric stays ticked",
    );

    const metric = await client.post(action, { amount: "10", type: "promotional", metrics: ["no_such_metric"] });
    assert.equal(metric.statusCode, 400);
    assert.equal(fieldErrorOf(metric.body, "grant-metrics"), "Not metrics of this contract: no_such_metric.");

    const blank = await client.post(action, { amount: "", type: "", priority: "101" });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /role="alert">3 fields need your attention/);
    assert.equal(fieldErrorOf(blank.body, "grant-amount"), "This field is required.");
    assert.equal(fieldErrorOf(blank.body, "grant-type"), "Choose one of prepaid, promotional.");
    assert.equal(fieldErrorOf(blank.body, "grant-priority"), "Enter 100 or less.");

    const odd = await client.post(action, {
      amount: "12.345",
      type: "prepaid",
      priority: "1.5",
      starts_on: "2026-02-30",
      metrics: ["bad metric"],
    });
    assert.equal(odd.statusCode, 400);
    assert.equal(fieldErrorOf(odd.body, "grant-priority"), "Enter a whole number.");
    assert.equal(fieldErrorOf(odd.body, "grant-starts_on"), "Enter a real date, as YYYY-MM-DD.");
    assert.equal(fieldErrorOf(odd.body, "grant-metrics"), "May contain letters, digits, _ . : -.");
    const decimals = await client.post(action, { amount: "12.345", type: "prepaid" });
    assert.equal(decimals.statusCode, 400);
    assert.equal(fieldErrorOf(decimals.body, "grant-amount"), "Too many decimals: at most 2 after the point.");

    assert.equal(await grantCount(t, key, contract.id), 0, "no refused form stored a grant");
    assert.match((await client.get(`/contracts/${contract.id}`)).body, /No credit granted on this contract yet\./);
  });

  it("refuses the form without the CSRF token, and on another company's contract, storing nothing", async () => {
    const { client, key, contract } = await withContract();
    const forged = await client.post(
      `/contracts/${contract.id}/credits`,
      { amount: "5", type: "promotional" },
      { csrf: null },
    );
    assert.equal(forged.statusCode, 403);
    const other = await dashboardCompany(t);
    const foreign = await other.client.post(`/contracts/${contract.id}/credits`, { amount: "5", type: "promotional" });
    assert.equal(foreign.statusCode, 404);
    assert.match(foreign.body, /role="alert"><p>This page or record does not exist\.<\/p>/);
    assert.equal(await grantCount(t, key, contract.id), 0);
  });

  it("answers another company's grant page, and an unknown grant, with the 404 page", async () => {
    const mine = await withContract();
    const theirs = await dashboardCompany(t);
    const theirContract = await sampleContract(t, theirs.key, "Secret Credit Customer");
    assert.equal(
      (
        await theirs.client.post(`/contracts/${theirContract.id}/credits`, {
          amount: "77",
          type: "promotional",
          name: "Secret grant",
        })
      ).statusCode,
      303,
    );
    const path = grantLinkIn(await grantRow(theirs.client, theirContract.id, "Secret grant"));
    const grantId = path.split("/").pop()!;
    for (const url of [
      path,
      `/contracts/${mine.contract.id}/credits/${grantId}`,
      `/contracts/${mine.contract.id}/credits/cg_0000000000000000`,
    ]) {
      const res = await mine.client.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.body, /role="alert"><p>This page or record does not exist\.<\/p>/, url);
      assert.ok(!res.body.includes("Secret grant") && !res.body.includes("$77.00"), url);
    }
    assert.equal((await theirs.client.get(path)).statusCode, 200, "the owner still sees it");
  });
});
