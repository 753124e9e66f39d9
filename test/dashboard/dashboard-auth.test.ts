import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { alertOf, csrfIn, dashboardClient, fieldErrorOf, formBody, signUp } from "../support/dashboard-client.js";

const SESSION = "__Host-billing_session";
const ONE_FIELD = "One field needs your attention: see the message beside it.";

describeEachEngine("dashboard sign-up, sessions and CSRF", (t) => {
  it("signs a new company and its owner up, sets a secure HTTP-only SameSite session cookie and lands on the overview", async () => {
    const client = dashboardClient(t);
    const form = await client.get("/signup");
    assert.equal(form.statusCode, 200);
    assert.match(String(form.headers["content-type"]), /text\/html/);
    const response = await client.post("/signup", {
      company: "Acme Sign-up Ltd",
      email: "Owner@Acme.example",
      password: "long enough pw",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, "/");
    const cookie = ([] as string[])
      .concat(response.headers["set-cookie"] as string[])
      .find((c) => c.startsWith(`${SESSION}=`))!;
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; Secure/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    const keys = await client.get("/settings/api-keys");
    assert.equal(keys.statusCode, 200);
    assert.match(keys.body, /Acme Sign-up Ltd · owner@acme\.example/);
  });

  it("refuses a sign-up whose email is taken, and leaves no company behind", async () => {
    const { email } = await signUp(t);
    const client = dashboardClient(t);
    const form = await client.get("/signup");
    const before = await t().app.db.query<{ n: string }>("SELECT count(*) AS n FROM companies");
    const response = await client.post("/signup", {
      company: "Second Co",
      email,
      password: "another password",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(response.statusCode, 409);
    assert.equal(alertOf(response.body), ONE_FIELD);
    assert.equal(
      fieldErrorOf(response.body, "email"),
      "An account with this email already exists: log in instead, or use another email.",
    );
    assert.match(response.body, /value="Second Co"/);
    const after = await t().app.db.query<{ n: string }>("SELECT count(*) AS n FROM companies");
    assert.equal(after.rows[0]!.n, before.rows[0]!.n);
    assert.equal(client.cookies.has(SESSION), false);
  });

  it("refuses a sign-up with a short password, a bad email or no company, saying so beside the field, keeping what was typed but never the password", async () => {
    const client = dashboardClient(t);
    const form = await client.get("/signup");
    const before = await t().app.db.query<{ n: string }>("SELECT count(*) AS n FROM companies");
    const short = await client.post("/signup", {
      company: "Pw Co",
      email: "pw@short.example",
      password: "short",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(short.statusCode, 400);
    assert.equal(alertOf(short.body), ONE_FIELD);
    assert.equal(fieldErrorOf(short.body, "password"), "Too short: use at least 8 characters.");
    assert.equal(fieldErrorOf(short.body, "email"), undefined);
    assert.match(short.body, /value="pw@short\.example"/);
    assert.match(short.body, /value="Pw Co"/);
    assert.doesNotMatch(short.body, /value="short"/);
    const long = await client.post("/signup", {
      company: "Pw Co",
      email: "pw@long.example",
      password: "x".repeat(1025),
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(long.statusCode, 400);
    assert.equal(fieldErrorOf(long.body, "password"), "Too long: at most 1024 characters.");
    assert.doesNotMatch(long.body, /x{1025}/);
    const bad = await client.post("/signup", {
      company: "Pw Co",
      email: "not an email",
      password: "long enough pw",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(fieldErrorOf(bad.body, "email"), "Enter an email address such as billing@example.com.");
    assert.match(bad.body, /value="not an email"/);
    const noCompany = await client.post("/signup", {
      company: "  ",
      email: "pw@company.example",
      password: "long enough pw",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(noCompany.statusCode, 400);
    assert.equal(fieldErrorOf(noCompany.body, "company"), "This field is required.");
    const longCompany = await client.post("/signup", {
      company: "C".repeat(201),
      email: "pw@company.example",
      password: "long enough pw",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(longCompany.statusCode, 400);
    assert.equal(fieldErrorOf(longCompany.body, "company"), "Too long: at most 200 characters.");
    const after = await t().app.db.query<{ n: string }>("SELECT count(*) AS n FROM companies");
    assert.equal(after.rows[0]!.n, before.rows[0]!.n, "no company was made");
    assert.equal(client.cookies.has(SESSION), false);
  });

  it("logs in with email and password, and answers a wrong password with 401 and no session", async () => {
    const { email, password } = await signUp(t);
    const client = dashboardClient(t);
    const form = await client.get("/login");
    const wrong = await client.post("/login", { email, password: "not the password", _csrf: csrfIn(form.body)! });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /The email or the password is wrong/);
    // A banner only: nothing says which of the two was wrong.
    assert.doesNotMatch(wrong.body, /aria-invalid|field-error/);
    assert.equal(client.cookies.has(SESSION), false);
    const unknown = await client.post("/login", {
      email: "nobody@nowhere.example",
      password,
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(unknown.statusCode, 401);
    const right = await client.post("/login", { email: email.toUpperCase(), password, _csrf: csrfIn(form.body)! });
    assert.equal(right.statusCode, 303);
    assert.equal(client.cookies.has(SESSION), true);
    assert.equal((await client.get("/customers")).statusCode, 200);
  });

  it("refuses a login or sign-up form that does not carry the token of its own cookie (login CSRF)", async () => {
    const { email, password } = await signUp(t);
    const client = dashboardClient(t);
    await client.get("/login");
    const forged = await client.post("/login", { email, password, _csrf: "forged-token-forged-token" });
    assert.equal(forged.statusCode, 403);
    assert.equal(client.cookies.has(SESSION), false);
    const noCookie = await t().call({
      method: "POST",
      url: "/login",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: formBody({ email, password, _csrf: "whatever-token-123" }),
    });
    assert.equal(noCookie.statusCode, 403);
    assert.equal(noCookie.headers["set-cookie"]?.toString().includes(`${SESSION}=`), false);
  });

  it("sends a logged-out browser to the login page, and back to where it was going after login", async () => {
    const { email, password } = await signUp(t);
    const client = dashboardClient(t);
    for (const path of ["/", "/customers", "/settings/api-keys", "/invoices", "/webhooks", "/usage", "/contracts"]) {
      const response = await client.get(path);
      assert.equal(response.statusCode, 303, path);
      assert.match(String(response.headers.location), /^\/login/, path);
    }
    const redirect = await client.get("/customers?external_id=abc");
    assert.equal(redirect.headers.location, "/login?next=%2Fcustomers%3Fexternal_id%3Dabc");
    const form = await client.get(String(redirect.headers.location));
    assert.match(form.body, /name="next" value="\/customers\?external_id=abc"/);
    const login = await client.post("/login", {
      email,
      password,
      next: "/customers?external_id=abc",
      _csrf: csrfIn(form.body)!,
    });
    assert.equal(login.headers.location, "/customers?external_id=abc");
  });

  it("never redirects after login to another site", async () => {
    const { email, password } = await signUp(t);
    for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
      const client = dashboardClient(t);
      const form = await client.get("/login");
      const login = await client.post("/login", { email, password, next, _csrf: csrfIn(form.body)! });
      assert.equal(login.statusCode, 303);
      assert.equal(login.headers.location, "/", next);
    }
  });

  it("refuses a state-changing request without the session's CSRF token, and changes nothing", async () => {
    const { client } = await signUp(t);
    for (const csrf of [null, "not-the-token"]) {
      const response = await client.post("/customers", { name: "Forged Customer" }, { csrf });
      assert.equal(response.statusCode, 403);
      assert.match(response.body, /did not come with this session's form token/);
    }
    const anotherSession = await signUp(t);
    const foreignToken = await anotherSession.client.csrf();
    const crossed = await client.post("/settings/api-keys", { name: "Forged key" }, { csrf: foreignToken });
    assert.equal(crossed.statusCode, 403);
    const keys = await client.get("/settings/api-keys");
    assert.doesNotMatch(keys.body, /Forged/);
    const customers = await client.get("/customers");
    assert.doesNotMatch(customers.body, /Forged Customer/);
  });

  it("ends the session on logout: the old cookie no longer opens a page", async () => {
    const { client } = await signUp(t);
    const stolen = client.cookies.get(SESSION)!;
    const out = await client.post("/logout");
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, "/login");
    assert.equal(client.cookies.has(SESSION), false);
    const replay = await t().call({ method: "GET", url: "/customers", headers: { cookie: `${SESSION}=${stolen}` } });
    assert.equal(replay.statusCode, 303);
    assert.match(String(replay.headers.location), /^\/login/);
  });

  it("deletes a user's ended sessions when they sign in again, keeping live ones", async () => {
    const { client, email, password } = await signUp(t);
    const other = dashboardClient(t);
    const otherForm = await other.get("/login");
    assert.equal((await other.post("/login", { email, password, _csrf: csrfIn(otherForm.body)! })).statusCode, 303);
    await client.post("/logout");
    const sessionsOf = async () =>
      (
        await t().app.db.query<{ ended: boolean }>(
          "SELECT s.ended_at IS NOT NULL AS ended FROM dashboard_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1 ORDER BY s.created_at",
          [email],
        )
      ).rows.map((r) => r.ended);
    assert.deepEqual((await sessionsOf()).sort(), [false, true]);
    const again = dashboardClient(t);
    const form = await again.get("/login");
    assert.equal((await again.post("/login", { email, password, _csrf: csrfIn(form.body)! })).statusCode, 303);
    assert.deepEqual(await sessionsOf(), [false, false]);
    assert.equal((await other.get("/customers")).statusCode, 200, "the other live session still works");
  });

  it("expires a session after 12 hours", async () => {
    const { client } = await signUp(t);
    assert.equal((await client.get("/customers")).statusCode, 200);
    t().clock.advance(12 * 60 * 60 * 1000 + 1000);
    try {
      const response = await client.get("/customers");
      assert.equal(response.statusCode, 303);
    } finally {
      t().clock.advance(-(12 * 60 * 60 * 1000 + 1000));
    }
  });

  it("shows one company's session nothing of another company's keys or customers, and answers their ids with 404", async () => {
    const a = await signUp(t, { company: "Alpha Isolation" });
    const b = await signUp(t, { company: "Beta Isolation" });
    const created = await a.client.post("/settings/api-keys", { name: "alpha-secret-key" });
    assert.equal(created.statusCode, 200);
    const customer = await a.client.post("/customers", { name: "Alpha Only Customer", external_id: "alpha-only" });
    const customerPath = String(customer.headers.location).split("?")[0]!;
    const keysOfB = await b.client.get("/settings/api-keys");
    assert.doesNotMatch(keysOfB.body, /alpha-secret-key/);
    const customersOfB = await b.client.get("/customers");
    assert.doesNotMatch(customersOfB.body, /Alpha Only Customer/);
    assert.equal((await b.client.get(customerPath)).statusCode, 404);
    const keyId = /\/settings\/api-keys\/([0-9a-f-]{36})\/revoke/.exec(
      (await a.client.get("/settings/api-keys")).body,
    )![1]!;
    assert.equal((await b.client.get(`/settings/api-keys/${keyId}/revoke`)).statusCode, 404);
    const revoke = await b.client.post(`/settings/api-keys/${keyId}/revoke`);
    assert.equal(revoke.statusCode, 404);
    assert.match((await a.client.get("/settings/api-keys")).body, /alpha-secret-key[\s\S]*?active/);
  });

  it("keeps sessions and API keys apart: a session cookie is not an API key, and an API key opens no page", async () => {
    const { client } = await signUp(t);
    const session = client.cookies.get(SESSION)!;
    const api = await t().call({
      method: "GET",
      url: "/v1/billing/customers",
      headers: { cookie: `${SESSION}=${session}` },
    });
    assert.equal(api.statusCode, 401);
    const { key } = await t().newCompany();
    const pageWithKey = await t().call({ method: "GET", url: "/customers", key });
    assert.equal(pageWithKey.statusCode, 303);
  });

  it("slows down password guessing with 429 and Retry-After", async () => {
    const { email } = await signUp(t);
    const client = dashboardClient(t);
    const form = await client.get("/login");
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      statuses.push(
        (await client.post("/login", { email, password: `guess-${i}-wrong`, _csrf: csrfIn(form.body)! })).statusCode,
      );
    }
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    const limited = await client.post("/login", { email, password: "guess-final", _csrf: csrfIn(form.body)! });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers["retry-after"]) >= 1);
  });

  it("serves pages with a strict content security policy and no caching", async () => {
    const { client } = await signUp(t);
    const response = await client.get("/settings/api-keys");
    assert.match(String(response.headers["content-security-policy"]), /default-src 'none'.*script-src 'self'/);
    assert.match(String(response.headers["content-security-policy"]), /frame-ancestors 'none'/);
    assert.equal(response.headers["cache-control"], "no-store");
    assert.equal(response.headers["x-frame-options"], "DENY");
    const css = await t().call({ method: "GET", url: "/assets/dashboard.css" });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers["content-type"]), /text\/css/);
  });

  it("refuses a form holding a NUL character with a 400, storing nothing", async () => {
    const { client } = await signUp(t);
    const csrf = await client.csrf();
    const response = await t().call({
      method: "POST",
      url: "/customers",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
      payload: `_csrf=${encodeURIComponent(csrf)}&name=Nul%00Customer`,
    });
    assert.equal(response.statusCode, 400);
    assert.doesNotMatch((await client.get("/customers")).body, /NulCustomer|Nul.Customer/);
  });
});

describeEachEngine("dashboard API keys", (t) => {
  it("creates a key with scopes, shows it once with a copy button, and the key works against the API within its scopes", async () => {
    const { client } = await signUp(t);
    const created = await client.post("/settings/api-keys", { name: "reporting", scopes: ["customers:read"] });
    assert.equal(created.statusCode, 200);
    const key = /id="new-api-key">([^<]+)</.exec(created.body)![1]!;
    assert.match(created.body, /data-copy="new-api-key"/);
    assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers", key })).statusCode, 200);
    assert.equal((await t().call({ method: "GET", url: "/v1/billing/invoices", key })).statusCode, 403);
    const list = await client.get("/settings/api-keys");
    assert.doesNotMatch(list.body, new RegExp(key.slice(14)));
    assert.match(list.body, new RegExp(`${key.slice(0, 12)}…`));
    assert.match(list.body, /customers:read/);
  });

  it("shows when a key was last used", async () => {
    const { client } = await signUp(t);
    const created = await client.post("/settings/api-keys", { name: "used-key" });
    const key = /id="new-api-key">([^<]+)</.exec(created.body)![1]!;
    const row = (body: string) => /used-key[\s\S]*?<\/tr>/.exec(body)![0];
    assert.match(row((await client.get("/settings/api-keys")).body), /<td>never<\/td><td>never<\/td>/);
    assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers", key })).statusCode, 200);
    // The use is recorded after the request answers (it never delays it): wait for the write, bounded.
    for (let i = 0; i < 200; i++) {
      const { rows } = await t().app.db.query(
        "SELECT 1 FROM api_keys WHERE name = 'used-key' AND last_used_at IS NOT NULL",
      );
      if (rows.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.match(
      row((await client.get("/settings/api-keys")).body),
      /<time datetime="2026-03-15T12:00:00.000Z">2026-03-15 12:00 UTC<\/time><\/td><td>never<\/td>/,
    );
  });

  it("revokes a key after a confirmation page; the key then answers 401", async () => {
    const { client } = await signUp(t);
    const created = await client.post("/settings/api-keys", { name: "to-revoke" });
    const key = /id="new-api-key">([^<]+)</.exec(created.body)![1]!;
    const id = /\/settings\/api-keys\/([0-9a-f-]{36})\/revoke/.exec(created.body)![1]!;
    // Used once first: an embedded service remembers the keys it has seen, and must forget a revoked one.
    assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers", key })).statusCode, 200);
    const confirm = await client.get(`/settings/api-keys/${id}/revoke`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /This cannot be undone/);
    const revoked = await client.post(`/settings/api-keys/${id}/revoke`);
    assert.equal(revoked.statusCode, 303);
    assert.equal(revoked.headers.location, "/settings/api-keys?done=revoked");
    assert.match((await client.get(String(revoked.headers.location))).body, /The key is revoked/);
    const api = await t().call({ method: "GET", url: "/v1/billing/customers", key });
    assert.equal(api.statusCode, 401);
  });

  it("refuses unknown scopes, a missing name and past or impossible expiry dates beside their fields, keeping what was typed and creating no key", async () => {
    const { client } = await signUp(t);
    const badScope = await client.post("/settings/api-keys", {
      name: "bad",
      scopes: ["admin:everything", "customers:read"],
    });
    assert.equal(badScope.statusCode, 400);
    assert.equal(alertOf(badScope.body), ONE_FIELD);
    assert.equal(
      fieldErrorOf(badScope.body, "key-scopes"),
      "“admin:everything” is not a scope: tick only the scopes listed.",
    );
    assert.match(badScope.body, /id="key-name"[^>]*value="bad"/);
    assert.match(badScope.body, /value="customers:read" checked/);
    const past = await client.post("/settings/api-keys", { name: "old", expires_on: "2020-01-01" });
    assert.equal(past.statusCode, 400);
    assert.equal(
      fieldErrorOf(past.body, "key-expires"),
      "Choose a day after today: the key stops working at the start of that day (midnight UTC).",
    );
    assert.match(past.body, /id="key-expires"[^>]*value="2020-01-01"/);
    // The harness's clock is 2026-03-15: a key expiring today would already have expired.
    const today = await client.post("/settings/api-keys", { name: "old", expires_on: "2026-03-15" });
    assert.equal(
      fieldErrorOf(today.body, "key-expires"),
      "Choose a day after today: the key stops working at the start of that day (midnight UTC).",
    );
    for (const expires of ["tomorrow", "2027-02-30"]) {
      const notDate = await client.post("/settings/api-keys", { name: "old", expires_on: expires });
      assert.equal(notDate.statusCode, 400, expires);
      assert.equal(fieldErrorOf(notDate.body, "key-expires"), "Enter a real date, as YYYY-MM-DD.", expires);
    }
    const noName = await client.post("/settings/api-keys", { name: " ", scopes: ["customers:read"] });
    assert.equal(noName.statusCode, 400);
    assert.equal(fieldErrorOf(noName.body, "key-name"), "This field is required.");
    assert.match(noName.body, /value="customers:read" checked/);
    const longName = await client.post("/settings/api-keys", { name: "k".repeat(201) });
    assert.equal(longName.statusCode, 400);
    assert.equal(fieldErrorOf(longName.body, "key-name"), "Too long: at most 200 characters.");
    assert.doesNotMatch((await client.get("/settings/api-keys")).body, /<code>sk_/);
  });
});
