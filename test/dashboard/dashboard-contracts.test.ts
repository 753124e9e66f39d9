import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  CONTRACTS,
  addRule,
  createCustomer,
  createSampleContract,
  getPricing,
  invoicesOf,
  pathOf,
  setContractStatus,
  submitAccepted,
  updateRule,
  usageEvent,
  type Contract,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { fieldErrorOf, formValuesIn, signUp, tableRows, type DashboardClient } from "../support/dashboard-client.js";

/** A signed-up company with a dashboard session and an API key made on its API keys page (to check through the API). */
async function dashboardCompany(
  t: () => TestApp,
): Promise<{ client: DashboardClient; key: string; companyId: string }> {
  const { client, email } = await signUp(t);
  const created = await client.post("/settings/api-keys", { name: "test key" });
  assert.equal(created.statusCode, 200);
  const key = /id="new-api-key">([^<]+)</.exec(created.body)?.[1];
  assert.ok(key, "the new key is shown on the page");
  const { rows } = await t().app.db.query<{ company_id: string }>("SELECT company_id FROM users WHERE email = $1", [
    email.toLowerCase(),
  ]);
  return { client, key, companyId: rows[0]!.company_id };
}

async function contractsOf(t: () => TestApp, key: string): Promise<Contract[]> {
  const res = await t().call({ method: "GET", url: CONTRACTS, key });
  expectStatus(res, 200);
  return (res.json() as { data: Contract[] }).data;
}

const NASTY = `Ünïcode <b>Bold</b> & "Co"`;
const NASTY_ESCAPED = "Ünïcode &lt;b&gt;Bold&lt;/b&gt; &amp; &quot;Co&quot;";

describeEachEngine("dashboard contracts list and sample contracts", (t) => {
  it("lists the company's contracts with number, customer link, status, dates and metrics, escaping customer names", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: NASTY });
    const contract = await createSampleContract(t(), key, customer.id);
    const res = await client.get("/contracts");
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /text\/html/);
    assert.ok(res.body.includes(`<a href="/contracts/${contract.id}">${contract.id}</a>`));
    assert.ok(res.body.includes(contract.contract_number));
    assert.ok(res.body.includes(`<a href="/customers/${customer.id}">${NASTY_ESCAPED}</a>`));
    assert.ok(!res.body.includes("<b>Bold</b>"), "the customer name is escaped");
    assert.match(res.body, /<span class="badge ok">active<\/span>/);
    assert.ok(res.body.includes(contract.start_date));
    assert.ok(res.body.includes(contract.end_date!));
    assert.ok(res.body.includes("<code>domestic_wire</code>, <code>international_wire</code>"));
    assert.match(res.body, /<caption class="visually-hidden">Contracts<\/caption>/);
  });

  it("says there are no contracts yet and offers the company's customers in a labelled select", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: NASTY });
    const res = await client.get("/contracts");
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /No contracts yet/);
    assert.match(
      res.body,
      /<label for="sample-customer">Customer<\/label><select id="sample-customer" name="customer_id" required>/,
    );
    assert.ok(res.body.includes(`<option value="${customer.id}">${NASTY_ESCAPED}</option>`));
    assert.match(res.body, /<form class="inline" method="post" action="\/contracts\/sample">/);
  });

  it("sends a company without customers to the customers page instead of showing an empty select", async () => {
    const { client } = await dashboardCompany(t);
    const res = await client.get("/contracts");
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /you have none yet/);
    assert.match(res.body, /<a class="button" href="\/customers">Create a customer first<\/a>/);
    assert.doesNotMatch(res.body, /name="customer_id"/);
  });

  it("filters the list by status and says when no contract has the chosen status", async () => {
    const { client, key, companyId } = await dashboardCompany(t);
    const active = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Active Corp" })).id);
    const ended = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Ended Corp" })).id);
    await setContractStatus(t(), companyId, ended.id, "terminated");

    const terminated = await client.get("/contracts?status=terminated");
    assert.equal(terminated.statusCode, 200);
    assert.ok(terminated.body.includes(`>${ended.id}</a>`));
    assert.ok(!terminated.body.includes(`>${active.id}</a>`));
    assert.match(terminated.body, /<span class="badge bad">terminated<\/span>/);
    assert.match(terminated.body, /<option value="terminated" selected>terminated<\/option>/);

    const drafts = await client.get("/contracts?status=draft");
    assert.equal(drafts.statusCode, 200);
    assert.match(drafts.body, /No draft contracts\./);

    const all = await client.get("/contracts");
    assert.ok(all.body.includes(`>${ended.id}</a>`) && all.body.includes(`>${active.id}</a>`));
  });

  it("answers an unknown status filter with 400 and an alert naming the statuses", async () => {
    const { client } = await dashboardCompany(t);
    const res = await client.get("/contracts?status=%3Cscript%3Ebogus");
    assert.equal(res.statusCode, 400);
    assert.match(
      res.body,
      /role="alert">There is no contract status “&lt;script&gt;bogus”; choose one of draft, active, completed, cancelled, terminated\./,
    );
  });

  it("creates a sample contract from the form and redirects to its page with a confirmation", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: "Globex" });
    const res = await client.post("/contracts/sample", { customer_id: customer.id });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/contracts/globex-test?done=created");
    const [contract] = await contractsOf(t, key);
    assert.equal(contract?.id, "globex-test");
    assert.equal(contract?.customer_id, customer.id);
    assert.equal(contract?.sample, true);
    const shown = await client.get(String(res.headers.location));
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /role="status">Sample contract created\./);
  });

  it("shows no alert for a ?done= naming what every object inherits, on the contract and customer pages", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: "Proto Co" });
    const contract = await createSampleContract(t(), key, customer.id);
    const pages = ["/contracts", `/contracts/${contract.id}`, "/customers", `/customers/${customer.id}`];
    for (const path of pages) {
      for (const done of ["constructor", "__proto__", "toString"]) {
        const res = await client.get(`${path}?done=${done}`);
        assert.equal(res.statusCode, 200, `${path}?done=${done}`);
        assert.doesNotMatch(res.body, /class="alert/, `${path}?done=${done}`);
      }
    }
    const known = await client.get(`/contracts/${contract.id}?done=created`);
    assert.match(known.body, /role="status">Sample contract created\./, "a known key still shows its flash");
  });

  it("refuses another company's customer with a 404 alert and creates nothing", async () => {
    const mine = await dashboardCompany(t);
    const theirs = await dashboardCompany(t);
    const foreign = await createCustomer(t(), theirs.key, { name: "Their Customer" });
    await createCustomer(t(), mine.key, { name: "My Customer" });
    const res = await mine.client.post("/contracts/sample", { customer_id: foreign.id });
    assert.equal(res.statusCode, 404);
    assert.match(res.body, /class="alert error" role="alert">/);
    assert.deepEqual(await contractsOf(t, mine.key), []);
    assert.deepEqual(await contractsOf(t, theirs.key), []);
  });

  it("refuses a missing or malformed customer id with a 4xx alert and creates nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    await createCustomer(t(), key, { name: "Someone" });
    const missing = await client.post("/contracts/sample", {});
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /role="alert">[^<]*customer_id[^<]*is required/);
    const malformed = await client.post("/contracts/sample", { customer_id: "not-a-uuid" });
    assert.equal(malformed.statusCode, 404);
    assert.match(malformed.body, /role="alert">/);
    assert.deepEqual(await contractsOf(t, key), []);
  });

  it("refuses a sample-contract post without the CSRF token with 403 and creates nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: "Csrf Corp" });
    const res = await client.post("/contracts/sample", { customer_id: customer.id }, { csrf: null });
    assert.equal(res.statusCode, 403);
    assert.match(res.body, /role="alert"/);
    const forged = await client.post("/contracts/sample", { customer_id: customer.id, _csrf: "forged-token-value" });
    assert.equal(forged.statusCode, 403);
    assert.deepEqual(await contractsOf(t, key), []);
  });

  it("creates a sample contract from the button on a customer's page", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: "Button Corp" });
    const customerPage = await client.get(`/customers/${customer.id}`);
    assert.match(customerPage.body, /action="\/contracts\/sample"/);
    const res = await client.post("/contracts/sample", { customer_id: customer.id });
    assert.equal(res.statusCode, 303);
    assert.equal((await contractsOf(t, key)).length, 1);
  });

  it("sends a signed-out visitor of the contracts page to the login page", async () => {
    const res = await t().call({ method: "GET", url: "/contracts" });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/login?next=%2Fcontracts");
  });
});

describeEachEngine("dashboard contract detail", (t) => {
  it("shows the contract's facts and a working link to its agreement PDF", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: NASTY });
    const contract = await createSampleContract(t(), key, customer.id);
    const res = await client.get(`/contracts/${contract.id}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, new RegExp(`<h1>Contract ${contract.id}</h1>`));
    assert.ok(res.body.includes(`<dd>${contract.contract_number}</dd>`));
    assert.ok(res.body.includes(`<a href="/customers/${customer.id}">${NASTY_ESCAPED}</a>`));
    assert.ok(!res.body.includes("<b>Bold</b>"));
    assert.match(res.body, /<dt>Status<\/dt><dd><span class="badge ok">active<\/span><\/dd>/);
    assert.ok(res.body.includes(`${contract.start_date} to ${contract.end_date}`));
    assert.match(res.body, /<dt>Currency<\/dt><dd>USD<\/dd>/);
    assert.match(res.body, /<dt>Billing cadence<\/dt><dd>monthly<\/dd>/);
    assert.match(res.body, /<dt>Sample<\/dt><dd>yes, a sample contract<\/dd>/);
    assert.ok(res.body.includes(`<a href="${contract.pdf_url}">Agreement PDF</a>`));
    const pdf = await t().call({ method: "GET", url: pathOf(contract.pdf_url) });
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.headers["content-type"], "application/pdf");
  });

  it("shows the current pricing rules in a captioned table with their prices", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Rules Corp" })).id);
    const res = await client.get(`/contracts/${contract.id}`);
    assert.match(res.body, /<caption class="visually-hidden">Pricing rules, version 1<\/caption>/);
    assert.match(res.body, /<td data-label="Name">Domestic wire<\/td>/);
    assert.match(res.body, /\$20\.00 per unit/);
    assert.match(res.body, /\$30\.00 per unit/);
    assert.match(
      res.body,
      /<td data-label="Name">Monthly minimum<\/td><td data-label="Type">minimum<\/td><td data-label="Model">flat<\/td><td data-label="Metric">—<\/td><td data-label="Price">\$1,000\.00<\/td>/,
    );
    const program = await getPricing(t(), key, contract.id);
    for (const rule of program.rules) assert.ok(res.body.includes(`<code>${rule.id}</code>`));
  });

  it("shows version 1 of the program with every rule marked as added", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await createSampleContract(
      t(),
      key,
      (await createCustomer(t(), key, { name: "History Corp" })).id,
    );
    const res = await client.get(`/contracts/${contract.id}`);
    assert.match(res.body, /<h2>Version history<\/h2>/);
    assert.match(res.body, /<h3 id="version-1">Version 1 <span class="badge ok">current<\/span><\/h3>/);
    assert.equal(res.body.match(/<li class="diff-add"><span class="diff-kind">Added<\/span>/g)?.length, 3);
    assert.doesNotMatch(res.body, /diff-del|diff-chg/);
  });

  it("shows each later version as the rules added and the fields changed, old and new, newest first", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Diff Corp" })).id);
    const program = await getPricing(t(), key, contract.id);
    const domestic = program.rules.find((r) => r.metric === "domestic_wire")!;
    await addRule(t(), key, contract.id, {
      id: "card_fee",
      name: "Card <em>fee</em>",
      metric: "card",
      rate: "0.029",
      monthly_cap: "500",
    });
    await updateRule(t(), key, contract.id, domestic.id, { amount: "25.00", name: "Wire (domestic)" });

    const res = await client.get(`/contracts/${contract.id}`);
    assert.equal(res.statusCode, 200);
    const v3 = res.body.indexOf('id="version-3"');
    const v2 = res.body.indexOf('id="version-2"');
    const v1 = res.body.indexOf('id="version-1"');
    assert.ok(v3 > 0 && v3 < v2 && v2 < v1, "newest version first");
    assert.match(res.body, /<h3 id="version-3">Version 3 <span class="badge ok">current<\/span><\/h3>/);
    assert.match(res.body, /<h3 id="version-2">Version 2<\/h3>/);

    const third = res.body.slice(v3, v2);
    assert.match(
      third,
      /<li class="diff-chg"><span class="diff-kind">Changed<\/span> <strong>Wire \(domestic\)<\/strong>/,
    );
    assert.match(
      third,
      /name: <del><code>Domestic wire<\/code><\/del> <span aria-hidden="true">→<\/span><span class="visually-hidden">changed to<\/span> <ins><code>Wire \(domestic\)<\/code><\/ins>/,
    );
    assert.match(third, /amount: <del><code>20\.00<\/code><\/del>.*<ins><code>25\.00<\/code><\/ins>/);
    assert.match(third, /3 rules unchanged/);
    assert.doesNotMatch(third, /diff-add/);

    const second = res.body.slice(v2, v1);
    assert.match(
      second,
      /<li class="diff-add"><span class="diff-kind">Added<\/span> <strong>Card &lt;em&gt;fee&lt;\/em&gt;<\/strong>/,
    );
    assert.match(
      second,
      /2\.9% of the event&#39;s value, capped at \$500\.00 a month|2\.9% of the event&#x27;s value, capped at \$500\.00 a month/,
    );
    assert.match(second, /3 rules unchanged/);
    assert.ok(!res.body.includes("<em>fee</em>"), "rule names are escaped");

    // The current rules table shows version 3.
    assert.match(res.body, /Pricing rules, version 3/);
    assert.match(res.body, /\$25\.00 per unit/);
  });

  it("shows a rule removed from the program as removed", async () => {
    // The API has no rule deletion; a version without a rule can only be written below the services.
    const { client, key, companyId } = await dashboardCompany(t);
    const contract = await createSampleContract(
      t(),
      key,
      (await createCustomer(t(), key, { name: "Removal Corp" })).id,
    );
    const program = await getPricing(t(), key, contract.id);
    const kept = program.rules
      .filter((r) => r.type !== "minimum")
      .map((r) => ({ ...r, rate: r.rate === null ? null : String(r.rate) }));
    await t().app.db.query(
      `INSERT INTO pricing_program_versions (company_id, contract_id, version, effective_date, rules, created_at, applies_from)
       SELECT $1, $2, 2, '2026-03-16', $3, now(), applies_from
         FROM pricing_program_versions WHERE company_id = $1 AND contract_id = $2 AND version = 1`,
      [companyId, contract.id, JSON.stringify(kept)],
    );
    await t().app.db.query("UPDATE contracts SET current_version = 2 WHERE company_id = $1 AND id = $2", [
      companyId,
      contract.id,
    ]);
    const res = await client.get(`/contracts/${contract.id}`);
    const second = res.body.slice(res.body.indexOf('id="version-2"'), res.body.indexOf('id="version-1"'));
    assert.match(
      second,
      /<li class="diff-del"><span class="diff-kind">Removed<\/span> <strong>Monthly minimum<\/strong>/,
    );
    assert.match(second, /2 rules unchanged/);
  });

  it("answers another company's contract id and an unknown id with a 404 page", async () => {
    const mine = await dashboardCompany(t);
    const theirs = await dashboardCompany(t);
    const foreign = await createSampleContract(
      t(),
      theirs.key,
      (await createCustomer(t(), theirs.key, { name: "Secret Customer" })).id,
    );
    for (const path of [`/contracts/${foreign.id}`, "/contracts/no-such-contract"]) {
      const res = await mine.client.get(path);
      assert.equal(res.statusCode, 404, path);
      assert.match(res.body, /role="alert"><p>This page or record does not exist\.<\/p>/, path);
      assert.ok(!res.body.includes("Secret Customer"), path);
    }
    // A NUL is refused at the door (http-app.ts), for every route, before any lookup.
    const nul = await mine.client.get("/contracts/bad%00id");
    assert.equal(nul.statusCode, 400);
    assert.match(nul.body, /role="alert">/);
    // The owner still sees it.
    assert.equal((await theirs.client.get(`/contracts/${foreign.id}`)).statusCode, 200);
  });

  it("never lists another company's contracts or customers", async () => {
    const mine = await dashboardCompany(t);
    const theirs = await dashboardCompany(t);
    const foreignCustomer = await createCustomer(t(), theirs.key, { name: "Hidden Customer Ltd" });
    await createSampleContract(t(), theirs.key, foreignCustomer.id);
    const res = await mine.client.get("/contracts");
    assert.equal(res.statusCode, 200);
    assert.ok(!res.body.includes("Hidden Customer Ltd"));
    assert.ok(!res.body.includes(foreignCustomer.id));
  });
});

describeEachEngine("dashboard pricing rule forms", (t) => {
  async function withContract() {
    const company = await dashboardCompany(t);
    const contract = await createSampleContract(
      t(),
      company.key,
      (await createCustomer(t(), company.key, { name: "Pricing Corp" })).id,
    );
    return { ...company, contract };
  }

  it("offers labelled forms to add a rule and to change a rule's price on the contract page", async () => {
    const { client, contract } = await withContract();
    const res = await client.get(`/contracts/${contract.id}`);
    assert.match(res.body, new RegExp(`<form class="stack" method="post" action="/contracts/${contract.id}/rules">`));
    assert.match(
      res.body,
      new RegExp(`<form class="stack" method="post" action="/contracts/${contract.id}/rules/change">`),
    );
    for (const id of [
      "add-name",
      "add-type",
      "add-model",
      "add-metric",
      "add-amount",
      "add-rate",
      "add-monthly_cap",
      "change-rule",
      "change-amount",
      "change-rate",
    ]) {
      assert.match(res.body, new RegExp(`<label for="${id}">`), id);
      assert.match(res.body, new RegExp(`id="${id}"`), id);
    }
  });

  it("adds a rule from the form as a new program version and confirms it", async () => {
    const { client, key, contract } = await withContract();
    const res = await client.post(`/contracts/${contract.id}/rules`, {
      name: "Card fee",
      metric: "card",
      rate: "2.9",
      monthly_cap: "500",
      type: "",
      model: "",
      amount: "",
    });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/contracts/${contract.id}?done=rule-added`);
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.version, 2);
    const card = program.rules.find((r) => r.metric === "card");
    assert.equal(card?.model, "percentage");
    assert.equal(card?.rate, 0.029);
    assert.equal(card?.monthly_cap, "500.00");
    const shown = await client.get(String(res.headers.location));
    assert.match(shown.body, /role="status">Rule added/);
    assert.match(shown.body, /<h3 id="version-2">Version 2 <span class="badge ok">current<\/span><\/h3>/);
  });

  it("offers every price model and the fields of each, the rate as a percentage and the tiers' format", async () => {
    const { client, contract } = await withContract();
    const res = await client.get(`/contracts/${contract.id}`);
    for (const model of ["flat", "percentage", "graduated", "volume", "package"])
      assert.match(res.body, new RegExp(`<option value="${model}">${model}</option>`), model);
    for (const id of [
      "add-allow_rate_above_one",
      "add-fixed_fee",
      "add-min_fee",
      "add-max_fee",
      "add-package_size",
      "add-tiers",
      "change-allow_rate_above_one",
    ]) {
      assert.match(res.body, new RegExp(`<label for="${id}">`), id);
      assert.match(res.body, new RegExp(`id="${id}"`), id);
    }
    assert.ok(res.body.includes("2.35 for 2.35 %; stored as the fraction 0.0235"));
    assert.ok(res.body.includes("up_to unit_amount [flat_amount]"));
    assert.ok(res.body.includes("allow a rate above 100 %"));
  });

  it("adds a graduated rule from the form's tier lines, stored exactly and shown in words", async () => {
    const { client, key, contract } = await withContract();
    const res = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "api_call",
      model: "graduated",
      tiers: "1000 0.10\r\n10000 0.08 5.00\r\n- 0.05\r\n",
    });
    assert.equal(res.statusCode, 303, res.body);
    const program = await getPricing(t(), key, contract.id);
    const calls = program.rules.find((r) => r.metric === "api_call") as unknown as { model: string; tiers: unknown };
    assert.equal(calls.model, "graduated");
    assert.deepEqual(calls.tiers, [
      { up_to: 1000, unit_amount: "0.10", flat_amount: null },
      { up_to: 10000, unit_amount: "0.08", flat_amount: "5.00" },
      { up_to: null, unit_amount: "0.05", flat_amount: null },
    ]);
    const shown = await client.get(String(res.headers.location));
    assert.ok(
      shown.body.includes(
        "graduated: $0.10 per unit up to 1,000; $0.08 per unit up to 10,000 + $5.00 on entering; $0.05 per unit above 10,000",
      ),
    );
  });

  it("takes the rate as a percentage and stores the fraction, shown next to the percentage", async () => {
    const { client, key, contract } = await withContract();
    const res = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "card",
      model: "percentage",
      rate: "2.35",
      fixed_fee: "0.30",
      max_fee: "4000",
    });
    assert.equal(res.statusCode, 303, res.body);
    const raw = await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}/pricing`, key });
    assert.match(raw.body, /"rate":0\.0235[,}]/, "stored as the fraction, exactly");
    const shown = await client.get(String(res.headers.location));
    assert.ok(
      shown.body.includes(
        `2.35% of the event&#39;s value + $0.30 per event, at most $4,000.00 <span class="hint">(rate stored as <code>0.0235</code>)</span>`,
      ),
      "the rules table shows the percentage and the fraction stored",
    );

    const card = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "card")!;
    const changed = await client.post(`/contracts/${contract.id}/rules/change`, { rule_id: card.id, rate: "150" });
    assert.equal(changed.statusCode, 400);
    assert.equal(
      fieldErrorOf(changed.body, "change-rate"),
      "150 % is above 100 %: tick “allow a rate above 100 %” if that rate is meant.",
    );
    const allowed = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: card.id,
      rate: "150",
      allow_rate_above_one: "yes",
    });
    assert.equal(allowed.statusCode, 303, allowed.body);
    const after = (await getPricing(t(), key, contract.id)).rules.find((r) => r.id === card.id)!;
    assert.equal(after.rate, 1.5);
  });

  it("refuses a rate above 100 % without the box, and a malformed tier line, on their fields, storing nothing", async () => {
    const { client, key, contract } = await withContract();
    const above = await client.post(`/contracts/${contract.id}/rules`, { metric: "card", rate: "235" });
    assert.equal(above.statusCode, 400);
    assert.equal(
      fieldErrorOf(above.body, "add-rate"),
      "235 % is above 100 %: tick “allow a rate above 100 %” if that rate is meant.",
    );
    assert.ok(above.body.includes('value="235"'), "the typed percentage comes back");

    const malformed = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "api_call",
      model: "volume",
      tiers: "1000 0.10\n10,000 0.08\n- 0.05",
    });
    assert.equal(malformed.statusCode, 400);
    assert.match(fieldErrorOf(malformed.body, "add-tiers") ?? "", /^Line 2, “10,000 0.08”, is not “up_to unit_amount/);

    const disordered = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "api_call",
      model: "graduated",
      tiers: "1000 0.10\n500 0.08\n- 0.05",
    });
    assert.equal(disordered.statusCode, 400);
    assert.match(fieldErrorOf(disordered.body, "add-tiers") ?? "", /^Must be above the previous tier/);

    const noSize = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "api_call",
      model: "package",
      amount: "10",
    });
    assert.equal(noSize.statusCode, 400);
    assert.match(fieldErrorOf(noSize.body, "add-package_size") ?? "", /^Is required on a package rule/);
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("changes a rule's amount from the form as a new program version", async () => {
    const { client, key, contract } = await withContract();
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const res = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: domestic.id,
      amount: "25",
      rate: "",
    });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/contracts/${contract.id}?done=rule-changed`);
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.version, 2);
    assert.equal(program.rules.find((r) => r.id === domestic.id)?.amount, "25.00");
  });

  it("re-shows the add form with what was typed and an alert when the rule is invalid, and writes no version", async () => {
    const { client, key, contract } = await withContract();
    const invalid = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "card",
      model: "percentage",
      amount: "<b>1</b>",
    });
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /class="alert error" role="alert">2 fields need your attention/);
    assert.equal(fieldErrorOf(invalid.body, "add-rate"), "Enter the rate as a percentage: 2.9 for 2.9 %.");
    assert.equal(
      fieldErrorOf(invalid.body, "add-amount"),
      "Enter a number such as 12.50 (digits and one decimal point, no currency sign or commas).",
    );
    assert.ok(invalid.body.includes('value="&lt;b&gt;1&lt;/b&gt;"'), "the typed amount comes back, escaped");
    assert.match(invalid.body, /<details class="card" open>\s*<summary><strong>Add a pricing rule/);
    const badMetric = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "no spaces allowed",
      amount: "1",
    });
    assert.equal(badMetric.statusCode, 400);
    assert.equal(fieldErrorOf(badMetric.body, "add-metric"), "May contain letters, digits, _ . : -.");
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("refuses a price change without a new price, or for an unknown rule, and writes no version", async () => {
    const { client, key, contract } = await withContract();
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const blank = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: domestic.id,
      amount: "",
      rate: "",
    });
    assert.equal(blank.statusCode, 400);
    assert.equal(
      fieldErrorOf(blank.body, "change-amount"),
      "Give a new amount (flat rules) or a new rate (percentage rules).",
    );
    const negative = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: domestic.id,
      amount: "-5",
    });
    assert.equal(negative.statusCode, 400);
    assert.equal(fieldErrorOf(negative.body, "change-amount"), "Enter zero or more: a price cannot be negative.");
    assert.match(negative.body, /id="change-amount" name="amount" type="text" inputmode="decimal" value="-5"/);
    const unknown = await client.post(`/contracts/${contract.id}/rules/change`, { rule_id: "rule_nope", amount: "5" });
    assert.equal(unknown.statusCode, 404);
    assert.match(unknown.body, /role="alert">/);
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("answers rule forms posted to another company's contract with 404 and changes nothing", async () => {
    const mine = await dashboardCompany(t);
    const theirs = await withContract();
    const domestic = (await getPricing(t(), theirs.key, theirs.contract.id)).rules.find(
      (r) => r.metric === "domestic_wire",
    )!;
    const add = await mine.client.post(`/contracts/${theirs.contract.id}/rules`, { metric: "card", amount: "1" });
    assert.equal(add.statusCode, 404);
    assert.match(add.body, /role="alert">/);
    const change = await mine.client.post(`/contracts/${theirs.contract.id}/rules/change`, {
      rule_id: domestic.id,
      amount: "1",
    });
    assert.equal(change.statusCode, 404);
    assert.equal((await getPricing(t(), theirs.key, theirs.contract.id)).version, 1);
  });

  it("refuses rule forms without the CSRF token with 403 and changes nothing", async () => {
    const { client, key, contract } = await withContract();
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const add = await client.post(`/contracts/${contract.id}/rules`, { metric: "card", amount: "1" }, { csrf: null });
    assert.equal(add.statusCode, 403);
    const change = await client.post(
      `/contracts/${contract.id}/rules/change`,
      { rule_id: domestic.id, amount: "1" },
      { csrf: null },
    );
    assert.equal(change.statusCode, 403);
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("previews a price change against this month: both totals and each line's difference, the form kept, nothing stored", async () => {
    const { client, key, contract } = await withContract();
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 100 })]);
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const page = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: domestic.id,
      amount: "25",
      action: "preview",
    });
    assert.equal(page.statusCode, 200, page.body.slice(0, 2000));
    assert.match(page.body, /<h2 id="pricing-preview-heading">Preview: March 2026 with this change<\/h2>/);
    assert.match(page.body, /Preview only: nothing has been saved\. Press “Change price” to save the change\./);
    assert.match(
      page.body,
      /<dt>Total now<\/dt><dd>\$2,000\.00 <span class="hint">\(invoice <a href="\/invoices\/[^"]+">[^<]+<\/a>, draft\)<\/span><\/dd>/,
    );
    assert.match(page.body, /<dt>Total with the change<\/dt><dd>\$2,500\.00<\/dd>/);
    assert.match(page.body, /<dt>Difference<\/dt><dd>\+\$500\.00<\/dd>/);
    const rows = tableRows(page.body, "Differences per line, March 2026");
    const line = rows.find((r) => r.includes("Domestic wire"));
    assert.match(
      line ?? "",
      /<td class="num">\$2,000\.00<\/td><td class="num">\$2,500\.00<\/td><td class="num">\+\$500\.00<\/td>/,
    );
    const kept = formValuesIn(page.body, `/contracts/${contract.id}/rules/change`);
    assert.equal(kept.rule_id, domestic.id);
    assert.equal(kept.amount, "25");
    assert.equal((await getPricing(t(), key, contract.id)).version, 1, "a preview stores no version");
    const [invoice] = await invoicesOf(t(), key, contract.id);
    assert.equal(invoice!.total, 2000);
  });

  it("previews a new rule against this month as a line of its own, and refuses invalid fields as saving does", async () => {
    const { client, key, contract } = await withContract();
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 100 })]);
    const page = await client.post(`/contracts/${contract.id}/rules`, {
      name: "Platform fee",
      type: "subscription",
      amount: "150",
      action: "preview",
    });
    assert.equal(page.statusCode, 200, page.body.slice(0, 2000));
    assert.match(page.body, /Preview only: nothing has been saved\. Press “Add rule” to save the change\./);
    assert.match(page.body, /<dt>Total now<\/dt><dd>\$2,000\.00 /);
    assert.match(page.body, /<dt>Total with the change<\/dt><dd>\$2,150\.00<\/dd>/);
    const fee = tableRows(page.body, "Differences per line, March 2026").find((r) => r.includes("Platform fee"));
    assert.match(
      fee ?? "",
      /<td class="num">\$0\.00<\/td><td class="num">\$150\.00<\/td><td class="num">\+\$150\.00<\/td>/,
    );
    const kept = formValuesIn(page.body, `/contracts/${contract.id}/rules`);
    assert.equal(kept.name, "Platform fee");
    assert.equal(kept.type, "subscription");
    assert.equal(kept.amount, "150");
    assert.match(page.body, /<details class="card" open>\s*<summary><strong>Add a pricing rule/);

    const invalid = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "card",
      rate: "235",
      action: "preview",
    });
    assert.equal(invalid.statusCode, 400);
    assert.equal(
      fieldErrorOf(invalid.body, "add-rate"),
      "235 % is above 100 %: tick “allow a rate above 100 %” if that rate is meant.",
    );
    assert.doesNotMatch(invalid.body, /id="pricing-preview"/);
    const noSize = await client.post(`/contracts/${contract.id}/rules`, {
      metric: "api_call",
      model: "package",
      amount: "10",
      action: "preview",
    });
    assert.equal(noSize.statusCode, 400);
    assert.match(fieldErrorOf(noSize.body, "add-package_size") ?? "", /^Is required on a package rule/);
    const changeInvalid = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!.id,
      amount: "-5",
      action: "preview",
    });
    assert.equal(changeInvalid.statusCode, 400);
    assert.equal(fieldErrorOf(changeInvalid.body, "change-amount"), "Enter zero or more: a price cannot be negative.");
    assert.equal((await getPricing(t(), key, contract.id)).version, 1, "no preview stores a version");
  });

  it("adds a rule from a later date: the program in force stays, and the page lists it under scheduled changes", async () => {
    const { client, key, contract } = await withContract();
    const page = await client.get(`/contracts/${contract.id}`);
    assert.match(page.body, /<label for="add-effective_date">Effective from <span class="hint">\(optional/);
    assert.match(page.body, /id="add-effective_date" name="effective_date" type="date"/);
    assert.match(page.body, /<label for="change-effective_date">Effective from/);
    assert.match(
      page.body,
      /<button type="submit" class="secondary" name="action" value="preview">Preview against this month<\/button>/,
    );
    assert.doesNotMatch(page.body, /Scheduled changes/);

    const res = await client.post(`/contracts/${contract.id}/rules`, {
      name: "Support plan",
      type: "subscription",
      amount: "50",
      effective_date: "2026-04-01",
    });
    assert.equal(res.statusCode, 303, res.body.slice(0, 2000));
    assert.equal(res.headers.location, `/contracts/${contract.id}?done=rule-added-dated`);
    const shown = await client.get(String(res.headers.location));
    assert.match(shown.body, /role="status">Rule added from the date given/);
    assert.match(shown.body, /<h2 id="scheduled-changes">Scheduled changes<\/h2>/);
    assert.match(
      shown.body,
      /<li>From <strong>2026-04-01<\/strong>: <a href="#version-2">version 2<\/a> <span class="hint">\(4 rules\)<\/span><\/li>/,
    );
    assert.match(shown.body, /<p class="hint">Version 1, in force since /, "today's program is still version 1");
    assert.doesNotMatch(tableRows(shown.body, "Pricing rules, version 1").join(""), /Support plan/);
    assert.match(shown.body, /<h3 id="version-2">Version 2 <span class="badge warn">scheduled<\/span><\/h3>/);
    assert.match(shown.body, /<h3 id="version-1">Version 1 <span class="badge ok">current<\/span><\/h3>/);
    const pricing = await getPricing(t(), key, contract.id);
    assert.equal(pricing.version, 1);
  });

  it("refuses a bad or out-of-term effective date, and a date reaching an issued invoice, beside the date field", async () => {
    const { client, key, contract } = await withContract();
    const notADate = await client.post(`/contracts/${contract.id}/rules`, {
      type: "subscription",
      amount: "50",
      effective_date: "2026-02-30",
    });
    assert.equal(notADate.statusCode, 400);
    assert.match(fieldErrorOf(notADate.body, "add-effective_date") ?? "", /date/i);
    assert.ok(notADate.body.includes('value="2026-02-30"'), "the typed date comes back");

    const outside = await client.post(`/contracts/${contract.id}/rules`, {
      type: "subscription",
      amount: "50",
      effective_date: "2020-01-01",
    });
    assert.equal(outside.statusCode, 400);
    assert.equal(fieldErrorOf(outside.body, "add-effective_date"), "Must fall within the contract term.");
    assert.match(outside.body, /role="alert">One field needs your attention/);
    const previewOutside = await client.post(`/contracts/${contract.id}/rules`, {
      type: "subscription",
      amount: "50",
      effective_date: "2020-01-01",
      action: "preview",
    });
    assert.equal(previewOutside.statusCode, 400, "a preview refuses the date saving would refuse");
    assert.equal(fieldErrorOf(previewOutside.body, "add-effective_date"), "Must fall within the contract term.");

    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const [march] = await invoicesOf(t(), key, contract.id);
    assert.equal((await client.post(`/invoices/${march!.number}/finalize`, { confirm: "yes" })).statusCode, 303);
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const closed = await client.post(`/contracts/${contract.id}/rules/change`, {
      rule_id: domestic.id,
      amount: "25",
      effective_date: contract.start_date,
    });
    assert.equal(closed.statusCode, 409, closed.body.slice(0, 2000));
    assert.match(
      fieldErrorOf(closed.body, "change-effective_date") ?? "",
      /is issued: a change dated .* would reach its closed period/,
    );
    assert.match(
      closed.body,
      new RegExp(`id="change-effective_date" name="effective_date" type="date" value="${contract.start_date}"`),
    );
    assert.equal((await getPricing(t(), key, contract.id)).version, 1, "no refused change stores a version");
  });

  it("previews the contract's first month when this month lies outside its term (before it starts)", async () => {
    const { client, key, contract } = await withContract();
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 100 })]);
    t().clock.set(new Date("2026-02-20T12:00:00.000Z"));
    try {
      const page = await client.post(`/contracts/${contract.id}/rules`, {
        type: "subscription",
        name: "Platform fee",
        amount: "150",
        action: "preview",
      });
      assert.equal(page.statusCode, 200, page.body.slice(0, 2000));
      assert.match(page.body, /<h2 id="pricing-preview-heading">Preview: March 2026 with this change<\/h2>/);
      assert.match(page.body, /<dt>Total with the change<\/dt><dd>\$2,150\.00<\/dd>/);
    } finally {
      t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    }
  });
});
