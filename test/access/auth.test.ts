import assert from "node:assert/strict";
import { it } from "node:test";
import { ADMIN_TOKEN, describeEachEngine } from "../support/harness.js";
import { createCustomer, listCustomers } from "../support/api.js";
import { expectError } from "../support/assertions.js";

const CUSTOMERS = "/v1/billing/customers";

describeEachEngine("API key authentication and scopes", (t) => {
  it("accepts the key as Authorization: Bearer", async () => {
    const { key } = await t().newCompany();
    const res = await t().call({ method: "GET", url: CUSTOMERS, headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().object, "list");
  });

  it("accepts the bearer scheme name in any letter case", async () => {
    const { key } = await t().newCompany();
    const res = await t().call({ method: "GET", url: CUSTOMERS, headers: { authorization: `bearer ${key}` } });
    assert.equal(res.statusCode, 200);
  });

  it("accepts the key in the X-Api-Key header, for reads and writes", async () => {
    const { key } = await t().newCompany();
    const created = await t().call({
      method: "POST",
      url: CUSTOMERS,
      headers: { "x-api-key": key },
      payload: { name: "Via header" },
    });
    assert.equal(created.statusCode, 201);
    const list = await t().call({ method: "GET", url: CUSTOMERS, headers: { "x-api-key": key } });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().data.map((c: { id: string }) => c.id),
      [created.json().id],
    );
  });

  it("answers 401 Missing API key when no key is sent, on reads and on writes", async () => {
    for (const request of [
      { method: "GET" as const, url: CUSTOMERS },
      { method: "POST" as const, url: CUSTOMERS, payload: { name: "Nobody" } },
    ]) {
      const res = await t().call(request);
      const body = expectError(res, 401);
      assert.equal(body.error, "Missing API key");
    }
  });

  it("treats empty Authorization and X-Api-Key headers as no key at all", async () => {
    const res = await t().call({ method: "GET", url: CUSTOMERS, headers: { authorization: "", "x-api-key": "  " } });
    assert.equal(expectError(res, 401).error, "Missing API key");
  });

  it("checks the key before reading the body, so a keyless malformed request still gets 401", async () => {
    const res = await t().call({
      method: "POST",
      url: CUSTOMERS,
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    assert.equal(expectError(res, 401).error, "Missing API key");
  });

  it("answers 401 Invalid API key for a key that does not exist, in either header", async () => {
    const res1 = await t().call({
      method: "GET",
      url: CUSTOMERS,
      key: "sk_live_doesnotexist0000000000000000000000000",
    });
    assert.equal(expectError(res1, 401).error, "Invalid API key");
    const res2 = await t().call({ method: "GET", url: CUSTOMERS, headers: { "x-api-key": "sk_live_nope" } });
    assert.equal(expectError(res2, 401).error, "Invalid API key");
  });

  it("answers 401 Invalid API key for a malformed Authorization header, even when it holds a valid key", async () => {
    const { key } = await t().newCompany();
    for (const authorization of [`Basic ${key}`, `Token ${key}`, "Bearer", "Bearer ", `Bearer ${key} extra`, key]) {
      const res = await t().call({ method: "GET", url: CUSTOMERS, headers: { authorization } });
      assert.equal(expectError(res, 401).error, "Invalid API key", `Authorization: ${authorization}`);
    }
  });

  it("answers 401 Invalid API key for a very long key instead of failing", async () => {
    const res = await t().call({ method: "GET", url: CUSTOMERS, key: "k".repeat(5000) });
    assert.equal(expectError(res, 401).error, "Invalid API key");
  });

  it("rejects a key with 401 Invalid API key as soon as it is revoked through the service", async () => {
    const { companyId } = await t().newCompany();
    const created = await t().app.services.access.createApiKey(companyId, { name: "to revoke" });
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: created.key })).statusCode, 200);
    await t().app.services.access.revokeApiKey(created.id);
    const res = await t().call({ method: "GET", url: CUSTOMERS, key: created.key });
    assert.equal(expectError(res, 401).error, "Invalid API key");
  });

  it("rejects a key with 401 Invalid API key once it is revoked through the admin API, and other keys keep working", async () => {
    const { companyId, key: otherKey } = await t().newCompany();
    const created = await t().app.services.access.createApiKey(companyId, {});
    // Used once first: an embedded service remembers the keys it has seen, and must forget a revoked one.
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: created.key })).statusCode, 200);
    const revoke = await t().call({
      method: "DELETE",
      url: `/admin/v1/api-keys/${created.id}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(revoke.statusCode, 200);
    const res = await t().call({ method: "POST", url: CUSTOMERS, key: created.key, payload: { name: "After revoke" } });
    assert.equal(expectError(res, 401).error, "Invalid API key");
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: otherKey })).statusCode, 200);
    assert.deepEqual(await listCustomers(t(), otherKey), [], "the revoked key's write did not happen");
  });

  it("accepts a key until its expiry and answers 401 Invalid API key from the moment it expires", async () => {
    const { companyId } = await t().newCompany();
    const now = t().clock.now().getTime();
    const created = await t().app.services.access.createApiKey(companyId, { expiresAt: new Date(now + 60_000) });
    assert.equal(created.expires_at, new Date(now + 60_000).toISOString());
    t().clock.advance(59_999);
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: created.key })).statusCode, 200);
    t().clock.advance(1);
    const res = await t().call({ method: "GET", url: CUSTOMERS, key: created.key });
    assert.equal(expectError(res, 401).error, "Invalid API key");
  });

  it("refuses to create a key that is already expired", async () => {
    const { companyId } = await t().newCompany();
    await assert.rejects(
      t().app.services.access.createApiKey(companyId, { expiresAt: new Date(t().clock.now().getTime() - 1) }),
      (error: Error & { code?: string }) => error.code === "invalid_expires_at",
    );
  });

  it("lets a customers:read key list customers but answers 403 naming the scope when it creates one", async () => {
    const { companyId, key: fullKey } = await t().newCompany();
    const readKey = (await t().app.services.access.createApiKey(companyId, { scopes: ["customers:read"] })).key;
    await createCustomer(t(), fullKey, { name: "Existing" });

    const list = await t().call({ method: "GET", url: CUSTOMERS, key: readKey });
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data.length, 1);

    const res = await t().call({ method: "POST", url: CUSTOMERS, key: readKey, payload: { name: "Forbidden" } });
    const body = expectError(res, 403);
    assert.match(body.error, /customers:write/);
    assert.equal((await listCustomers(t(), fullKey)).length, 1, "the forbidden create wrote nothing");
  });

  it("lets a customers:write key create customers but answers 403 naming the scope when it lists them", async () => {
    const { companyId } = await t().newCompany();
    const writeKey = (await t().app.services.access.createApiKey(companyId, { scopes: ["customers:write"] })).key;
    await createCustomer(t(), writeKey, { name: "Written" });
    const res = await t().call({ method: "GET", url: CUSTOMERS, key: writeKey });
    assert.match(expectError(res, 403).error, /customers:read/);
  });

  it("lets a key with only usage:write both create and list customers, as the spec says", async () => {
    const { companyId } = await t().newCompany();
    const usageKey = (await t().app.services.access.createApiKey(companyId, { scopes: ["usage:write"] })).key;
    const customer = await createCustomer(t(), usageKey, { name: "Usage writer's customer" });
    const list = await t().call({ method: "GET", url: CUSTOMERS, key: usageKey });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().data.map((c: { id: string }) => c.id),
      [customer.id],
    );
  });

  it("answers 403 on both customer endpoints for a key whose scopes are unrelated", async () => {
    const { companyId } = await t().newCompany();
    const key = (await t().app.services.access.createApiKey(companyId, { scopes: ["invoices:read", "usage:read"] }))
      .key;
    expectError(await t().call({ method: "GET", url: CUSTOMERS, key }), 403);
    expectError(await t().call({ method: "POST", url: CUSTOMERS, key, payload: { name: "No" } }), 403);
  });

  it("does not accept the admin token as an API key", async () => {
    const res = await t().call({ method: "GET", url: CUSTOMERS, key: ADMIN_TOKEN });
    assert.equal(expectError(res, 401).error, "Invalid API key");
  });

  it("hides one company's customers from another company's keys", async () => {
    const a = await t().newCompany({ name: "Tenant A" });
    const b = await t().newCompany({ name: "Tenant B" });
    await createCustomer(t(), a.key, { name: "A's customer", external_id: "shared-ext" });
    await createCustomer(t(), a.key, { name: "A's other customer" });

    assert.deepEqual(await listCustomers(t(), b.key), []);
    assert.deepEqual(await listCustomers(t(), b.key, "external_id=shared-ext"), []);
    assert.equal((await listCustomers(t(), a.key)).length, 2);
  });

  it("lets two companies use the same external_id independently", async () => {
    const a = await t().newCompany();
    const b = await t().newCompany();
    const fromA = await createCustomer(t(), a.key, { name: "A", external_id: "cust-42" });
    const fromB = await createCustomer(t(), b.key, { name: "B", external_id: "cust-42" });
    assert.notEqual(fromA.id, fromB.id);
    assert.deepEqual(
      (await listCustomers(t(), a.key, "external_id=cust-42")).map((c) => c.id),
      [fromA.id],
    );
    assert.deepEqual(
      (await listCustomers(t(), b.key, "external_id=cust-42")).map((c) => c.id),
      [fromB.id],
    );
  });

  it("answers 400 invalid_cursor when a company pages with another company's customer id", async () => {
    const a = await t().newCompany();
    const b = await t().newCompany();
    const aCustomer = await createCustomer(t(), a.key, { name: "Secret" });
    await createCustomer(t(), b.key, { name: "B's own" });
    const res = await t().call({ method: "GET", url: `${CUSTOMERS}?starting_after=${aCustomer.id}`, key: b.key });
    expectError(res, 400, "invalid_cursor");
    // A's own key may use the same cursor.
    const own = await t().call({ method: "GET", url: `${CUSTOMERS}?starting_after=${aCustomer.id}`, key: a.key });
    assert.equal(own.statusCode, 200);
  });
});
