import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import {
  CONTRACTS,
  companyWithContract,
  createCustomer,
  createSampleContract,
  getPricing,
  keyWithScopes,
  pathOf,
  setContractStatus,
  type Contract,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";

describeEachEngine("sample contracts", (t) => {
  it("creates an active USD monthly sample contract from a customer id alone, starting today", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Acme Corp" });
    const res = await t().call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: customer.id } });
    expectStatus(res, 201);
    const contract = res.json() as Contract;
    assert.equal(contract.object, "contract");
    assert.equal(contract.id, "acme-corp-test");
    assert.equal(contract.customer_id, customer.id);
    assert.equal(contract.customer_name, "Acme Corp");
    assert.equal(contract.status, "active");
    assert.equal(contract.sample, true);
    assert.equal(contract.currency, "USD");
    assert.equal(contract.billing_cadence, "monthly");
    assert.equal(contract.start_date, "2026-03-15");
    assert.deepEqual(contract.metrics, ["domestic_wire", "international_wire"]);
    // Not CN-: credit notes are numbered CN-000001 (docs/decisions.md, "Document numbers").
    assert.match(contract.contract_number, /^CTR-\d{6}$/);
    assert.match(contract.pdf_url, /^http:\/\/localhost:8080\/v1\/agreements\/[A-Za-z0-9_-]{43}\.pdf$/);
    assert.equal(contract.created_at, "2026-03-15T12:00:00.000Z");
  });

  it("prices the sample at 20 per domestic wire, 30 per international wire, with a 1000 USD monthly minimum", async () => {
    const { key, contract } = await companyWithContract(t());
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.object, "pricing_program");
    assert.equal(program.contract, contract.id);
    assert.equal(program.version, 1);
    assert.equal(program.effective_date, "2026-03-15");
    const byMetric = (metric: string) => program.rules.find((r) => r.type === "usage" && r.metric === metric);
    assert.equal(byMetric("domestic_wire")?.model, "flat");
    assert.equal(byMetric("domestic_wire")?.amount, "20.00");
    assert.equal(byMetric("international_wire")?.model, "flat");
    assert.equal(byMetric("international_wire")?.amount, "30.00");
    const minimums = program.rules.filter((r) => r.type === "minimum");
    assert.equal(minimums.length, 1);
    assert.equal(minimums[0]!.model, "flat");
    assert.equal(minimums[0]!.amount, "1000.00");
    assert.equal(minimums[0]!.frequency, "monthly");
    assert.equal(minimums[0]!.currency, "USD");
    assert.equal(program.rules.length, 3);
    for (const rule of program.rules) assert.equal(typeof rule.id, "string");
  });

  it("adds a timestamp suffix to the id when {slug}-test is taken, and never reuses an id", async () => {
    const { key } = await t().newCompany();
    const first = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Globex" })).id);
    const second = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Globex" })).id);
    const third = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Globex" })).id);
    assert.equal(first.id, "globex-test");
    assert.equal(second.id, "globex-test-20260315120000");
    assert.ok(third.id.startsWith("globex-test-20260315120000"), third.id);
    assert.equal(new Set([first.id, second.id, third.id]).size, 3);
    // The same customer may have several sample contracts too.
    const again = await createSampleContract(t(), key, first.customer_id);
    assert.equal(new Set([first.id, second.id, third.id, again.id]).size, 4);
    assert.equal(new Set([first, second, third, again].map((c) => c.contract_number)).size, 4);
  });

  it("gives concurrent sample contracts for same-named customers distinct ids, each with one contract.created event", async () => {
    const { key, companyId } = await t().newCompany();
    const customers = [];
    for (let i = 0; i < 8; i++) customers.push(await createCustomer(t(), key, { name: "Hooli" }));
    const responses = await Promise.all(
      customers.map((c) => t().call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: c.id } })),
    );
    for (const res of responses) expectStatus(res, 201);
    const ids = responses.map((r) => (r.json() as Contract).id);
    assert.equal(new Set(ids).size, 8);
    assert.ok(ids.includes("hooli-test"));
    for (const id of ids) assert.ok(id.startsWith("hooli-test"), id);
    const { rows } = await t().app.db.query<{ body: string }>(
      "SELECT body FROM events WHERE company_id = $1 AND type = 'contract.created'",
      [companyId],
    );
    assert.deepEqual(rows.map((r) => JSON.parse(r.body).data.object.id).sort(), [...ids].sort());
  });

  it("builds the slug from the customer's name in lower-case ASCII letters, digits and dashes", async () => {
    const { key } = await t().newCompany();
    const contract = await createSampleContract(
      t(),
      key,
      (await createCustomer(t(), key, { name: "  Café Zürich & Söhne, 2nd Co.  " })).id,
    );
    assert.equal(contract.id, "cafe-zurich-sohne-2nd-co-test");
  });

  it("keeps two companies' {slug}-test ids apart: each company gets the plain id", async () => {
    const a = await companyWithContract(t(), "Initech");
    const b = await companyWithContract(t(), "Initech");
    assert.equal(a.contract.id, "initech-test");
    assert.equal(b.contract.id, "initech-test");
  });

  it("serves the agreement PDF at pdf_url without an API key", async () => {
    const { contract } = await companyWithContract(t(), "Pdf Holder");
    const res = await t().call({ method: "GET", url: pathOf(contract.pdf_url) });
    expectStatus(res, 200);
    assert.match(String(res.headers["content-type"]), /^application\/pdf/);
    assert.equal(res.rawPayload.subarray(0, 4).toString("latin1"), "%PDF");
  });

  it("answers 404 for a pdf_url whose token is wrong", async () => {
    const { contract } = await companyWithContract(t());
    const path = pathOf(contract.pdf_url);
    const token = /\/([^/]+)\.pdf$/.exec(path)![1]!;
    const flipped = (token.startsWith("A") ? "B" : "A") + token.slice(1);
    for (const wrong of [path.replace(token, flipped), path.replace(token, "nope"), path.replace(`${token}.pdf`, "")]) {
      const res = await t().call({ method: "GET", url: wrong });
      expectStatus(res, 404);
    }
    // A valid API key does not turn a wrong token into a right one.
    const { key } = await t().newCompany();
    expectStatus(await t().call({ method: "GET", url: path.replace(token, flipped), key }), 404);
  });

  it("refuses any body field besides customer_id with 400", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Strict Body" });
    for (const extra of [
      { name: "My contract" },
      { id: "my-contract" },
      { external_contract_id: "x" },
      { currency: "EUR" },
      { sample: false },
    ]) {
      const res = await t().call({
        method: "POST",
        url: CONTRACTS,
        key,
        payload: { customer_id: customer.id, ...extra },
      });
      expectError(res, 400, "invalid_request");
    }
    expectError(await t().call({ method: "POST", url: CONTRACTS, key, payload: {} }), 400, "invalid_request");
    expectError(
      await t().call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: 42 } }),
      400,
      "invalid_request",
    );
    const list = await t().call({ method: "GET", url: CONTRACTS, key });
    assert.equal(list.json().data.length, 0, "nothing was created");
  });

  it("answers 404 Not found for an unknown customer, a malformed customer id or another company's customer", async () => {
    const { key } = await t().newCompany();
    const other = await t().newCompany();
    const theirs = await createCustomer(t(), other.key, { name: "Not Yours" });
    for (const customerId of [randomUUID(), "not-a-uuid", theirs.id]) {
      const body = expectError(
        await t().call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: customerId } }),
        404,
      );
      assert.equal(body.error, "Not found");
    }
  });

  it("records one contract.created event in the events table with the contract as created", async () => {
    const { key, companyId } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Evented" });
    const before = await t().app.db.query<{ id: string }>(
      "SELECT id FROM events WHERE company_id = $1 AND type = 'contract.created'",
      [companyId],
    );
    assert.equal(before.rows.length, 0);
    const contract = await createSampleContract(t(), key, customer.id);
    const { rows } = await t().app.db.query<{ company_id: string; id: string; type: string; body: string }>(
      "SELECT company_id, id, type, body FROM events WHERE company_id = $1 AND type = 'contract.created'",
      [companyId],
    );
    assert.equal(rows.length, 1);
    const event = JSON.parse(rows[0]!.body);
    assert.match(rows[0]!.id, /^evt_[0-9a-f]+$/);
    assert.equal(event.id, rows[0]!.id);
    assert.equal(event.object, "event");
    assert.equal(event.type, "contract.created");
    const data = event.data.object;
    assert.equal(data.object, "contract");
    assert.equal(data.id, contract.id);
    assert.equal(data.customer_id, customer.id);
    assert.equal(data.contract_number, contract.contract_number);
    assert.equal(data.pdf_url, contract.pdf_url);
    assert.equal(data.created_at, contract.created_at);
    assert.deepEqual(data.metrics, ["domestic_wire", "international_wire"]);
  });

  it("writes neither a contract nor an event when the create fails", async () => {
    const { key, companyId } = await t().newCompany();
    const count = async () =>
      (
        await t().app.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM events WHERE company_id = $1 AND type = 'contract.created'",
          [companyId],
        )
      ).rows[0]!.n;
    expectStatus(await t().call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: randomUUID() } }), 404);
    expectStatus(
      await t().call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: randomUUID(), name: "x" } }),
      400,
    );
    assert.equal(await count(), 0);
    assert.equal((await t().call({ method: "GET", url: CONTRACTS, key })).json().data.length, 0);
  });
});

describeEachEngine("reading contracts", (t) => {
  it("lists every contract of the company newest first, in one page however many there are", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Many" });
    const made: Contract[] = [];
    for (let i = 0; i < 105; i++) {
      t().clock.advance(1000);
      made.push(await createSampleContract(t(), key, customer.id));
    }
    t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    const res = await t().call({ method: "GET", url: CONTRACTS, key });
    expectStatus(res, 200);
    const body = res.json();
    assert.equal(body.object, "list");
    assert.equal(body.has_more, false);
    assert.equal(body.total_count, 105);
    assert.deepEqual(
      body.data.map((c: Contract) => c.id),
      made.map((c) => c.id).reverse(),
    );
  });

  it("filters the list by status", async () => {
    const { key, companyId } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Statuses" });
    const active = await createSampleContract(t(), key, customer.id);
    const cancelled = await createSampleContract(t(), key, customer.id);
    const alsoActive = await createSampleContract(t(), key, customer.id);
    await setContractStatus(t(), companyId, cancelled.id, "cancelled");
    const ids = async (query: string) => {
      const res = await t().call({ method: "GET", url: `${CONTRACTS}${query}`, key });
      expectStatus(res, 200);
      return res.json().data.map((c: Contract) => c.id);
    };
    assert.deepEqual(await ids("?status=active"), [alsoActive.id, active.id]);
    assert.deepEqual(await ids("?status=cancelled"), [cancelled.id]);
    assert.deepEqual(await ids("?status=draft"), []);
    assert.deepEqual(await ids(""), [alsoActive.id, cancelled.id, active.id]);
    expectError(await t().call({ method: "GET", url: `${CONTRACTS}?status=open`, key }), 400, "invalid_request");
  });

  it("gets one contract by its id, as created", async () => {
    const { key, contract } = await companyWithContract(t());
    const res = await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}`, key });
    expectStatus(res, 200);
    assert.deepEqual(res.json(), contract);
  });

  it("answers 404 Not found for an unknown contract and for its pricing", async () => {
    const { key } = await t().newCompany();
    for (const url of [`${CONTRACTS}/no-such-contract`, `${CONTRACTS}/no-such-contract/pricing`]) {
      const body = expectError(await t().call({ method: "GET", url, key }), 404);
      assert.equal(body.error, "Not found");
    }
  });
});

describeEachEngine("contract isolation and access", (t) => {
  it("hides company A's contracts, pricing and rules from company B, which gets 404", async () => {
    const a = await companyWithContract(t(), "Shared Name");
    const b = await t().newCompany();
    const id = a.contract.id;
    const program = await getPricing(t(), a.key, id);
    const ruleId = program.rules[0]!.id;
    expectError(await t().call({ method: "GET", url: `${CONTRACTS}/${id}`, key: b.key }), 404);
    expectError(await t().call({ method: "GET", url: `${CONTRACTS}/${id}/pricing`, key: b.key }), 404);
    expectError(
      await t().call({
        method: "POST",
        url: `${CONTRACTS}/${id}/pricing-rules`,
        key: b.key,
        payload: { metric: "steal", rate: 0 },
      }),
      404,
    );
    expectError(
      await t().call({
        method: "PUT",
        url: `${CONTRACTS}/${id}/pricing-rules/${ruleId}`,
        key: b.key,
        payload: { amount: "0.00" },
      }),
      404,
    );
    const list = await t().call({ method: "GET", url: CONTRACTS, key: b.key });
    assert.deepEqual(list.json().data, []);
    // A's program is untouched.
    assert.deepEqual(await getPricing(t(), a.key, id), program);
  });

  it("answers 401 Missing API key on every contract endpoint without a key", async () => {
    const { contract } = await companyWithContract(t());
    const requests = [
      { method: "GET" as const, url: CONTRACTS },
      { method: "POST" as const, url: CONTRACTS, payload: { customer_id: contract.customer_id } },
      { method: "GET" as const, url: `${CONTRACTS}/${contract.id}` },
      { method: "GET" as const, url: `${CONTRACTS}/${contract.id}/pricing` },
      { method: "POST" as const, url: `${CONTRACTS}/${contract.id}/pricing-rules`, payload: { metric: "m", rate: 0 } },
      { method: "PUT" as const, url: `${CONTRACTS}/${contract.id}/pricing-rules/any`, payload: { amount: "1.00" } },
    ];
    for (const request of requests) {
      const body = expectError(await t().call(request), 401);
      assert.equal(body.error, "Missing API key", `${request.method} ${request.url}`);
    }
  });

  it("answers 403 to a key without contracts:write for contract create and rule changes, and lets it read", async () => {
    const { companyId, contract, customer } = await companyWithContract(t());
    const readOnly = await keyWithScopes(t(), companyId, ["contracts:read", "usage:write", "invoices:read"]);
    const ruleId = (await getPricing(t(), readOnly, contract.id)).rules[0]!.id;
    expectError(
      await t().call({ method: "POST", url: CONTRACTS, key: readOnly, payload: { customer_id: customer.id } }),
      403,
    );
    expectError(
      await t().call({
        method: "POST",
        url: `${CONTRACTS}/${contract.id}/pricing-rules`,
        key: readOnly,
        payload: { metric: "m", rate: 0 },
      }),
      403,
    );
    expectError(
      await t().call({
        method: "PUT",
        url: `${CONTRACTS}/${contract.id}/pricing-rules/${ruleId}`,
        key: readOnly,
        payload: { amount: "1.00" },
      }),
      403,
    );
    expectStatus(await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}`, key: readOnly }), 200);
    assert.equal((await getPricing(t(), readOnly, contract.id)).version, 1, "the refused changes made no version");
    const writer = await keyWithScopes(t(), companyId, ["contracts:write", "contracts:read"]);
    expectStatus(
      await t().call({ method: "POST", url: CONTRACTS, key: writer, payload: { customer_id: customer.id } }),
      201,
    );
  });
});
