/**
 * A customer read and changed through the API (GET/PATCH /v1/billing/customers/{id}) and found by `search`, on
 * both engines: every field set and cleared, every refusal (400, 403, 404, 409; never a 500, under a race too).
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { createCustomer, keyWithScopes, listCustomers } from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const CUSTOMERS = "/v1/billing/customers";

const patch = (t: TestApp, key: string, id: string, payload: unknown) =>
  t.call({ method: "PATCH", url: `${CUSTOMERS}/${id}`, key, payload: payload as object });

const get = (t: TestApp, key: string, id: string) => t.call({ method: "GET", url: `${CUSTOMERS}/${id}`, key });

describeEachEngine("customer profile (GET/PATCH)", (t) => {
  it("answers one customer by id, as it was created", async () => {
    const { key } = await t().newCompany();
    const created = await createCustomer(t(), key, { name: "Initech", external_id: "ini-1", tax_id: "EIN 12-345" });
    const res = await get(t(), key, created.id);
    expectStatus(res, 200);
    assert.deepEqual(res.json(), created);
    assert.equal(res.json().invoice_delivery, "none");
    assert.equal(res.json().updated_at, null);
  });

  it("changes each field, one PATCH at a time, and answers the customer as GET then reads it", async () => {
    const { key } = await t().newCompany();
    const { id } = await createCustomer(t(), key, { name: "Umbrella" });
    const changes: [string, unknown, unknown][] = [
      ["name", " Umbrella Corp ", "Umbrella Corp"],
      ["external_id", "umb-7", "umb-7"],
      ["email", "ap@umbrella.example", "ap@umbrella.example"],
      ["domain", "Umbrella.Example", "umbrella.example"],
      ["country", "DE", "DE"],
      ["address", "Line 1\nLine 2", "Line 1\nLine 2"],
      ["registration_number", "HRB 42", "HRB 42"],
      ["payment_terms_days", 45, 45],
      ["tax_id", "DE123456789", "DE123456789"],
      ["invoice_memo", "PO 4471", "PO 4471"],
      ["invoice_delivery", "email", "email"],
    ];
    for (const [field, sent, stored] of changes) {
      t().clock.advance(1000);
      const res = await patch(t(), key, id, { [field]: sent });
      expectStatus(res, 200);
      assert.deepEqual(res.json()[field], stored, field);
      assert.equal(res.json().updated_at, t().clock.now().toISOString(), `${field}: updated_at`);
      assert.deepEqual(((await get(t(), key, id)).json() as Record<string, unknown>)[field], stored, field);
    }
    const customer = (await get(t(), key, id)).json();
    assert.equal(customer.payment_terms, "Net 45");
    assert.equal(customer.name, "Umbrella Corp");
  });

  it("clears the optional fields with null; an empty body answers the customer unchanged", async () => {
    const { key } = await t().newCompany();
    const created = await createCustomer(t(), key, {
      name: "Clearable",
      external_id: "clr-1",
      email: "a@clear.example",
      domain: "clear.example",
      country: "FR",
      address: "1 rue",
      registration_number: "RCS 1",
      payment_terms_days: 10,
      tax_id: "FR1",
      invoice_memo: "memo",
    });
    const unchanged = await patch(t(), key, created.id, {});
    expectStatus(unchanged, 200);
    assert.deepEqual(unchanged.json(), created, "nothing changed, not even updated_at");

    const cleared = await patch(t(), key, created.id, {
      external_id: null,
      email: null,
      domain: null,
      country: null,
      address: null,
      registration_number: null,
      payment_terms_days: null,
      tax_id: null,
      invoice_memo: null,
    });
    expectStatus(cleared, 200);
    const body = cleared.json();
    for (const field of [
      "external_id",
      "email",
      "domain",
      "country",
      "address",
      "registration_number",
      "payment_terms_days",
      "payment_terms",
      "tax_id",
      "invoice_memo",
    ]) {
      assert.equal(body[field], null, field);
    }
    assert.equal(body.name, "Clearable");
    assert.deepEqual((await get(t(), key, created.id)).json(), body);
  });

  it("refuses bad inputs with 400 and changes nothing", async () => {
    const { key } = await t().newCompany();
    const created = await createCustomer(t(), key, { name: "Strict" });
    const refused: unknown[] = [
      { nickname: "x" },
      { name: null },
      { name: "" },
      { name: "   " },
      { name: 42 },
      { name: "a".repeat(201) },
      { name: "nul\u0000byte" },
      { external_id: "a".repeat(256) },
      { email: "not-an-email" },
      { email: 7 },
      { domain: "not a domain" },
      { country: "x".repeat(101) },
      { address: "a\u0000b" },
      { payment_terms_days: -1 },
      { payment_terms_days: 3651 },
      { payment_terms_days: 1.5 },
      { payment_terms_days: "30" },
      { tax_id: "t".repeat(101) },
      { invoice_memo: "m".repeat(501) },
      { invoice_delivery: "post" },
      { invoice_delivery: null },
      [],
    ];
    for (const payload of refused) {
      expectError(await patch(t(), key, created.id, payload), 400);
    }
    const invalidJson = await t().call({
      method: "PATCH",
      url: `${CUSTOMERS}/${created.id}`,
      key,
      payload: "{not json",
      headers: { "content-type": "application/json" },
    });
    expectError(invalidJson, 400);
    assert.deepEqual((await get(t(), key, created.id)).json(), created);
  });

  it("needs an email for invoice_delivery email: 400 email_required when setting it or clearing the email", async () => {
    const { key } = await t().newCompany();
    const { id } = await createCustomer(t(), key, { name: "Mailless" });
    const error = expectError(await patch(t(), key, id, { invoice_delivery: "email" }), 400, "email_required");
    assert.ok(
      error.details?.some((d: { path: string }) => d.path === "email"),
      JSON.stringify(error),
    );
    expectStatus(await patch(t(), key, id, { invoice_delivery: "email", email: "ap@mail.example" }), 200);
    expectError(await patch(t(), key, id, { email: null }), 400, "email_required");
    const after = (await get(t(), key, id)).json();
    assert.equal(after.email, "ap@mail.example");
    assert.equal(after.invoice_delivery, "email");
    // Both at once is fine: no delivery, no email.
    const both = await patch(t(), key, id, { invoice_delivery: "none", email: null });
    expectStatus(both, 200);
    assert.equal(both.json().email, null);
    assert.equal(both.json().invoice_delivery, "none");
  });

  it("answers 409 customer_exists for another customer's external_id; its own is fine", async () => {
    const { key } = await t().newCompany();
    await createCustomer(t(), key, { name: "First", external_id: "taken" });
    const second = await createCustomer(t(), key, { name: "Second", external_id: "mine" });
    expectError(await patch(t(), key, second.id, { external_id: "taken" }), 409, "customer_exists");
    expectError(await patch(t(), key, second.id, { name: "Renamed", external_id: "taken" }), 409, "customer_exists");
    const after = (await get(t(), key, second.id)).json();
    assert.equal(after.external_id, "mine");
    assert.equal(after.name, "Second", "a refused PATCH changes nothing");
    expectStatus(await patch(t(), key, second.id, { external_id: "mine" }), 200);
    // Another company's external ids are its own.
    const other = await t().newCompany();
    const theirs = await createCustomer(t(), other.key, { name: "Theirs" });
    expectStatus(await patch(t(), other.key, theirs.id, { external_id: "taken" }), 200);
  });

  it("lets exactly one of two racing PATCHes take an external_id; the other is 409, never 500", async () => {
    const { key } = await t().newCompany();
    for (let round = 0; round < 3; round += 1) {
      const a = await createCustomer(t(), key, { name: `Racer A${round}` });
      const b = await createCustomer(t(), key, { name: `Racer B${round}` });
      const wanted = `race-${round}`;
      const results = await Promise.all([
        patch(t(), key, a.id, { external_id: wanted }),
        patch(t(), key, b.id, { external_id: wanted }),
      ]);
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, 409], results.map((r) => r.body).join("\n"));
      const loser = results.find((r) => r.statusCode === 409)!;
      expectError(loser, 409, "customer_exists");
      const holders = await listCustomers(t(), key, `external_id=${wanted}`);
      assert.equal(holders.length, 1);
      assert.equal(holders[0]!.id, results.find((r) => r.statusCode === 200)!.json().id);
    }
  });

  it("answers 404 for another company's customer and for an id that is not a UUID", async () => {
    const mine = await t().newCompany();
    const other = await t().newCompany();
    const theirs = await createCustomer(t(), other.key, { name: "Private", external_id: "p-1" });
    expectError(await get(t(), mine.key, theirs.id), 404, "not_found");
    expectError(await patch(t(), mine.key, theirs.id, { name: "Hijacked" }), 404, "not_found");
    expectError(await patch(t(), mine.key, theirs.id, {}), 404, "not_found");
    expectError(await get(t(), mine.key, "not-a-uuid"), 404, "not_found");
    expectError(await patch(t(), mine.key, "not-a-uuid", { name: "X" }), 404, "not_found");
    expectError(await get(t(), mine.key, "00000000-0000-4000-8000-000000000000"), 404, "not_found");
    assert.equal((await get(t(), other.key, theirs.id)).json().name, "Private");
  });

  it("checks scopes: customers:read reads but cannot change (403); customers:write changes", async () => {
    const { key, companyId } = await t().newCompany();
    const { id } = await createCustomer(t(), key, { name: "Scoped" });
    const reader = await keyWithScopes(t(), companyId, ["customers:read"]);
    expectStatus(await get(t(), reader, id), 200);
    expectError(await patch(t(), reader, id, { name: "No" }), 403);
    const writer = await keyWithScopes(t(), companyId, ["customers:write"]);
    expectStatus(await patch(t(), writer, id, { name: "Yes" }), 200);
    const invoicesOnly = await keyWithScopes(t(), companyId, ["invoices:read"]);
    expectError(await get(t(), invoicesOnly, id), 403);
    expectError(await t().call({ method: "GET", url: `${CUSTOMERS}/${id}` }), 401);
  });

  it("searches by name (any case, any part) or by exact external id, within the company", async () => {
    const { key } = await t().newCompany();
    const acme = await createCustomer(t(), key, { name: "Acme Europe GmbH", external_id: "ACME-EU" });
    const acmeUs = await createCustomer(t(), key, { name: "ACME Inc", external_id: "acme-us" });
    const globex = await createCustomer(t(), key, { name: "Globex", external_id: "glx-acme" });
    const other = await t().newCompany();
    await createCustomer(t(), other.key, { name: "Acme Elsewhere" });

    const names = async (search: string) =>
      (await listCustomers(t(), key, `search=${encodeURIComponent(search)}`)).map((c) => c.id).sort();
    assert.deepEqual(await names("acme"), [acme.id, acmeUs.id].sort(), "name contains, any case");
    assert.deepEqual(await names("ROPE"), [acme.id]);
    assert.deepEqual(await names("glx-acme"), [globex.id], "external id, exactly");
    assert.deepEqual(await names("glx"), [], "external ids match whole only");
    assert.deepEqual(await names("acme-eu"), [], "external ids match in their case");
    assert.deepEqual(await names("ACME-EU"), [acme.id]);
    assert.deepEqual(await names("%"), [], "no LIKE wildcards");
    assert.deepEqual(await names("_"), []);
    expectError(await t().call({ method: "GET", url: `${CUSTOMERS}?search=`, key }), 400);
    expectError(await t().call({ method: "GET", url: `${CUSTOMERS}?search=${"a".repeat(201)}`, key }), 400);
  });
});
