import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/database.js";
import { openDatabase } from "../../src/db/open-database.js";
import {
  ADMIN_TOKEN,
  createMigratedTestDatabase,
  createTestDatabase,
  describeEachEngine,
  postgresSkip,
  testConfig,
  type TestApp,
} from "../support/harness.js";
import { ALL_SCOPE_NAMES, listCustomers, UUID_RE } from "../support/api.js";
import { expectError } from "../support/assertions.js";

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CUSTOMERS = "/v1/billing/customers";

async function adminCreateCompany(
  t: TestApp,
  name = `Co ${randomBytes(3).toString("hex")}`,
): Promise<{ id: string; name: string }> {
  const res = await t.call({ method: "POST", url: "/admin/v1/companies", headers: admin, payload: { name } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function adminCreateKey(t: TestApp, companyId: string, payload?: Record<string, unknown>) {
  return t.call({
    method: "POST",
    url: `/admin/v1/companies/${companyId}/api-keys`,
    headers: admin,
    ...(payload === undefined ? {} : { payload }),
  });
}

async function companyCount(db: Database, name?: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    name === undefined
      ? "SELECT count(*)::int AS n FROM companies"
      : "SELECT count(*)::int AS n FROM companies WHERE name = $1",
    name === undefined ? [] : [name],
  );
  return rows[0]!.n;
}

describeEachEngine("admin API", (t, engine) => {
  it("creates a company with 201 and the documented shape", async () => {
    const res = await t().call({
      method: "POST",
      url: "/admin/v1/companies",
      headers: admin,
      payload: { name: "  Umbrella  " },
    });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.match(body.id, UUID_RE);
    assert.deepEqual(body, {
      object: "company",
      id: body.id,
      name: "Umbrella",
      created_at: t().clock.now().toISOString(),
    });
  });

  for (const [what, payload] of [
    ["without a name", {}],
    ["with an empty name", { name: "" }],
    ["with a whitespace-only name", { name: "   " }],
    ["with a name that is not a string", { name: 5 }],
    ["with a name containing a NUL character", { name: "Bad\u0000Co" }],
    ["with an unknown field", { name: "Fine", plan: "gold" }],
  ] as const) {
    it(`answers 400 to a company ${what} and creates nothing`, async () => {
      const before = await companyCount(t().app.db);
      const res = await t().call({ method: "POST", url: "/admin/v1/companies", headers: admin, payload });
      expectError(res, 400);
      assert.equal(await companyCount(t().app.db), before);
    });
  }

  it("answers 415 to a company body that is not JSON", async () => {
    const res = await t().call({
      method: "POST",
      url: "/admin/v1/companies",
      headers: { ...admin, "content-type": "text/plain" },
      payload: '{"name":"Plain"}',
    });
    expectError(res, 415, "unsupported_media_type");
  });

  it("creates a full-access API key with 201, shows the key, and the key works for that company only", async () => {
    const company = await adminCreateCompany(t());
    const other = await adminCreateCompany(t());
    const res = await adminCreateKey(t(), company.id, {});
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.object, "api_key");
    assert.match(body.id, UUID_RE);
    assert.equal(typeof body.key, "string");
    assert.ok(body.key.length >= 32, "the key is long enough to be unguessable");
    assert.equal(body.name, null);
    assert.deepEqual([...body.scopes].sort(), [...ALL_SCOPE_NAMES].sort());
    assert.equal(body.created_at, t().clock.now().toISOString());
    assert.equal(body.expires_at, null);

    const created = await t().call({
      method: "POST",
      url: CUSTOMERS,
      key: body.key,
      payload: { name: "Admin-made customer" },
    });
    assert.equal(created.statusCode, 201);
    const otherKey = (await adminCreateKey(t(), other.id, {})).json().key;
    assert.deepEqual(await listCustomers(t(), otherKey), [], "the new key wrote into its own company");
    assert.equal((await listCustomers(t(), body.key)).length, 1);
  });

  it("creates a key when the body is left out entirely", async () => {
    const company = await adminCreateCompany(t());
    const res = await adminCreateKey(t(), company.id);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([...res.json().scopes].sort(), [...ALL_SCOPE_NAMES].sort());
  });

  it("gives every new key a different secret", async () => {
    const company = await adminCreateCompany(t());
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++) keys.add((await adminCreateKey(t(), company.id, {})).json().key);
    assert.equal(keys.size, 5);
  });

  it("creates a key limited to the given scopes, with its name, and enforces them", async () => {
    const company = await adminCreateCompany(t());
    const res = await adminCreateKey(t(), company.id, { name: "reporting", scopes: ["customers:read"] });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.name, "reporting");
    assert.deepEqual(body.scopes, ["customers:read"]);
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: body.key })).statusCode, 200);
    const denied = await t().call({ method: "POST", url: CUSTOMERS, key: body.key, payload: { name: "Nope" } });
    expectError(denied, 403);
  });

  it("creates a key with an expiry that stops working once the expiry passes", async () => {
    const company = await adminCreateCompany(t());
    const expiresAt = new Date(t().clock.now().getTime() + 3_600_000).toISOString();
    const res = await adminCreateKey(t(), company.id, { expires_at: expiresAt });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().expires_at, expiresAt);
    const key = res.json().key;
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key })).statusCode, 200);
    t().clock.advance(3_600_000);
    assert.equal(expectError(await t().call({ method: "GET", url: CUSTOMERS, key }), 401).error, "Invalid API key");
  });

  for (const [what, payload, code] of [
    ["an unknown scope name", { scopes: ["customers:read", "billing:everything"] }, "invalid_scope"],
    ["an empty scope list", { scopes: [] }, "invalid_scope"],
    ["scopes that are not a list", { scopes: "customers:read" }, "invalid_request"],
    ["an expiry in the past", { expires_at: "2000-01-01T00:00:00Z" }, "invalid_expires_at"],
    ["an expiry that is not a date", { expires_at: "next tuesday" }, "invalid_request"],
    ["an unknown field", { admin: true }, "invalid_request"],
  ] as const) {
    it(`answers 400 to an API key request with ${what} and creates no key`, async () => {
      const company = await adminCreateCompany(t());
      const res = await adminCreateKey(t(), company.id, payload as Record<string, unknown>);
      const body = expectError(res, 400, code);
      if (code === "invalid_scope" && (payload as { scopes: readonly string[] }).scopes.length > 0) {
        assert.match(body.error, /billing:everything/);
      }
      const { rows } = await t().app.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM api_keys WHERE company_id = $1",
        [company.id],
      );
      assert.equal(rows[0]!.n, 0);
    });
  }

  it("answers 404 Not found when creating a key for a company that does not exist", async () => {
    for (const id of [randomUUID(), "not-a-uuid"]) {
      const res = await adminCreateKey(t(), id, {});
      assert.equal(expectError(res, 404).error, "Not found");
    }
  });

  it("stores keys only hashed: no column of the api_keys table holds the key", async () => {
    const company = await adminCreateCompany(t());
    const key: string = (await adminCreateKey(t(), company.id, {})).json().key;
    const { rows } = await t().app.db.query<Record<string, unknown>>("SELECT * FROM api_keys WHERE company_id = $1", [
      company.id,
    ]);
    assert.equal(rows.length, 1);
    for (const [column, value] of Object.entries(rows[0]!)) {
      const text = Buffer.isBuffer(value)
        ? value.toString("latin1") + value.toString("hex") + value.toString("base64")
        : JSON.stringify(value);
      assert.ok(!text?.includes(key), `column ${column} holds the key`);
    }
  });

  it("revokes a key with 200; the key stops working at once and the answer does not show the key", async () => {
    const company = await adminCreateCompany(t());
    const created = (await adminCreateKey(t(), company.id, {})).json();
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: created.key })).statusCode, 200);
    const res = await t().call({ method: "DELETE", url: `/admin/v1/api-keys/${created.id}`, headers: admin });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, created.id);
    assert.equal(res.json().key, undefined, "the key is shown only at creation");
    assert.ok(!res.body.includes(created.key));
    assert.equal(
      expectError(await t().call({ method: "GET", url: CUSTOMERS, key: created.key }), 401).error,
      "Invalid API key",
    );
    assert.equal(
      expectError(await t().call({ method: "GET", url: CUSTOMERS, headers: { "x-api-key": created.key } }), 401).error,
      "Invalid API key",
    );
  });

  it("answers 200 to revoking an already revoked key, and the key stays revoked", async () => {
    const company = await adminCreateCompany(t());
    const created = (await adminCreateKey(t(), company.id, {})).json();
    const first = await t().call({ method: "DELETE", url: `/admin/v1/api-keys/${created.id}`, headers: admin });
    t().clock.advance(1000);
    const second = await t().call({ method: "DELETE", url: `/admin/v1/api-keys/${created.id}`, headers: admin });
    assert.equal(second.statusCode, 200);
    assert.equal(second.json().revoked_at, first.json().revoked_at, "the first revocation time is kept");
    assert.equal((await t().call({ method: "GET", url: CUSTOMERS, key: created.key })).statusCode, 401);
  });

  it("answers 404 Not found when revoking a key that does not exist", async () => {
    for (const id of [randomUUID(), "nope"]) {
      const res = await t().call({ method: "DELETE", url: `/admin/v1/api-keys/${id}`, headers: admin });
      assert.equal(expectError(res, 404).error, "Not found");
    }
  });

  it("creates a dashboard user with 201 and exactly object, id and email", async () => {
    const company = await adminCreateCompany(t());
    const email = `Owner.${randomBytes(3).toString("hex")}@Example.com`;
    const res = await t().call({
      method: "POST",
      url: `/admin/v1/companies/${company.id}/users`,
      headers: admin,
      payload: { email, password: "correct horse battery staple" },
    });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.match(body.id, UUID_RE);
    assert.deepEqual(body, { object: "user", id: body.id, email: email.toLowerCase() });
    assert.ok(!res.body.includes("correct horse"), "the password is not echoed");
  });

  it("stores the user's password only as a hash that verifies", async () => {
    const company = await adminCreateCompany(t());
    const email = `hash-${randomBytes(3).toString("hex")}@example.com`;
    await t().call({
      method: "POST",
      url: `/admin/v1/companies/${company.id}/users`,
      headers: admin,
      payload: { email, password: "s3cret-passw0rd" },
    });
    const { rows } = await t().app.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM users WHERE email = $1",
      [email],
    );
    assert.equal(rows.length, 1);
    assert.ok(!rows[0]!.password_hash.includes("s3cret-passw0rd"));
    assert.ok(await t().app.services.access.verifyUserPassword(email, "s3cret-passw0rd"));
    assert.equal(await t().app.services.access.verifyUserPassword(email, "wrong-password"), undefined);
  });

  it("answers 409 to a second user with the same email, in any letter case and in any company", async () => {
    const company = await adminCreateCompany(t());
    const other = await adminCreateCompany(t());
    const email = `dup-${randomBytes(3).toString("hex")}@example.com`;
    const first = await t().call({
      method: "POST",
      url: `/admin/v1/companies/${company.id}/users`,
      headers: admin,
      payload: { email, password: "password-one" },
    });
    assert.equal(first.statusCode, 201);
    for (const [companyId, again] of [
      [company.id, email],
      [company.id, email.toUpperCase()],
      [other.id, email],
    ] as const) {
      const res = await t().call({
        method: "POST",
        url: `/admin/v1/companies/${companyId}/users`,
        headers: admin,
        payload: { email: again, password: "password-two" },
      });
      expectError(res, 409);
    }
    assert.ok(
      await t().app.services.access.verifyUserPassword(email, "password-one"),
      "the first user's password is unchanged",
    );
  });

  for (const [what, payload] of [
    ["a malformed email", { email: "not-an-email", password: "long enough password" }],
    ["a missing password", { email: "x@example.com" }],
    ["a password shorter than 8 characters", { email: "short@example.com", password: "1234567" }],
    ["a missing email", { password: "long enough password" }],
  ] as const) {
    it(`answers 400 to a user with ${what}`, async () => {
      const company = await adminCreateCompany(t());
      const res = await t().call({
        method: "POST",
        url: `/admin/v1/companies/${company.id}/users`,
        headers: admin,
        payload,
      });
      expectError(res, 400);
    });
  }

  it("answers 404 Not found when adding a user to a company that does not exist", async () => {
    const res = await t().call({
      method: "POST",
      url: `/admin/v1/companies/${randomUUID()}/users`,
      headers: admin,
      payload: { email: `ghost-${randomBytes(3).toString("hex")}@example.com`, password: "long enough password" },
    });
    assert.equal(expectError(res, 404).error, "Not found");
  });

  it("answers 401 on every admin path without the admin token, with a wrong one, or with an API key, and changes nothing", async () => {
    const company = await adminCreateCompany(t());
    const { key: apiKey } = await t().newCompany();
    const someKey = (await adminCreateKey(t(), company.id, {})).json();
    const companiesBefore = await companyCount(t().app.db);
    for (const headers of [
      {},
      { authorization: "Bearer wrong-token" },
      { authorization: `Basic ${ADMIN_TOKEN}` },
      { authorization: ADMIN_TOKEN },
      { authorization: `Bearer ${ADMIN_TOKEN}x` },
      { authorization: `Bearer ${apiKey}` },
      { "x-api-key": ADMIN_TOKEN },
    ]) {
      for (const request of [
        { method: "POST" as const, url: "/admin/v1/companies", payload: { name: "Intruder" } },
        { method: "POST" as const, url: `/admin/v1/companies/${company.id}/api-keys`, payload: {} },
        { method: "DELETE" as const, url: `/admin/v1/api-keys/${someKey.id}` },
        {
          method: "POST" as const,
          url: `/admin/v1/companies/${company.id}/users`,
          payload: { email: "i@example.com", password: "intruder-password" },
        },
      ]) {
        const res = await t().call({ ...request, headers });
        expectError(res, 401);
      }
    }
    assert.equal(await companyCount(t().app.db), companiesBefore);
    assert.equal(
      (await t().call({ method: "GET", url: CUSTOMERS, key: someKey.key })).statusCode,
      200,
      "the key was not revoked",
    );
    const { rows } = await t().app.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE email = 'i@example.com'",
    );
    assert.equal(rows[0]!.n, 0);
  });

  it("answers 404 on every admin path when BILLING_ADMIN_TOKEN is unset", async () => {
    const database = await createMigratedTestDatabase(engine);
    const config = loadConfig({
      BILLING_DATA_DIR: "memory://",
      BILLING_PUBLIC_URL: "http://billing.test",
      LOG_LEVEL: "silent",
    });
    assert.equal(config.adminToken, undefined);
    const app = await createApp(config, { db: database.db });
    try {
      const company = await app.services.access.createCompany("Exists");
      for (const request of [
        { method: "POST" as const, url: "/admin/v1/companies", payload: { name: "X" } },
        { method: "POST" as const, url: `/admin/v1/companies/${company.id}/api-keys`, payload: {} },
        { method: "DELETE" as const, url: `/admin/v1/api-keys/${randomUUID()}` },
        {
          method: "POST" as const,
          url: `/admin/v1/companies/${company.id}/users`,
          payload: { email: "a@example.com", password: "long enough" },
        },
      ]) {
        for (const headers of [{}, admin, { authorization: "Bearer " }]) {
          const res = await app.http.inject({ ...request, headers });
          assert.equal(expectError(res, 404).error, "Not found", `${request.method} ${request.url}`);
        }
      }
      assert.equal(await companyCount(database.db), 1);
    } finally {
      await app.close();
      await database.drop();
    }
  });

  it("treats an empty BILLING_ADMIN_TOKEN as unset rather than as a token everybody knows", async () => {
    const database = await createMigratedTestDatabase(engine);
    const app = await createApp(testConfig({ BILLING_ADMIN_TOKEN: "" }), { db: database.db });
    try {
      const res = await app.http.inject({
        method: "POST",
        url: "/admin/v1/companies",
        headers: { authorization: "Bearer " },
        payload: { name: "X" },
      });
      assert.equal(res.statusCode, 404);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});

describeEachEngine("bootstrap company and key", (t) => {
  const bootstrapEnv = () => ({
    BILLING_BOOTSTRAP_COMPANY: `Bootstrap ${randomBytes(4).toString("hex")}`,
    BILLING_BOOTSTRAP_API_KEY: `sk_test_bootstrap_${randomBytes(16).toString("hex")}`,
  });

  async function start(env: Record<string, string>): Promise<App> {
    return createApp(testConfig(env), { db: t().app.db, clock: t().clock });
  }

  it("creates the company and the exact key once, even when the service starts twice", async () => {
    const env = bootstrapEnv();
    const first = await start(env);
    await first.close();
    const second = await start(env);
    try {
      assert.equal(await companyCount(t().app.db, env.BILLING_BOOTSTRAP_COMPANY), 1);
      const { rows } = await t().app.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM api_keys k JOIN companies c ON c.id = k.company_id WHERE c.name = $1",
        [env.BILLING_BOOTSTRAP_COMPANY],
      );
      assert.equal(rows[0]!.n, 1);
      const key = env.BILLING_BOOTSTRAP_API_KEY;
      const created = await second.http.inject({
        method: "POST",
        url: CUSTOMERS,
        headers: { authorization: `Bearer ${key}` },
        payload: { name: "Boot customer" },
      });
      assert.equal(created.statusCode, 201, "the bootstrap key has full access");
      const list = await second.http.inject({ method: "GET", url: CUSTOMERS, headers: { "x-api-key": key } });
      assert.equal(list.statusCode, 200);
      assert.equal(list.json().data.length, 1);
    } finally {
      await second.close();
    }
  });

  it("adopts an existing company of that name instead of creating another", async () => {
    const env = bootstrapEnv();
    const existing = await t().app.services.access.createCompany(env.BILLING_BOOTSTRAP_COMPANY);
    const app = await start(env);
    try {
      assert.equal(await companyCount(t().app.db, env.BILLING_BOOTSTRAP_COMPANY), 1);
      const { rows } = await t().app.db.query<{ company_id: string }>(
        "SELECT company_id FROM api_keys WHERE name = 'bootstrap' AND company_id = $1",
        [existing.id],
      );
      assert.equal(rows.length, 1);
    } finally {
      await app.close();
    }
  });

  it("refuses to start when the bootstrap key already belongs to another company", async () => {
    const env = bootstrapEnv();
    const first = await start(env);
    await first.close();
    await assert.rejects(
      start({ ...env, BILLING_BOOTSTRAP_COMPANY: `${env.BILLING_BOOTSTRAP_COMPANY} renamed` }),
      /another company/,
    );
    assert.equal(
      await companyCount(t().app.db, `${env.BILLING_BOOTSTRAP_COMPANY} renamed`),
      0,
      "nothing was left half-made",
    );
  });

  it("refuses a configuration that sets only one of the two bootstrap variables", () => {
    assert.throws(() => testConfig({ BILLING_BOOTSTRAP_COMPANY: "Only the name" }));
    assert.throws(() => testConfig({ BILLING_BOOTSTRAP_API_KEY: "only-the-key" }));
  });

  it("makes the dashboard user of the bootstrap company once, who signs in to the company the key reaches", async () => {
    const env = {
      ...bootstrapEnv(),
      BILLING_BOOTSTRAP_EMAIL: `Owner-${randomBytes(3).toString("hex")}@Example.com`,
      BILLING_BOOTSTRAP_PASSWORD: "first password",
    };
    const first = await start(env);
    await first.close();
    const app = await start(env);
    try {
      const users = await t().app.db.query<{ company: string }>(
        "SELECT c.name AS company FROM users u JOIN companies c ON c.id = u.company_id WHERE u.email = $1",
        [env.BILLING_BOOTSTRAP_EMAIL.toLowerCase()],
      );
      assert.deepEqual(
        users.rows.map((r) => r.company),
        [env.BILLING_BOOTSTRAP_COMPANY],
        "one user, of the bootstrap company",
      );
      const user = await app.services.access.verifyUserPassword(env.BILLING_BOOTSTRAP_EMAIL, "first password");
      assert.ok(user, "the configured password signs in");
      const key = await app.services.access.authenticate(env.BILLING_BOOTSTRAP_API_KEY);
      assert.equal(user.company_id, key.companyId, "the dashboard shows the company the key reaches");
    } finally {
      await app.close();
    }
    // A new password in the environment is the password from the next start on, and ends the old sessions.
    const user = await t().app.services.access.verifyUserPassword(env.BILLING_BOOTSTRAP_EMAIL, "first password");
    const session = await t().app.services.access.startSession(user!);
    assert.ok(await t().app.services.access.resumeSession(session.token));
    const changed = await start({ ...env, BILLING_BOOTSTRAP_PASSWORD: "second password" });
    try {
      assert.ok(await changed.services.access.verifyUserPassword(env.BILLING_BOOTSTRAP_EMAIL, "second password"));
      assert.equal(
        await changed.services.access.verifyUserPassword(env.BILLING_BOOTSTRAP_EMAIL, "first password"),
        undefined,
      );
      assert.equal(
        await changed.services.access.resumeSession(session.token),
        undefined,
        "the session of the old password is over",
      );
    } finally {
      await changed.close();
    }
  });

  it("refuses to start when the bootstrap email signs in to another company, and bootstrap user settings without their company", async () => {
    const other = await t().app.services.access.createCompany(`Other ${randomBytes(3).toString("hex")}`);
    const email = `taken-${randomBytes(3).toString("hex")}@example.com`;
    await t().app.services.access.createUser(other.id, email, "someone else's");
    const env = { ...bootstrapEnv(), BILLING_BOOTSTRAP_EMAIL: email, BILLING_BOOTSTRAP_PASSWORD: "long enough" };
    await assert.rejects(start(env), /BILLING_BOOTSTRAP_EMAIL already signs in to another company/);
    assert.equal(await companyCount(t().app.db, env.BILLING_BOOTSTRAP_COMPANY), 0, "nothing was left half-made");
    assert.throws(
      () => testConfig({ ...bootstrapEnv(), BILLING_BOOTSTRAP_EMAIL: "a@example.com" }),
      /BILLING_BOOTSTRAP_PASSWORD/,
    );
    assert.throws(
      () => testConfig({ BILLING_BOOTSTRAP_EMAIL: "a@example.com", BILLING_BOOTSTRAP_PASSWORD: "long enough" }),
      /need BILLING_BOOTSTRAP_COMPANY/,
    );
    assert.throws(
      () =>
        testConfig({
          ...bootstrapEnv(),
          BILLING_BOOTSTRAP_EMAIL: "a@example.com",
          BILLING_BOOTSTRAP_PASSWORD: "short",
        }),
      /8 to 1024/,
    );
    await assert.rejects(
      start({ ...bootstrapEnv(), BILLING_BOOTSTRAP_EMAIL: "not an email", BILLING_BOOTSTRAP_PASSWORD: "long enough" }),
      /email/,
    );
  });
});

describe("bootstrap under concurrent start-up [postgres]", {
  skip: postgresSkip(),
}, () => {
  it("gives one company, one key and one dashboard user when three processes start at once on a fresh database", async () => {
    const database = await createTestDatabase("postgres");
    const extra = [await openDatabase(database.storage), await openDatabase(database.storage)];
    const env = {
      BILLING_BOOTSTRAP_COMPANY: "Concurrent Bootstrap",
      BILLING_BOOTSTRAP_API_KEY: `sk_test_concurrent_${randomBytes(16).toString("hex")}`,
      BILLING_BOOTSTRAP_EMAIL: "owner@concurrent.example",
      BILLING_BOOTSTRAP_PASSWORD: "a long passphrase",
    };
    const apps: App[] = [];
    try {
      const started = await Promise.allSettled([database.db, ...extra].map((db) => createApp(testConfig(env), { db })));
      for (const result of started) if (result.status === "fulfilled") apps.push(result.value);
      const failures = started.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
      assert.deepEqual(failures, [], "every process started");
      assert.equal(await companyCount(database.db), 1);
      const { rows } = await database.db.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys");
      assert.equal(rows[0]!.n, 1);
      const users = await database.db.query<{ n: number }>("SELECT count(*)::int AS n FROM users");
      assert.equal(users.rows[0]!.n, 1);
      assert.ok(
        await apps[0]!.services.access.verifyUserPassword(env.BILLING_BOOTSTRAP_EMAIL, env.BILLING_BOOTSTRAP_PASSWORD),
      );
      for (const app of apps) {
        const res = await app.http.inject({
          method: "GET",
          url: CUSTOMERS,
          headers: { authorization: `Bearer ${env.BILLING_BOOTSTRAP_API_KEY}` },
        });
        assert.equal(res.statusCode, 200);
      }
    } finally {
      for (const app of apps) await app.close();
      for (const db of extra) await db.close();
      await database.drop();
    }
  });
});
