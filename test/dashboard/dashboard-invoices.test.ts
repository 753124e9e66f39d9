/**
 * The dashboard's invoice pages, black-box over fastify.inject: the filterable, paginated list, the detail
 * with its line items and totals, and projecting a period; and the refusals (a bad period or filter, another
 * company's invoice or contract, a missing CSRF token). What a form changed is read back through the API.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { addRule, getInvoice, invoicesOf, submitAccepted, usageEvent } from "../support/api.js";
import {
  alertOf,
  assertAlert,
  dashboardClient,
  dashboardCompany,
  fieldErrorOf,
  sampleContract,
  tableRows,
} from "../support/dashboard-client.js";

const CAPTION = "Invoices, newest first";

describeEachEngine("dashboard invoice pages", (t) => {
  it("lists a company's invoices newest first with number, contract, period, status, amounts and dates", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Invoice List Co");
    // Sent in April, for April's event: in March it is timestamp_in_future. Then back to the session's day.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 2 }),
      usageEvent(contract.id, { timestamp: "2026-04-03T00:00:00.000Z" }),
    ]);
    t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    const [april, march] = await invoicesOf(t(), key, contract.id);
    const page = await client.get("/invoices");
    assert.equal(page.statusCode, 200);
    const rows = tableRows(page.body, CAPTION);
    assert.equal(rows.length, 2);
    assert.match(rows[0]!, new RegExp(`<a href="/invoices/${april!.number}">${april!.number}</a>`));
    assert.match(rows[1]!, new RegExp(`<a href="/invoices/${march!.number}">${march!.number}</a>`));
    assert.match(rows[1]!, new RegExp(`<a href="/contracts/${contract.id}">${contract.id}</a>`));
    assert.match(rows[1]!, /2026-03-01 to 2026-03-31/);
    assert.match(rows[1]!, /class="badge warn">draft</);
    // A draft owes nothing yet; its total is what its month will bill (the sample's 1000.00 minimum), so far 40.00.
    assert.match(
      rows[1]!,
      /<td class="num"><span class="hint">not issued yet<\/span><\/td><td class="num">\$1,000\.00<span class="hint figure-note">projected · \$40\.00 so far<\/span><\/td>/,
    );
    assert.match(rows[1]!, new RegExp(`<td>${march!.due_date}</td>`));
    assert.match(page.body, /<label for="project-contract">Contract<\/label>/);
    assert.match(page.body, /<label for="invoice-from">Period starts on or after<\/label>/);
  });

  it("says there are no invoices yet on a new company's page", async () => {
    const { client } = await dashboardCompany(t);
    const page = await client.get("/invoices");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /class="empty"><p>No invoices yet/);
  });

  it("filters by contract, status and period, keeping the typed filters in the form, escaped", async () => {
    const { client, key } = await dashboardCompany(t);
    const a = await sampleContract(t, key, "Invoice Filter A");
    const b = await sampleContract(t, key, "Invoice Filter B");
    const months = ["2026-04-02", "2026-05-02", "2026-06-02"];
    // Sent in June, for the events up to June: in March they are timestamp_in_future. Then back to the session's day.
    t().clock.set(new Date("2026-06-15T12:00:00.000Z"));
    await submitAccepted(t(), key, [
      usageEvent(a.id),
      ...months.map((day) => usageEvent(a.id, { timestamp: `${day}T00:00:00.000Z` })),
      usageEvent(b.id),
    ]);
    t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    /** Each row's contract and period start. */
    const rowsOf = async (query: string) => {
      const page = await client.get(`/invoices?${query}`);
      assert.equal(page.statusCode, 200, page.body.slice(0, 1000));
      return tableRows(page.body, CAPTION).map(
        (row) => `${/href="\/contracts\/([^"]+)"/.exec(row)![1]} ${/(\d{4}-\d{2}-\d{2}) to/.exec(row)![1]}`,
      );
    };
    assert.deepEqual(await rowsOf(`contract=${a.id}`), [
      `${a.id} 2026-06-01`,
      `${a.id} 2026-05-01`,
      `${a.id} 2026-04-01`,
      `${a.id} 2026-03-01`,
    ]);
    assert.deepEqual(await rowsOf(`contract=${b.id}&status=draft`), [`${b.id} 2026-03-01`]);
    assert.deepEqual(await rowsOf(`contract=${b.id}&status=paid`), []);
    assert.deepEqual(await rowsOf(`contract=${a.id}&from=2026-05-01&to=2026-06-30`), [
      `${a.id} 2026-06-01`,
      `${a.id} 2026-05-01`,
    ]);
    assert.equal((await rowsOf("contract=&status=&from=&to=")).length, 5, "blank fields are no filter");
    const kept = await client.get(`/invoices?contract=${b.id}&status=draft`);
    assert.match(kept.body, new RegExp(`<option value="${b.id}" selected>`));
    assert.match(kept.body, /<option value="draft" selected>draft<\/option>/);
    const none = await client.get(`/invoices?status=paid`);
    assert.match(none.body, /No invoices match these filters/);
    // A status the API does not know is refused here as there (400), naming the ones it takes, and kept, escaped.
    const odd = await client.get(`/invoices?status=${encodeURIComponent(`"><script>alert(1)</script>`)}`);
    assert.equal(odd.statusCode, 400);
    assert.match(odd.body, /must be one of draft, issued, paid, void, open, overdue/);
    assert.match(odd.body, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
    assert.doesNotMatch(odd.body, /<script>alert/);
  });

  it("pages through more invoices than fit on a page", async () => {
    const { client, key } = await dashboardCompany(t);
    const contracts = [];
    for (let i = 0; i < 13; i++) contracts.push(await sampleContract(t, key, `Paged ${i}`));
    // Two months each: 26 invoices, one more than a page.
    // Sent in April, for April's events: in March they are timestamp_in_future. Then back to the session's day.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await submitAccepted(
      t(),
      key,
      contracts.flatMap((c) => [usageEvent(c.id), usageEvent(c.id, { timestamp: "2026-04-05T00:00:00.000Z" })]),
    );
    t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    const first = await client.get("/invoices");
    assert.equal(tableRows(first.body, CAPTION).length, 25);
    const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first.body)?.[1]?.replaceAll("&amp;", "&");
    assert.ok(next);
    const lastShown = /href="\/invoices\/([^"]+)"/.exec(tableRows(first.body, CAPTION).at(-1)!)![1];
    assert.equal(next, `/invoices?starting_after=${lastShown}`);
    const second = await client.get(next);
    assert.equal(tableRows(second.body, CAPTION).length, 1);
  });

  it("answers a bad filter or cursor with a 400 page and an alert instead of a list", async () => {
    const { client } = await dashboardCompany(t);
    const bad = await client.get("/invoices?to=2026-13-01");
    assertAlert(bad, 400, /to/);
    assert.match(bad.body, /id="invoice-to" name="to" type="date" value="2026-13-01"/);
    assertAlert(await client.get("/invoices?starting_after=INV-999999"), 400, /starting_after/);
  });

  it("shows an invoice's line items, totals and dates", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Invoice Detail Co");
    await addRule(t(), key, contract.id, {
      name: "Checks",
      type: "usage",
      model: "flat",
      metric: "check",
      amount: "0.125",
    });
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 3 }),
      usageEvent(contract.id, { metric: "check", quantity: 4 }),
    ]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    const full = await getInvoice(t(), key, invoice!.number);
    const page = await client.get(`/invoices/${invoice!.number}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(`<h1>Invoice ${invoice!.number}</h1>`));
    assert.match(
      page.body,
      new RegExp(`<dt>Contract</dt><dd><a href="/contracts/${contract.id}">${contract.id}</a></dd>`),
    );
    assert.match(page.body, /<dt>Billing period<\/dt><dd>2026-03-01 to 2026-03-31<\/dd>/);
    assert.match(page.body, new RegExp(`<dt>Issue date</dt><dd>${full.issued_date}</dd>`));
    assert.match(page.body, new RegExp(`<dt>Due date</dt><dd>${full.due_date}</dd>`));
    const rows = tableRows(page.body, `Line items of invoice ${invoice!.number}`);
    assert.equal(rows.length, full.line_items.length);
    const checks = rows.find((r) => r.includes("<code>check</code>"))!;
    assert.match(
      checks,
      /<td>Checks<\/td><td>usage<\/td><td><code>check<\/code><\/td><td class="num">4<\/td><td class="num">\$0\.125<\/td><td class="num">\$0\.50<\/td>/,
    );
    assert.match(
      rows.find((r) => r.includes("domestic_wire"))!,
      /<td class="num">3<\/td><td class="num">\$20\.00<\/td><td class="num">\$60\.00<\/td>/,
    );
    assert.match(page.body, /<dt>Subtotal<\/dt><dd>\$60\.50<\/dd>/);
    assert.match(page.body, /<dt>Tax<\/dt><dd>\$0\.00<\/dd>/);
    // A draft's total is what it holds so far; beside it, what its month will bill: the sample's 1000.00 minimum.
    assert.match(page.body, /<dt>Total so far<\/dt><dd><strong>\$60\.50<\/strong><\/dd>/);
    assert.match(page.body, /<h2 id="projected-heading">This month if nothing else arrives<\/h2>/);
    assert.match(page.body, /<dt>Subscriptions<\/dt><dd>\$0\.00<\/dd>/);
    assert.match(page.body, /<dt>Minimum top-up<\/dt><dd>\$939\.50<\/dd>/);
    assert.match(page.body, /<dt>Projected total<\/dt><dd><strong>\$1,000\.00<\/strong><\/dd>/);
    // Each cell of the lines names its column for a phone, where the rows stack.
    assert.match(page.body, /<td class="num" data-label="Amount">\$0\.50<\/td>/);
    assert.match(
      page.body,
      new RegExp(`href="/usage\\?contract=${contract.id}&amp;from=2026-03-01&amp;to=2026-03-31"`),
    );
  });

  it("shows a row per tier under a graduated line, with its exact amount, and the cap adjustment", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Tiered Co");
    await addRule(t(), key, contract.id, {
      name: "API calls",
      type: "usage",
      model: "graduated",
      metric: "api_calls",
      monthly_cap: "835",
      tiers: [
        { up_to: 1000, unit_amount: "0.10" },
        { up_to: 10000, unit_amount: "0.08", flat_amount: 5 },
        { up_to: null, unit_amount: "0.05" },
      ],
    });
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity: "10200.5" })]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    const page = await client.get(`/invoices/${invoice!.number}`);
    assert.equal(page.statusCode, 200);
    const rows = tableRows(page.body, `Line items of invoice ${invoice!.number}`);
    const at = rows.findIndex((r) => r.includes("<td>API calls</td>"));
    assert.ok(at >= 0, rows.join("\n"));
    assert.match(
      rows[at]!,
      /<td class="num">10,200\.5<\/td><td class="num">[^<]*<\/td><td class="num">\$835\.00<\/td>/,
    );
    const tiers = rows.slice(at + 1, at + 5);
    assert.match(
      tiers[0]!,
      /Tier up to 1,000<\/span><\/td><td>tier<\/td><td>—<\/td><td class="num">1,000<\/td><td class="num">\$0\.10<\/td><td class="num">\$100\.00<\/td>/,
    );
    assert.match(
      tiers[1]!,
      /Tier up to 10,000 \(\+ \$5\.00 flat\)<\/span>.*<td class="num">9,000<\/td><td class="num">\$0\.08<\/td><td class="num">\$725\.00<\/td>/,
    );
    assert.match(
      tiers[2]!,
      /Tier above 10,000<\/span>.*<td class="num">200\.5<\/td><td class="num">\$0\.05<\/td><td class="num">\$10\.025<\/td>/,
    );
    assert.match(
      tiers[3]!,
      /Monthly cap<\/span>.*<td class="num"><\/td><td class="num"><\/td><td class="num">-\$0\.025<\/td>/,
    );
  });

  it("projects a period from the form and shows the result on the page, storing the projected draft", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Projection Co");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const [before] = await invoicesOf(t(), key, contract.id);
    assert.equal(before!.total, 20);
    const res = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    });
    assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
    assert.match(
      res.body,
      new RegExp(`<h2 id="projection-result">Projection of ${contract.id} for 2026-03-01 to 2026-03-31</h2>`),
    );
    assert.match(res.body, /role="status">The draft invoice was brought up to date\./);
    assert.match(
      res.body,
      new RegExp(`<dt>Invoice</dt><dd><a href="/invoices/${before!.number}">${before!.number}</a></dd>`),
    );
    assert.match(
      res.body,
      /<dt>Total<\/dt><dd><strong>\$1,000\.00<\/strong><\/dd>/,
      "topped up to the monthly minimum",
    );
    const after = await getInvoice(t(), key, before!.number);
    assert.equal(after.total, 1000);

    const april = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-04-01",
      billing_period_end: "2026-04-30",
    });
    assert.equal(april.statusCode, 200);
    assert.match(april.body, /role="status">A new draft invoice was created\./);
    assert.equal((await invoicesOf(t(), key, contract.id)).length, 2);

    const again = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    });
    assert.equal(again.statusCode, 200, "projecting again is harmless");
    assert.equal((await getInvoice(t(), key, before!.number)).total, 1000);
  });

  it("offers to project a draft's period again from its page", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Reproject Co");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    const page = await client.get(`/invoices/${invoice!.number}`);
    assert.match(
      page.body,
      /<form method="post" action="\/invoices\/project" class="actions"><input type="hidden" name="_csrf"/,
    );
    assert.match(
      page.body,
      new RegExp(
        `<input type="hidden" name="contract" value="${contract.id}"><input type="hidden" name="billing_period_start" value="2026-03-01"><input type="hidden" name="billing_period_end" value="2026-03-31">`,
      ),
    );
    assert.match(page.body, /<button type="submit" class="secondary">Project this period again<\/button>/);
  });

  it("refuses a period that is not one calendar month, or a missing field, with a 400 form saying why beside the field, and stores nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Bad Period Co");
    const bad = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-03-02",
      billing_period_end: "2026-03-31",
    });
    assertAlert(bad, 400, /needs your attention/);
    assert.equal(
      fieldErrorOf(bad.body, "project-start"),
      "A period starts on the first day of a month: 2026-03-01 for March 2026.",
    );
    assert.equal(fieldErrorOf(bad.body, "project-end"), undefined, "the end is right for that month");
    assert.match(bad.body, /<details class="card" open>/);
    assert.match(bad.body, /id="project-start" name="billing_period_start" type="date" required value="2026-03-02"/);
    assert.match(bad.body, new RegExp(`<option value="${contract.id}" selected>`));
    const badEnd = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-04-01",
      billing_period_end: "2026-05-31",
    });
    assert.equal(badEnd.statusCode, 400);
    assert.equal(
      fieldErrorOf(badEnd.body, "project-end"),
      "A period ends on the last day of the month it starts in: 2026-04-30.",
    );
    assert.equal(fieldErrorOf(badEnd.body, "project-start"), undefined);
    const both = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-04-02",
      billing_period_end: "2026-05-15",
    });
    assert.equal(both.statusCode, 400);
    assert.equal(alertOf(both.body), "2 fields need your attention: see the message beside each.");
    assert.equal(
      fieldErrorOf(both.body, "project-start"),
      "A period starts on the first day of a month: 2026-04-01 for April 2026.",
    );
    assert.equal(fieldErrorOf(both.body, "project-end"), "A period ends on the last day of the month it starts in.");
    const notADate = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-02-30",
      billing_period_end: "2026-03-31",
    });
    assert.equal(notADate.statusCode, 400);
    assert.equal(fieldErrorOf(notADate.body, "project-start"), "Enter a real date, as YYYY-MM-DD.");
    const missing = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-03-01",
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(fieldErrorOf(missing.body, "project-end"), "This field is required.");
    const noContract = await client.post("/invoices/project", {
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    });
    assert.equal(noContract.statusCode, 400);
    assert.equal(fieldErrorOf(noContract.body, "project-contract"), "This field is required.");
    const outside = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-01-01",
      billing_period_end: "2026-01-31",
    });
    assertAlert(outside, 400, /needs your attention/);
    assert.equal(
      fieldErrorOf(outside.body, "project-start"),
      `This month is outside the contract's term: the contract runs from ${contract.start_date} to ${contract.end_date}. Choose a month within it.`,
    );
    const lastYear = await client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "9999-12-01",
      billing_period_end: "9999-12-31",
    });
    assertAlert(lastYear, 400, /needs your attention/);
    assert.equal(
      fieldErrorOf(lastYear.body, "project-start"),
      "The billing period must be a month from 1970-01 to 9989-12.",
    );
    const unknown = await client.post("/invoices/project", {
      contract: `"><script>alert(1)</script>`,
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    });
    assertAlert(unknown, 404, /needs your attention/);
    assert.equal(
      fieldErrorOf(unknown.body, "project-contract"),
      "There is no such contract in your account: choose one from the list.",
    );
    assert.match(unknown.body, /<option value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;" selected>/);
    assert.doesNotMatch(unknown.body, /<script>alert/);
    assert.deepEqual(await invoicesOf(t(), key, contract.id), []);
  });

  it("refuses a projection without the session's CSRF token with 403 and stores nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Csrf Co");
    const fields = { contract: contract.id, billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" };
    const missing = await client.post("/invoices/project", fields, { csrf: null });
    assertAlert(missing, 403, /form token/);
    const wrong = await client.post("/invoices/project", { ...fields, _csrf: "not-the-token" });
    assert.equal(wrong.statusCode, 403);
    assert.deepEqual(await invoicesOf(t(), key, contract.id), []);
  });

  it("answers another company's invoice or contract with 404 and never shows or changes it", async () => {
    const owner = await dashboardCompany(t);
    const contract = await sampleContract(t, owner.key, "Private Invoice Co");
    await submitAccepted(t(), owner.key, [usageEvent(contract.id)]);
    const [invoice] = await invoicesOf(t(), owner.key, contract.id);
    const other = await dashboardCompany(t);
    const theirs = await other.client.get(`/invoices/${invoice!.number}`);
    assertAlert(theirs, 404, /does not exist/);
    assert.doesNotMatch(theirs.body, new RegExp(contract.id));
    assertAlert(await other.client.get("/invoices/INV-does-not-exist"), 404, /does not exist/);
    const list = await other.client.get(`/invoices?contract=${contract.id}`);
    assert.equal(list.statusCode, 200);
    assert.equal(tableRows(list.body, CAPTION).length, 0);
    const project = await other.client.post("/invoices/project", {
      contract: contract.id,
      billing_period_start: "2026-04-01",
      billing_period_end: "2026-04-30",
    });
    assert.equal(project.statusCode, 404);
    assert.equal(
      fieldErrorOf(project.body, "project-contract"),
      "There is no such contract in your account: choose one from the list.",
    );
    assert.equal((await invoicesOf(t(), owner.key, contract.id)).length, 1, "no April draft for the owner");
  });

  it("finalizes, pays and voids from the invoice page, each only with its box ticked, and names the customer", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Lifecycle Page Co");
    // Sent in April, for April's event: in March it is timestamp_in_future. Then back to the session's day.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await submitAccepted(t(), key, [
      usageEvent(contract.id),
      usageEvent(contract.id, { timestamp: "2026-04-03T00:00:00.000Z" }),
    ]);
    t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    const [april, march] = await invoicesOf(t(), key, contract.id);
    assert.match(
      tableRows((await client.get("/invoices")).body, CAPTION)[1]!,
      /<td>Lifecycle Page Co<\/td>/,
      "the customer's name",
    );

    const draftPage = await client.get(`/invoices/${march!.number}`);
    assert.match(draftPage.body, /<h2 id="issue-heading">Issue this invoice<\/h2>/);
    assert.match(draftPage.body, /<input type="checkbox" id="confirm-finalize" name="confirm" value="yes" required>/);
    const unticked = await client.post(`/invoices/${march!.number}/finalize`, {});
    assertAlert(unticked, 400, /needs your attention/);
    assert.equal(fieldErrorOf(unticked.body, "confirm-finalize"), "Tick this box to confirm: this cannot be undone.");
    assert.equal((await getInvoice(t(), key, march!.number)).status, "draft", "nothing issued without the box");

    const finalized = await client.post(`/invoices/${march!.number}/finalize`, { confirm: "yes" });
    assert.equal(finalized.statusCode, 303);
    assert.equal(finalized.headers.location, `/invoices/${march!.number}?done=finalized`);
    const issuedPage = await client.get(String(finalized.headers.location));
    assert.equal(issuedPage.statusCode, 200);
    assert.match(issuedPage.body, /role="status">Invoice issued: its lines and totals are now final\./);
    assert.match(issuedPage.body, /class="badge">issued</);
    assert.equal((await getInvoice(t(), key, march!.number)).status, "issued");

    const payUnticked = await client.post(`/invoices/${march!.number}/pay`, { paid_date: "2026-03-15" });
    assertAlert(payUnticked, 400, /needs your attention/);
    assert.equal(fieldErrorOf(payUnticked.body, "confirm-pay"), "Tick this box to confirm: this cannot be undone.");
    assert.equal(fieldErrorOf(payUnticked.body, "confirm-void"), undefined, "only the form sent is blamed");
    assert.match(
      payUnticked.body,
      /id="paid-date" name="paid_date" type="date" min="[^"]+" value="2026-03-15"/,
      "the date typed is kept",
    );
    const future = await client.post(`/invoices/${march!.number}/pay`, { confirm: "yes", paid_date: "2026-03-16" });
    assertAlert(future, 400, /needs your attention/);
    assert.equal(
      fieldErrorOf(future.body, "paid-date"),
      "This date is in the future: enter the day the payment arrived, 2026-03-15 (today) at the latest.",
    );
    const early = await client.post(`/invoices/${march!.number}/pay`, { confirm: "yes", paid_date: "2026-03-14" });
    assert.equal(early.statusCode, 400);
    assert.equal(
      fieldErrorOf(early.body, "paid-date"),
      "A payment cannot be dated before the invoice was issued, on 2026-03-15.",
    );
    const malformed = await client.post(`/invoices/${march!.number}/pay`, { confirm: "yes", paid_date: "16 March" });
    assert.equal(malformed.statusCode, 400);
    assert.equal(fieldErrorOf(malformed.body, "paid-date"), "Enter a real date, as YYYY-MM-DD.");
    assert.match(malformed.body, /value="16 March"/);
    assert.equal((await getInvoice(t(), key, march!.number)).status, "issued", "nothing paid by a refused form");
    const paid = await client.post(`/invoices/${march!.number}/pay`, { confirm: "yes" });
    assert.equal(paid.headers.location, `/invoices/${march!.number}?done=paid`);
    assert.equal((await getInvoice(t(), key, march!.number)).paid_date, "2026-03-15");
    assertAlert(
      await client.post(`/invoices/${march!.number}/void`, { confirm: "yes" }),
      409,
      /paid invoice cannot be voided/,
    );

    assert.equal((await client.post(`/invoices/${april!.number}/finalize`, { confirm: "yes" })).statusCode, 303);
    const voided = await client.post(`/invoices/${april!.number}/void`, { confirm: "yes" });
    assert.equal(voided.headers.location, `/invoices/${april!.number}?done=voided`);
    assert.equal((await getInvoice(t(), key, april!.number)).status, "void");
    const voidPage = await client.get(`/invoices/${april!.number}`);
    assert.doesNotMatch(
      voidPage.body,
      /Mark as paid|Finalize and issue|Void and reissue|Record payment/,
      "a void invoice offers no action",
    );

    const other = await dashboardCompany(t);
    assertAlert(await other.client.post(`/invoices/${april!.number}/void`, { confirm: "yes" }), 404, /does not exist/);
    assert.equal(
      (await other.client.post(`/invoices/${march!.number}/finalize`, { confirm: "yes" }, { csrf: null })).statusCode,
      403,
    );
  });

  it("downloads an invoice's PDF and usage statement for the signed-in company only", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Documents Co");
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 3 })]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    const detail = await client.get(`/invoices/${invoice!.number}`);
    assert.match(detail.body, new RegExp(`href="/invoices/${invoice!.number}/invoice.pdf">Download the PDF`));
    const pdf = await client.get(`/invoices/${invoice!.number}/invoice.pdf`);
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.headers["content-type"], "application/pdf");
    assert.equal(pdf.rawPayload.subarray(0, 5).toString(), "%PDF-");
    const csv = await client.get(`/invoices/${invoice!.number}/usage.csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers["content-digest"]), /^sha-256=:[A-Za-z0-9+/]+=*:$/);
    assert.deepEqual(
      csv.body.split("\r\n").map((row) => row.split(",")[0]),
      ["row_type", "event", "line", "tax", "total", ""],
      "a header, one event, the invoice's line, its tax and total, the final line end",
    );
    const other = await dashboardCompany(t);
    assertAlert(await other.client.get(`/invoices/${invoice!.number}/invoice.pdf`), 404, /does not exist/);
    assertAlert(await other.client.get(`/invoices/${invoice!.number}/usage.csv`), 404, /does not exist/);
  });

  it("sends a signed-out browser to the login page for an invoice's actions and documents, changing nothing", async () => {
    const { key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Signed Out Co");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    const stranger = dashboardClient(t);
    for (const path of [`/invoices/${invoice!.number}/invoice.pdf`, `/invoices/${invoice!.number}/usage.csv`]) {
      const res = await stranger.get(path);
      assert.equal(res.statusCode, 303, path);
      assert.match(String(res.headers.location), /^\/login/, path);
    }
    for (const verb of ["finalize", "pay", "void"]) {
      const res = await stranger.post(
        `/invoices/${invoice!.number}/${verb}`,
        { confirm: "yes" },
        { csrf: "no-session-token" },
      );
      assert.ok([303, 403].includes(res.statusCode), `${verb}: ${res.statusCode}`);
    }
    assert.equal((await getInvoice(t(), key, invoice!.number)).status, "draft");
  });

  it("refuses pay and void without the session's CSRF token, changing nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "CSRF Lifecycle Co");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    assert.equal((await client.post(`/invoices/${invoice!.number}/finalize`, { confirm: "yes" })).statusCode, 303);
    for (const verb of ["pay", "void"]) {
      assert.equal(
        (await client.post(`/invoices/${invoice!.number}/${verb}`, { confirm: "yes" }, { csrf: null })).statusCode,
        403,
        verb,
      );
    }
    assert.equal((await getInvoice(t(), key, invoice!.number)).status, "issued");
  });
});
