import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { createCustomer, eventCount, listCustomers, UUID_RE } from "../support/api.js";
import { expectError } from "../support/assertions.js";

const CUSTOMERS = "/v1/billing/customers";

interface BadRequest {
  what: string;
  /** A JSON value sent as application/json, or a raw body with its content type. */
  json?: unknown;
  raw?: { body: string; contentType?: string };
  status: number;
  code?: string;
  /** The field the first detail must name. */
  path?: string;
  /** Text the error sentence must contain. */
  mentions?: string;
}

const field = (name: string, value: unknown, what: string): BadRequest => ({
  what: `${name} ${what}`,
  json: { name: "Valid Name", [name]: value },
  status: 400,
  code: "invalid_request",
  path: name,
});

const badRequests: BadRequest[] = [
  { what: "a body without name", json: { external_id: "x" }, status: 400, code: "invalid_request", path: "name" },
  { what: "an empty name", json: { name: "" }, status: 400, code: "invalid_request", path: "name" },
  { what: "a whitespace-only name", json: { name: " \t\n " }, status: 400, code: "invalid_request", path: "name" },
  {
    what: "a name of 10,000 characters",
    json: { name: "N".repeat(10_000) },
    status: 400,
    code: "invalid_request",
    path: "name",
  },
  { what: "a name that is a number", json: { name: 123 }, status: 400, code: "invalid_request", path: "name" },
  { what: "a name that is null", json: { name: null }, status: 400, code: "invalid_request", path: "name" },
  { what: "a name that is a boolean", json: { name: true }, status: 400, code: "invalid_request", path: "name" },
  { what: "a name that is an array", json: { name: ["Acme"] }, status: 400, code: "invalid_request", path: "name" },
  {
    what: "a name that is an object",
    json: { name: { text: "Acme" } },
    status: 400,
    code: "invalid_request",
    path: "name",
  },
  {
    what: "a name containing a NUL character",
    json: { name: "Ac\u0000me" },
    status: 400,
    code: "invalid_request",
    path: "name",
  },
  field("external_id", 42, "that is a number"),
  field("external_id", "", "that is empty"),
  field("external_id", "   ", "that is only whitespace"),
  field("external_id", ["a"], "that is an array"),
  field("external_id", "x".repeat(10_000), "of 10,000 characters"),
  field("external_id", "ext\u0000id", "containing a NUL character"),
  field("email", "not-an-email", "without an @"),
  field("email", "someone@", "without a domain"),
  field("email", "@example.com", "without a local part"),
  field("email", "two words@example.com", "with a space"),
  field("email", "", "that is empty"),
  field("email", 7, "that is a number"),
  field("domain", "not a domain", "with spaces"),
  field("domain", "https://example.com", "given as a URL"),
  field("domain", "example", "without a dot"),
  field("domain", "-bad.example.com", "starting with a hyphen"),
  field("domain", "exa_mple.com", "with an underscore"),
  field("domain", "", "that is empty"),
  field("domain", ["example.com"], "that is an array"),
  field("country", 33, "that is a number"),
  field("country", "", "that is empty"),
  field("country", { code: "FR" }, "that is an object"),
  field("address", 12, "that is a number"),
  field("address", ["1 Main St"], "that is an array"),
  field("registration_number", 123456, "that is a number"),
  field("registration_number", false, "that is a boolean"),
  field("registration_number", "RN\u0000", "containing a NUL character"),
  field("payment_terms_days", -1, "that is negative"),
  field("payment_terms_days", 1.5, "that is fractional"),
  field("payment_terms_days", "30", "that is a string"),
  field("payment_terms_days", true, "that is a boolean"),
  field("payment_terms_days", 1e12, "that is absurdly large"),
  {
    what: "an unknown field",
    json: { name: "Acme", nickname: "ACME" },
    status: 400,
    code: "invalid_request",
    mentions: "nickname",
  },
  {
    what: "the response-only fields id and object",
    json: { name: "Acme", id: "00000000-0000-4000-8000-000000000000", object: "customer" },
    status: 400,
    code: "invalid_request",
  },
  {
    what: "malformed JSON",
    raw: { body: '{"name": "Acme"', contentType: "application/json" },
    status: 400,
    code: "invalid_json",
  },
  {
    what: "JSON with a trailing comma",
    raw: { body: '{"name": "Acme",}', contentType: "application/json" },
    status: 400,
    code: "invalid_json",
  },
  { what: "an empty JSON body", raw: { body: "", contentType: "application/json" }, status: 400, code: "invalid_json" },
  { what: "no body at all", raw: { body: "" }, status: 400 },
  { what: "a JSON array body", json: [{ name: "Acme" }], status: 400, code: "invalid_request" },
  {
    what: "a JSON string body",
    raw: { body: '"Acme"', contentType: "application/json" },
    status: 400,
    code: "invalid_request",
  },
  {
    what: "a JSON number body",
    raw: { body: "42", contentType: "application/json" },
    status: 400,
    code: "invalid_request",
  },
  {
    what: "a JSON null body",
    raw: { body: "null", contentType: "application/json" },
    status: 400,
    code: "invalid_request",
  },
  {
    what: "a body with a __proto__ key",
    raw: { body: '{"name":"Acme","__proto__":{"admin":true}}', contentType: "application/json" },
    status: 400,
  },
  {
    what: "a text/plain body",
    raw: { body: '{"name":"Acme"}', contentType: "text/plain" },
    status: 415,
    code: "unsupported_media_type",
  },
  {
    what: "a form-encoded body",
    raw: { body: "name=Acme", contentType: "application/x-www-form-urlencoded" },
    status: 415,
    code: "unsupported_media_type",
  },
  {
    what: "an XML body",
    raw: { body: "<customer><name>Acme</name></customer>", contentType: "application/xml" },
    status: 415,
    code: "unsupported_media_type",
  },
  {
    what: "a body over 1 MiB",
    raw: { body: JSON.stringify({ name: "Acme", address: "a".repeat(1024 * 1024) }), contentType: "application/json" },
    status: 413,
    code: "payload_too_large",
  },
];

describeEachEngine("customer create validation", (t) => {
  for (const bad of badRequests) {
    it(`answers ${bad.status} to ${bad.what} and writes neither a customer nor an event`, async () => {
      const { companyId, key } = await t().newCompany();
      const res =
        bad.raw !== undefined
          ? await t().call({
              method: "POST",
              url: CUSTOMERS,
              key,
              payload: bad.raw.body,
              headers: bad.raw.contentType ? { "content-type": bad.raw.contentType } : {},
            })
          : await t().call({
              method: "POST",
              url: CUSTOMERS,
              key,
              payload: JSON.stringify(bad.json),
              headers: { "content-type": "application/json" },
            });
      const body = expectError(res, bad.status, bad.code);
      if (bad.path !== undefined) {
        assert.ok(Array.isArray(body.details), "details list the fields at fault");
        assert.equal(body.details![0]!.path, bad.path);
        assert.match(body.error, new RegExp(bad.path));
      }
      if (bad.mentions !== undefined) assert.match(body.error, new RegExp(bad.mentions));
      assert.deepEqual(await listCustomers(t(), key), []);
      assert.equal(await eventCount(t(), companyId), 0);
    });
  }

  it("accepts every documented field, trims text, lower-cases the domain and shows payment terms as Net n", async () => {
    const { key } = await t().newCompany();
    const res = await t().call({
      method: "POST",
      url: CUSTOMERS,
      key,
      payload: {
        name: "  Initech  ",
        external_id: " crm-7 ",
        email: " billing@initech.example ",
        domain: "Initech.Example",
        country: "US",
        address: "4120 Freidrich Lane, Austin",
        registration_number: "TX-0042",
        payment_terms_days: 45,
        tax_id: " DE123456789 ",
        invoice_memo: "PO 4471",
        invoice_delivery: "email",
      },
    });
    assert.equal(res.statusCode, 201);
    const customer = res.json();
    assert.match(customer.id, UUID_RE);
    assert.deepEqual(customer, {
      object: "customer",
      id: customer.id,
      name: "Initech",
      external_id: "crm-7",
      email: "billing@initech.example",
      domain: "initech.example",
      country: "US",
      address: "4120 Freidrich Lane, Austin",
      registration_number: "TX-0042",
      payment_terms_days: 45,
      tax_id: "DE123456789",
      invoice_memo: "PO 4471",
      invoice_delivery: "email",
      credit_balances: [],
      updated_at: null,
      payment_terms: "Net 45",
      created_at: t().clock.now().toISOString(),
    });
    assert.deepEqual(await listCustomers(t(), key), [customer], "the list shows the customer exactly as created");
  });

  it("shows every optional field as null when only the name is given", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Minimal" });
    for (const name of [
      "external_id",
      "email",
      "domain",
      "country",
      "address",
      "registration_number",
      "payment_terms_days",
      "payment_terms",
    ]) {
      assert.equal(customer[name], null, name);
    }
  });

  it("accepts zero payment terms days as Net 0", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Cash up front", payment_terms_days: 0 });
    assert.equal(customer.payment_terms_days, 0);
    assert.equal(customer.payment_terms, "Net 0");
  });

  it("accepts a JSON body sent with a charset parameter", async () => {
    const { key } = await t().newCompany();
    const res = await t().call({
      method: "POST",
      url: CUSTOMERS,
      key,
      payload: JSON.stringify({ name: "Charset Inc" }),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    assert.equal(res.statusCode, 201);
  });

  it("keeps non-ASCII names intact", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Société Générale – 東京 🚀" });
    assert.equal(customer.name, "Société Générale – 東京 🚀");
    assert.equal((await listCustomers(t(), key))[0]!.name, "Société Générale – 東京 🚀");
  });

  it("never matches customers by name: the same name twice without external_id makes two customers", async () => {
    const { key } = await t().newCompany();
    const first = await createCustomer(t(), key, { name: "Acme Corp" });
    const second = await createCustomer(t(), key, { name: "Acme Corp" });
    assert.notEqual(first.id, second.id);
    const names = (await listCustomers(t(), key)).map((c) => c.name);
    assert.deepEqual(names, ["Acme Corp", "Acme Corp"]);
  });

  it("never matches customers by name: the same name with different external_ids makes two customers", async () => {
    const { key } = await t().newCompany();
    const first = await createCustomer(t(), key, { name: "Acme Corp", external_id: "a" });
    const second = await createCustomer(t(), key, { name: "Acme Corp", external_id: "b" });
    assert.notEqual(first.id, second.id);
    assert.equal((await listCustomers(t(), key)).length, 2);
  });

  it("writes a customer.created event whose body is the envelope around the customer exactly as the API returned it", async () => {
    const { companyId, key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Evented", external_id: "ev-1", payment_terms_days: 30 });
    const { rows } = await t().app.db.query<{
      company_id: string;
      id: string;
      type: string;
      body: string;
      created_at: Date;
    }>("SELECT company_id, id, type, body, created_at FROM events WHERE company_id = $1", [companyId]);
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.type, "customer.created");
    assert.match(row.id, /^evt_[0-9a-f]+$/);
    assert.equal(row.created_at.toISOString(), customer.created_at);
    const envelope = JSON.parse(row.body);
    assert.deepEqual(envelope, {
      id: row.id,
      object: "event",
      type: "customer.created",
      created_at: customer.created_at,
      test: false,
      data: { object: customer },
    });
  });

  it("writes one event per customer, each with its own id", async () => {
    const { companyId, key } = await t().newCompany();
    await createCustomer(t(), key, { name: "One" });
    await createCustomer(t(), key, { name: "Two" });
    const { rows } = await t().app.db.query<{ id: string; body: string }>(
      "SELECT id, body FROM events WHERE company_id = $1",
      [companyId],
    );
    assert.equal(rows.length, 2);
    assert.notEqual(rows[0]!.id, rows[1]!.id);
    assert.deepEqual(rows.map((r) => JSON.parse(r.body).data.object.name).sort(), ["One", "Two"]);
  });

  it("answers 409 with the existing customer for a taken external_id and writes no second event", async () => {
    const { companyId, key } = await t().newCompany();
    const original = await createCustomer(t(), key, { name: "Original", external_id: "dup-1" });
    const res = await t().call({
      method: "POST",
      url: CUSTOMERS,
      key,
      payload: { name: "Copy", external_id: "dup-1", email: "x@y.example" },
    });
    const body = expectError(res, 409);
    assert.deepEqual(body.customer, original);
    assert.equal(await eventCount(t(), companyId), 1);
    assert.equal((await listCustomers(t(), key)).length, 1);
  });

  it("treats an external_id that differs only by surrounding spaces as the same external_id", async () => {
    const { key } = await t().newCompany();
    const original = await createCustomer(t(), key, { name: "Spaced", external_id: "sp-1" });
    const res = await t().call({
      method: "POST",
      url: CUSTOMERS,
      key,
      payload: { name: "Spaced again", external_id: "  sp-1 " },
    });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().customer.id, original.id);
  });

  it("writes exactly one event when the same external_id is created concurrently", async () => {
    const { companyId, key } = await t().newCompany();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t().call({ method: "POST", url: CUSTOMERS, key, payload: { name: `Racer ${i}`, external_id: "race" } }),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    assert.equal(await eventCount(t(), companyId), 1);
  });
});
