/**
 * Failed authentications per client address (BILLING_AUTH_FAILURES, default 60 a minute): bad API keys, a
 * wrong admin token and wrong passwords on the dashboard and OAuth sign-in forms share one budget per
 * address; past it, 429 `too_many_failed_attempts` with Retry-After. A valid API key or admin token is never
 * refused; a password is refused unchecked. An IPv4 address's failures also count against its /24 network, with
 * 4 times the budget. Each test uses addresses of its own, each in a /24 of its own (inject's remoteAddress),
 * and runs with the default budget, with BILLING_RATE_LIMIT=off as every suite. Behind a trusted proxy
 * (BILLING_TRUSTED_PROXIES) the client is the right-most address of X-Forwarded-For that is not a proxy.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { ADMIN_TOKEN, describeEachEngine, type TestApp } from "../support/harness.js";
import { csrfIn, formBody } from "../support/dashboard-client.js";
import { authorize, newUser, pkce, REDIRECT_URI, registerClient, requestIdOf } from "../support/mcp-client.js";

const BUDGET = 60;
/** An IPv4 /24 network's budget: 4 times an address's (docs/operations.md, "Failed authentication"). */
const NETWORK_BUDGET = 4 * BUDGET;
const CUSTOMERS = "/v1/billing/customers";
let lastNetwork = 0;
/** The first address of a /24 network no other test uses (198.18.0.0/15, set aside for tests). */
const newAddress = () => newNetwork(1);
/** A /24 network no other test uses: its address `host`. */
const newNetwork = (host: number) => `198.${18 + (++lastNetwork >> 8)}.${lastNetwork & 255}.${host}`;
const badKey = () => `sk_test_wrong_${randomBytes(12).toString("hex")}`;

function apiCall(t: TestApp, address: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.call({ method: "GET", url: CUSTOMERS, remoteAddress: address, headers });
}

function adminCall(t: TestApp, address: string, token: string | undefined): Promise<LightMyRequestResponse> {
  return t.call({
    method: "POST",
    url: "/admin/v1/companies",
    remoteAddress: address,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    payload: { name: `Throttle ${randomBytes(3).toString("hex")}` },
  });
}

function assertThrottled(res: LightMyRequestResponse, seconds = 60): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.headers["retry-after"], String(seconds));
  if (String(res.headers["content-type"]).startsWith("application/json")) {
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ["code", "error"]);
    assert.equal(body.code, "too_many_failed_attempts");
    assert.match(body.error, /Too many failed authentication attempts/);
  } else {
    assert.match(res.body, /Too many failed sign-in attempts from this address\. Try again in \d+ s\./);
  }
}

/** Spends `count` of the address's failures with unknown API keys, each answered 401. */
async function failWithKeys(t: TestApp, address: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await apiCall(t, address, { authorization: `Bearer ${badKey()}` });
    assert.equal(res.statusCode, 401, `failure ${i + 1}: ${res.body}`);
    assert.equal(res.json().code, "invalid_api_key");
  }
}

/** billing_auth_throttled_total{surface} as /metrics shows it. */
async function throttledCount(t: TestApp, surface: string): Promise<number> {
  const res = await t.call({ method: "GET", url: "/metrics" });
  const match = new RegExp(`^billing_auth_throttled_total\\{surface="${surface}"\\} (\\d+)$`, "m").exec(res.body);
  return match ? Number(match[1]) : 0;
}

/** The dashboard sign-in form as a browser at `address` holds it: posts email and password. */
async function dashboardSignIn(t: TestApp, address: string) {
  const page = await t.call({ method: "GET", url: "/login", remoteAddress: address });
  const cookie = String(([] as string[]).concat(page.headers["set-cookie"] as string[])[0]).split(";")[0]!;
  const csrf = csrfIn(page.body)!;
  return (email: string, password: string) =>
    t.call({
      method: "POST",
      url: "/login",
      remoteAddress: address,
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      payload: formBody({ email, password, _csrf: csrf }),
    });
}

/** An OAuth authorization waiting at its sign-in page; posts email and password from `address` (with `headers`). */
async function oauthSignIn(t: TestApp) {
  const clientId = await registerClient(t);
  const page = await authorize(t, {
    clientId,
    challenge: pkce().challenge,
    method: "S256",
    redirectUri: REDIRECT_URI,
    scope: "read:invoices",
  });
  assert.equal(page.statusCode, 200, page.body);
  const requestId = requestIdOf(page.body);
  return (address: string, email: string, password: string, headers: Record<string, string> = {}) =>
    t.call({
      method: "POST",
      url: "/oauth/login",
      remoteAddress: address,
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      payload: new URLSearchParams({ request_id: requestId, email, password }).toString(),
    });
}

describeEachEngine("failed authentication throttle", (t) => {
  it(`answers bad API keys 401 for ${BUDGET} failures a minute, then 429 too_many_failed_attempts with Retry-After`, async () => {
    const address = newAddress();
    const { companyId } = await t().newCompany();
    const revoked = await t().app.services.access.createApiKey(companyId, {});
    await t().app.services.access.revokeApiKey(revoked.id);
    const kinds: Record<string, string>[] = [
      { authorization: `Bearer ${revoked.key}` },
      { authorization: "Token not-a-bearer-header" },
      { "x-api-key": badKey() },
      { authorization: `Bearer ${"k".repeat(600)}` },
    ];
    for (const headers of kinds) {
      const res = await apiCall(t(), address, headers);
      assert.equal(res.statusCode, 401, `${JSON.stringify(headers).slice(0, 60)}: ${res.body}`);
      assert.equal(res.json().code, "invalid_api_key");
    }
    await failWithKeys(t(), address, BUDGET - kinds.length);
    const before = await throttledCount(t(), "api");
    assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }));
    assertThrottled(await apiCall(t(), address, { authorization: "Token malformed" }));
    assertThrottled(await apiCall(t(), address, { "x-api-key": revoked.key }));
    assert.equal(await throttledCount(t(), "api"), before + 3);
  });

  it("lets a valid key through from the throttled address itself, and leaves other addresses alone", async () => {
    const throttled = newAddress();
    const other = newAddress();
    const { key } = await t().newCompany();
    await failWithKeys(t(), throttled, BUDGET);
    assertThrottled(await apiCall(t(), throttled, { authorization: `Bearer ${badKey()}` }));
    for (const headers of [{ authorization: `Bearer ${key}` }, { "x-api-key": key }] as Record<string, string>[]) {
      const res = await apiCall(t(), throttled, headers);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers["retry-after"], undefined);
    }
    assert.equal(
      (
        await t().call({
          method: "POST",
          url: CUSTOMERS,
          remoteAddress: throttled,
          key,
          payload: { name: "Still served" },
        })
      ).statusCode,
      201,
    );
    assert.equal((await apiCall(t(), other, { authorization: `Bearer ${key}` })).statusCode, 200);
    await failWithKeys(t(), other, 1);
    assertThrottled(await apiCall(t(), throttled, { authorization: `Bearer ${badKey()}` }));
  });

  it("never counts a request that carries no credential at all", async () => {
    const address = newAddress();
    for (let i = 0; i < BUDGET * 2; i++) {
      const headers: Record<string, string> =
        i % 3 === 0 ? {} : i % 3 === 1 ? { authorization: "   " } : { "x-api-key": "" };
      const res = await apiCall(t(), address, headers);
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.json().code, "missing_api_key");
    }
    for (let i = 0; i < BUDGET * 2; i++)
      assert.equal((await adminCall(t(), address, undefined)).json().code, "missing_admin_token");
    await failWithKeys(t(), address, BUDGET);
    assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }));
    const missing = await apiCall(t(), address);
    assert.equal(missing.statusCode, 401, "a throttled address without a key is told the key is missing");
    assert.equal(missing.json().code, "missing_api_key");
  });

  it("forgets an address's failures once its minute is over", async () => {
    const address = newAddress();
    await failWithKeys(t(), address, BUDGET);
    t().clock.advance(59_000);
    assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }), 1);
    t().clock.advance(1_000);
    await failWithKeys(t(), address, BUDGET);
    assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }), 60);
  });

  it("answers a wrong admin token 401, then 429 once the budget is spent; the right token still works", async () => {
    const address = newAddress();
    for (let i = 0; i < BUDGET; i++) {
      const res = await adminCall(t(), address, `wrong-admin-token-${i}`);
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.json().code, "invalid_admin_token");
    }
    const before = await throttledCount(t(), "admin");
    assertThrottled(await adminCall(t(), address, "wrong-admin-token"));
    assertThrottled(await adminCall(t(), address, `${ADMIN_TOKEN}x`));
    assert.equal(await throttledCount(t(), "admin"), before + 2);
    assert.equal((await adminCall(t(), address, ADMIN_TOKEN)).statusCode, 201);
    assert.equal((await adminCall(t(), newAddress(), "wrong-admin-token")).statusCode, 401);
  });

  it("spends one budget per address over every surface: API keys and the admin token together", async () => {
    const address = newAddress();
    await failWithKeys(t(), address, BUDGET / 2);
    for (let i = 0; i < BUDGET / 2; i++)
      assert.equal((await adminCall(t(), address, "wrong-admin-token")).statusCode, 401);
    assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }));
    assertThrottled(await adminCall(t(), address, "wrong-admin-token"));
  });

  it("refuses dashboard sign-in with 429 after too many wrong passwords, before checking the password", async () => {
    const user = await newUser(t());
    const address = newAddress();
    const signIn = await dashboardSignIn(t(), address);
    // The user's email with a wrong password, then unknown emails: the per-email limit (10 at once) stays out of the way.
    for (let i = 0; i < BUDGET; i++) {
      const res = await signIn(
        i === 0 ? user.email : `nobody-${i}@example.com`,
        i === 1 ? user.password : `wrong-${i}`,
      );
      assert.equal(res.statusCode, 401, `failure ${i + 1}: ${res.body.slice(0, 200)}`);
      assert.match(res.body, /The email or the password is wrong/);
    }
    const before = await throttledCount(t(), "dashboard");
    const refused = await signIn(`nobody@example.com`, "wrong");
    assertThrottled(refused);
    assert.match(refused.body, /name="_csrf"/, "the form is shown again");
    const right = await signIn(user.email, user.password);
    assertThrottled(right);
    assert.doesNotMatch(String(right.headers["set-cookie"] ?? ""), /billing_session/, "no session");
    assert.equal(await throttledCount(t(), "dashboard"), before + 2);
    const elsewhere = await (await dashboardSignIn(t(), newAddress()))(user.email, user.password);
    assert.equal(elsewhere.statusCode, 303, elsewhere.body);
    t().clock.advance(60_000);
    assert.equal((await signIn(user.email, user.password)).statusCode, 303, "the minute is over");
  });

  it("refuses OAuth sign-in (/oauth/login) with 429 after too many wrong passwords, and shows the form again", async () => {
    const user = await newUser(t());
    const address = newAddress();
    const signIn = await oauthSignIn(t());
    for (let i = 0; i < BUDGET; i++) {
      const res = await signIn(address, i % 2 === 0 ? user.email : `nobody-${i}@example.com`, `wrong-${i}`);
      assert.equal(res.statusCode, 401, `failure ${i + 1}: ${res.body.slice(0, 200)}`);
      assert.match(res.body, /Wrong email or password/);
    }
    const before = await throttledCount(t(), "oauth");
    const refused = await signIn(address, user.email, "wrong");
    assertThrottled(refused);
    assert.match(refused.body, /action="\/oauth\/login"/);
    assertThrottled(await signIn(address, user.email, user.password));
    assert.equal(await throttledCount(t(), "oauth"), before + 2);
    const elsewhere = await signIn(newAddress(), user.email, user.password);
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
    assert.match(elsewhere.body, /action="\/oauth\/consent"/);
  });
});

describeEachEngine(
  "failed authentication throttle by IPv4 /24 network, and X-Forwarded-For without a trusted proxy",
  (t) => {
    it(`throttles 20 addresses of one /24 once the network's ${NETWORK_BUDGET} failures are spent, though each stayed under its own ${BUDGET}`, async () => {
      // The tester's case: 20 addresses × 60 guesses were 1,200 guesses a minute unthrottled.
      const network = newNetwork(0).replace(/\.0$/, "");
      const addresses = Array.from({ length: 20 }, (_, i) => `${network}.${i + 1}`);
      const perAddress = NETWORK_BUDGET / addresses.length;
      assert.ok(perAddress < BUDGET);
      for (const address of addresses) await failWithKeys(t(), address, perAddress);
      for (const address of addresses)
        assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }));
      assertThrottled(await apiCall(t(), `${network}.200`, { authorization: `Bearer ${badKey()}` }), 60);
      assertThrottled(await adminCall(t(), `::ffff:${network}.201`, "wrong-admin-token"));
      await failWithKeys(t(), newAddress(), 1);
      const { key } = await t().newCompany();
      assert.equal(
        (await apiCall(t(), `${network}.7`, { authorization: `Bearer ${key}` })).statusCode,
        200,
        "a valid key from the network still works",
      );
      t().clock.advance(60_000);
      await failWithKeys(t(), `${network}.7`, 1);
    });

    it("ignores X-Forwarded-For from a peer that is no trusted proxy: the peer is the client", async () => {
      const peer = newAddress();
      for (let i = 0; i < BUDGET; i++) {
        const res = await apiCall(t(), peer, {
          authorization: `Bearer ${badKey()}`,
          "x-forwarded-for": `203.0.113.${i + 1}`,
        });
        assert.equal(res.statusCode, 401, `failure ${i + 1}: ${res.body}`);
      }
      assertThrottled(
        await apiCall(t(), peer, { authorization: `Bearer ${badKey()}`, "x-forwarded-for": "203.0.113.250" }),
      );
      assertThrottled(await apiCall(t(), peer, { authorization: `Bearer ${badKey()}` }));
      const other = newAddress();
      assert.equal(
        (await apiCall(t(), other, { authorization: `Bearer ${badKey()}`, "x-forwarded-for": peer })).statusCode,
        401,
        "naming a throttled address is no way in or out",
      );
    });
  },
);

const PROXY_BUDGET = 3;
describeEachEngine(
  "failed authentication throttle behind a trusted proxy (BILLING_TRUSTED_PROXIES)",
  (t) => {
    const proxy = "10.9.0.1";
    const innerProxy = "10.9.7.7";
    const via = (client: string, extra: Record<string, string> = {}) => ({ "x-forwarded-for": client, ...extra });

    it("counts each client named by the proxy's X-Forwarded-For on its own, not the proxy", async () => {
      const a = newAddress();
      const b = newAddress();
      for (let i = 0; i < PROXY_BUDGET; i++)
        assert.equal((await apiCall(t(), proxy, via(a, { authorization: `Bearer ${badKey()}` }))).statusCode, 401);
      assertThrottled(await apiCall(t(), proxy, via(a, { authorization: `Bearer ${badKey()}` })));
      assert.equal(
        (await apiCall(t(), proxy, via(b, { authorization: `Bearer ${badKey()}` }))).statusCode,
        401,
        "another client through the same proxy",
      );
      assert.equal(
        (await apiCall(t(), proxy, { authorization: `Bearer ${badKey()}` })).statusCode,
        401,
        "the proxy itself, without the header, is its own client",
      );
      // A client cannot get out by writing its own X-Forwarded-For: the proxy appends the address it saw, and that one counts.
      assertThrottled(await apiCall(t(), proxy, via(`${newAddress()}, ${a}`, { authorization: `Bearer ${badKey()}` })));
      // Through two proxies of ours, the right-most address that is not a proxy.
      assertThrottled(await apiCall(t(), proxy, via(`${a}, ${innerProxy}`, { authorization: `Bearer ${badKey()}` })));
      assertThrottled(await apiCall(t(), proxy, via(`::ffff:${a}`, { authorization: `Bearer ${badKey()}` })), 60);
    });

    it("counts the clients of one /24 behind the proxy together, with 4 times the budget", async () => {
      const network = newNetwork(0).replace(/\.0$/, "");
      for (let i = 1; i <= 4 * PROXY_BUDGET; i++)
        assert.equal(
          (await apiCall(t(), proxy, via(`${network}.${i}`, { authorization: `Bearer ${badKey()}` }))).statusCode,
          401,
        );
      assertThrottled(await apiCall(t(), proxy, via(`${network}.99`, { authorization: `Bearer ${badKey()}` })));
    });

    it("ignores X-Forwarded-For from a peer outside the trusted ranges", async () => {
      const peer = newAddress();
      for (let i = 0; i < PROXY_BUDGET; i++)
        assert.equal(
          (await apiCall(t(), peer, via(newAddress(), { authorization: `Bearer ${badKey()}` }))).statusCode,
          401,
        );
      assertThrottled(await apiCall(t(), peer, via(newAddress(), { authorization: `Bearer ${badKey()}` })));
    });

    it("gives the forwarded client to the OAuth sign-in page (the MCP surface) as well", async () => {
      const user = await newUser(t());
      const signIn = await oauthSignIn(t());
      const guesser = newAddress();
      for (let i = 0; i < PROXY_BUDGET; i++)
        assert.equal((await signIn(proxy, user.email, `wrong-${i}`, via(guesser))).statusCode, 401);
      assertThrottled(await signIn(proxy, user.email, user.password, via(guesser)));
      const colleague = await signIn(proxy, user.email, user.password, via(newAddress()));
      assert.equal(colleague.statusCode, 200, colleague.body);
      assert.match(colleague.body, /action="\/oauth\/consent"/);
    });
  },
  { env: { BILLING_TRUSTED_PROXIES: "10.9.0.0/16", BILLING_AUTH_FAILURES: String(PROXY_BUDGET) } },
);

describeEachEngine(
  "failed authentication throttle, BILLING_AUTH_FAILURES=off",
  (t) => {
    it("answers every bad key 401, however many", async () => {
      await failWithKeys(t(), newAddress(), BUDGET * 2);
    });
  },
  { env: { BILLING_AUTH_FAILURES: "off" } },
);

describeEachEngine(
  "failed authentication throttle, BILLING_AUTH_FAILURES=3",
  (t) => {
    it("allows the configured number of failures a minute", async () => {
      const address = newAddress();
      await failWithKeys(t(), address, 3);
      assertThrottled(await apiCall(t(), address, { authorization: `Bearer ${badKey()}` }));
    });
  },
  { env: { BILLING_AUTH_FAILURES: "3" } },
);
