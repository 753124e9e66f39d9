/**
 * The OAuth 2.1 authorization server in front of /mcp: metadata (RFC 8414, RFC 9728), registration of public
 * clients (RFC 7591), authorization code + PKCE S256, exact redirect URIs, resource indicators (RFC 8707),
 * rotating refresh tokens, revocation (RFC 7009), and what /mcp makes of tokens.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  ALL_SCOPES,
  BASE,
  MCP_RESOURCE,
  REDIRECT_URI,
  RESOURCE_METADATA_URL,
  authorizationCode,
  authorize,
  consent,
  exchangeCode,
  expectOAuthError,
  login,
  mcpRequest,
  newUser,
  obtainTokens,
  pkce,
  postForm,
  redirectParams,
  refreshTokens,
  register,
  registerClient,
  requestIdOf,
  send,
  tokenRequest,
  type HttpResponse,
  type TokenResponse,
} from "../support/mcp-client.js";

const MINUTE = 60_000;

/** The access token works on /mcp (tools/list answers). */
async function expectWorks(t: TestApp, accessToken: string): Promise<void> {
  const res = await mcpRequest(t, accessToken, "tools/list");
  assert.equal(res.statusCode, 200, res.body);
  const tools = (res.json() as { result: { tools: unknown[] } }).result.tools;
  assert.ok(tools.length > 0);
}

/** The access token is refused by /mcp with 401 invalid_token and the challenge that leads to the metadata. */
async function expectRefused(t: TestApp, accessToken: string | undefined): Promise<HttpResponse> {
  const res = await mcpRequest(t, accessToken, "tools/list");
  assert.equal(res.statusCode, 401, res.body);
  const challenge = String(res.headers["www-authenticate"]);
  assert.match(challenge, /^Bearer /);
  assert.ok(challenge.includes(`resource_metadata="${RESOURCE_METADATA_URL}"`), challenge);
  return res;
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

describeEachEngine("OAuth discovery and the 401 challenge", (t) => {
  it("publishes RFC 8414 metadata: issuer, endpoints, code + S256 only, the two scopes", async () => {
    const res = await send(t(), { method: "GET", url: "/.well-known/oauth-authorization-server" });
    assert.equal(res.statusCode, 200, res.body);
    const metadata = res.json() as Record<string, unknown>;
    assert.equal(metadata.issuer, `${BASE}/`);
    assert.equal(metadata.authorization_endpoint, `${BASE}/authorize`);
    assert.equal(metadata.token_endpoint, `${BASE}/token`);
    assert.equal(metadata.registration_endpoint, `${BASE}/register`);
    assert.equal(metadata.revocation_endpoint, `${BASE}/revoke`);
    assert.deepEqual(metadata.response_types_supported, ["code"]);
    assert.deepEqual(metadata.code_challenge_methods_supported, ["S256"]);
    assert.deepEqual(metadata.grant_types_supported, ["authorization_code", "refresh_token"]);
    assert.deepEqual(metadata.scopes_supported, ["read:invoices", "write:invoices"]);
    assert.ok((metadata.token_endpoint_auth_methods_supported as string[]).includes("none"));
  });

  it("publishes RFC 9728 protected resource metadata naming {base}/mcp and this authorization server", async () => {
    for (const url of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await send(t(), { method: "GET", url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      const metadata = res.json() as Record<string, unknown>;
      assert.equal(metadata.resource, MCP_RESOURCE, url);
      assert.deepEqual(metadata.authorization_servers, [`${BASE}/`], url);
      assert.deepEqual(metadata.scopes_supported, ["read:invoices", "write:invoices"], url);
    }
  });

  it("answers POST /mcp without a token with 401 and WWW-Authenticate: Bearer … resource_metadata", async () => {
    const res = await expectRefused(t(), undefined);
    assert.equal((res.json() as { error: string }).error, "invalid_token");
  });

  it("answers an unknown token or API key, or a credential that is not a bearer token, with 401", async () => {
    await expectRefused(t(), "mcp_at_not-a-real-token");
    await expectRefused(t(), "sk_live_not-a-real-key"); // API keys are let in too (mcp-api-key.test.ts), but not unknown ones
    const basic = await send(t(), {
      method: "POST",
      url: "/mcp",
      headers: {
        authorization: "Basic dXNlcjpwYXNz",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      payload: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    assert.equal(basic.statusCode, 401, basic.body);
  });

  it("answers GET and DELETE /mcp with 405: the server is stateless", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const res = await send(t(), { method, url: "/mcp" });
      assert.equal(res.statusCode, 405, `${method}: ${res.body}`);
    }
  });
});

describeEachEngine("OAuth client registration", (t) => {
  it("registers a public client without a secret and echoes its metadata", async () => {
    const res = await register(t());
    assert.equal(res.statusCode, 201, res.body);
    const client = res.json() as Record<string, unknown>;
    assert.equal(typeof client.client_id, "string");
    assert.equal(client.client_secret, undefined);
    assert.equal(client.token_endpoint_auth_method, "none");
    assert.deepEqual(client.redirect_uris, [REDIRECT_URI]);
  });

  it("refuses a confidential client (client_secret_post, or the RFC 7591 default) with 400 invalid_client_metadata", async () => {
    expectOAuthError(
      await register(t(), { token_endpoint_auth_method: "client_secret_post" }),
      400,
      "invalid_client_metadata",
    );
    expectOAuthError(
      await register(t(), { token_endpoint_auth_method: "client_secret_basic" }),
      400,
      "invalid_client_metadata",
    );
    expectOAuthError(await register(t(), { token_endpoint_auth_method: undefined }), 400, "invalid_client_metadata");
  });

  it("refuses redirect URIs that are not URLs or use a script scheme (invalid_client_metadata)", async () => {
    for (const uri of ["not a url", "javascript:alert(1)", "data:text/html,hi"]) {
      expectOAuthError(await register(t(), { redirect_uris: [uri] }), 400, "invalid_client_metadata");
    }
    expectOAuthError(
      await register(t(), { redirect_uris: "http://127.0.0.1:4321/callback" }),
      400,
      "invalid_client_metadata",
    );
  });

  it("refuses no redirect URI, plain http off loopback and fragments (invalid_redirect_uri)", async () => {
    for (const uris of [
      [],
      ["http://evil.example/callback"],
      ["https://app.example/callback#x"],
      [REDIRECT_URI, "http://10.0.0.7/cb"],
    ]) {
      expectOAuthError(await register(t(), { redirect_uris: uris }), 400, "invalid_redirect_uri");
    }
  });

  it("accepts https, loopback http and a native app's private-use scheme", async () => {
    await registerClient(t(), {
      redirect_uris: [
        "https://app.example/callback",
        "http://localhost:3000/cb",
        "http://[::1]:9/cb",
        "com.example.app:/oauth/callback",
      ],
    });
  });
});

describeEachEngine("OAuth authorization requests", (t) => {
  it("shows the login page for a valid request: a form posting email and password to /oauth/login", async () => {
    const clientId = await registerClient(t(), { client_name: "Claude <Desktop>" });
    const res = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
      resource: MCP_RESOURCE,
      state: "s1",
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers["content-type"]), /text\/html/);
    assert.ok(res.body.includes('action="/oauth/login"'));
    assert.ok(res.body.includes('name="email"'));
    assert.ok(res.body.includes('name="password"'));
    assert.ok(res.body.includes("Claude &lt;Desktop&gt;"), "the client's name, escaped");
    requestIdOf(res.body);
  });

  it("refuses code_challenge_method=plain and a missing code_challenge by redirecting with invalid_request", async () => {
    const clientId = await registerClient(t());
    const plain = await authorize(t(), {
      clientId,
      challenge: "x".repeat(43),
      method: "plain",
      redirectUri: REDIRECT_URI,
      state: "st",
    });
    // (The SDK's handler leaves `state` out of these two redirects: it reads it only once the parameters parse.)
    let params = redirectParams(plain);
    assert.ok(String(plain.headers.location).startsWith(REDIRECT_URI));
    assert.equal(params.get("error"), "invalid_request");
    assert.equal(params.get("code"), null);
    const missing = await authorize(t(), { clientId, method: "S256", redirectUri: REDIRECT_URI, state: "st" });
    params = redirectParams(missing);
    assert.equal(params.get("error"), "invalid_request");
    assert.equal(params.get("code"), null);
  });

  it("answers an unregistered redirect_uri or an unknown client with a direct 400, never a redirect", async () => {
    const clientId = await registerClient(t());
    for (const redirectUri of [
      "http://127.0.0.1:4321/other",
      "https://evil.example/callback",
      "http://localhost:4321/callback",
    ]) {
      const res = await authorize(t(), { clientId, challenge: pkce().challenge, method: "S256", redirectUri });
      expectOAuthError(res, 400, "invalid_request");
      assert.equal(res.headers.location, undefined, redirectUri);
    }
    const unknown = await authorize(t(), {
      clientId: "no-such-client",
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
    });
    expectOAuthError(unknown, 400, "invalid_client");
    assert.equal(unknown.headers.location, undefined);
  });

  it("lets a loopback redirect URI use any port; the code is then bound to that exact URI", async () => {
    const user = await newUser(t());
    const clientId = await registerClient(t());
    const authorized = await authorizationCode(t(), user, { clientId, redirectUri: "http://127.0.0.1:55123/callback" });
    expectOAuthError(await exchangeCode(t(), authorized, { redirect_uri: REDIRECT_URI }), 400, "invalid_grant");
    const again = await authorizationCode(t(), user, { clientId, redirectUri: "http://127.0.0.1:55123/callback" });
    const res = await exchangeCode(t(), again);
    assert.equal(res.statusCode, 200, res.body);
  });

  it("redirects an unknown scope with invalid_scope and a foreign resource with invalid_target, with the state", async () => {
    const clientId = await registerClient(t());
    const scope = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
      scope: "read:invoices admin",
      state: "a",
    });
    let params = redirectParams(scope);
    assert.ok(String(scope.headers.location).startsWith(REDIRECT_URI));
    assert.equal(params.get("error"), "invalid_scope");
    assert.equal(params.get("state"), "a");
    const target = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
      resource: "https://other.example/mcp",
      state: "b",
    });
    params = redirectParams(target);
    assert.equal(params.get("error"), "invalid_target");
    assert.equal(params.get("state"), "b");
  });

  it("shows the login page again with 401 after a wrong password, and no code; the right one then gets the consent page", async () => {
    const user = await newUser(t());
    const clientId = await registerClient(t());
    const page = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
      scope: "read:invoices",
    });
    const requestId = requestIdOf(page.body);
    for (const [email, password] of [
      [user.email, "wrong-password"],
      ["nobody@example.com", user.password],
    ] as const) {
      const res = await login(t(), requestId, email, password);
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.headers.location, undefined);
      assert.ok(res.body.includes('action="/oauth/login"'));
      assert.ok(res.body.includes("Wrong email or password"));
      assert.equal(requestIdOf(res.body), requestId);
    }
    const consentPage = await login(t(), requestId, user.email.toUpperCase(), user.password);
    assert.equal(consentPage.statusCode, 200, consentPage.body);
    assert.ok(consentPage.body.includes('action="/oauth/consent"'));
    assert.ok(consentPage.body.includes('value="allow"') && consentPage.body.includes('value="deny"'));
    assert.ok(consentPage.body.includes("read:invoices"));
    assert.ok(!consentPage.body.includes("write:invoices"), "only the requested scope is listed");
  });

  it("lists both scopes when none is asked for, and answers an unknown request id with 400", async () => {
    const user = await newUser(t());
    const clientId = await registerClient(t());
    const page = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
    });
    const consentPage = await login(t(), requestIdOf(page.body), user.email, user.password);
    for (const scope of ALL_SCOPES) assert.ok(consentPage.body.includes(scope), scope);
    assert.equal((await login(t(), "no-such-request", user.email, user.password)).statusCode, 400);
    assert.equal((await consent(t(), "no-such-request", "allow")).statusCode, 400);
  });

  it("redirects Deny with error=access_denied and the state; the request is then used up", async () => {
    const user = await newUser(t());
    const clientId = await registerClient(t());
    const page = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
      state: "keep-me",
    });
    const consentPage = await login(t(), requestIdOf(page.body), user.email, user.password);
    const requestId = requestIdOf(consentPage.body);
    const denied = await consent(t(), requestId, "deny");
    const params = redirectParams(denied);
    assert.ok(String(denied.headers.location).startsWith(REDIRECT_URI));
    assert.equal(params.get("error"), "access_denied");
    assert.equal(params.get("state"), "keep-me");
    assert.equal(params.get("code"), null);
    assert.equal(
      (await consent(t(), requestId, "allow")).statusCode,
      400,
      "an answered request cannot be allowed afterwards",
    );
  });

  it("refuses consent for a request nobody has logged in to", async () => {
    const clientId = await registerClient(t());
    const page = await authorize(t(), {
      clientId,
      challenge: pkce().challenge,
      method: "S256",
      redirectUri: REDIRECT_URI,
    });
    const res = await consent(t(), requestIdOf(page.body), "allow");
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.headers.location, undefined);
  });
});

describeEachEngine("OAuth code exchange", (t) => {
  it("exchanges a code for a short-lived bearer access token and a refresh token, stored only as hashes", async () => {
    const user = await newUser(t());
    const authorized = await authorizationCode(t(), user);
    const res = await exchangeCode(t(), authorized);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers["cache-control"]), /no-store/);
    const tokens = res.json() as TokenResponse;
    assert.equal(tokens.token_type, "Bearer");
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.scope, "read:invoices write:invoices");
    assert.notEqual(tokens.access_token, tokens.refresh_token);
    await expectWorks(t(), tokens.access_token);
    const stored = async (token: string) => {
      const { rows } = await t().app.db.query<{
        kind: string;
        resource: string | null;
        expires_at: Date;
        size: number;
      }>(
        "SELECT kind, resource, expires_at, octet_length(token_hash) AS size FROM oauth_tokens WHERE token_hash = $1",
        [sha256(token)],
      );
      assert.equal(rows.length, 1, "found by its SHA-256");
      return rows[0]!;
    };
    const access = await stored(tokens.access_token);
    const refresh = await stored(tokens.refresh_token);
    assert.deepEqual([access.kind, access.resource, access.size], ["access", MCP_RESOURCE, 32]);
    assert.deepEqual([refresh.kind, refresh.resource, refresh.size], ["refresh", MCP_RESOURCE, 32]);
    assert.equal(access.expires_at.getTime(), t().clock.now().getTime() + 60 * MINUTE);
    assert.ok(refresh.expires_at.getTime() > access.expires_at.getTime());
  });

  it("refuses a wrong code_verifier with invalid_grant", async () => {
    const user = await newUser(t());
    const authorized = await authorizationCode(t(), user);
    expectOAuthError(await exchangeCode(t(), authorized, { code_verifier: pkce().verifier }), 400, "invalid_grant");
    expectOAuthError(await exchangeCode(t(), authorized, { code_verifier: undefined }), 400, "invalid_request");
  });

  it("refuses a redirect_uri that is not the authorization request's, or none, with invalid_grant", async () => {
    const user = await newUser(t());
    const first = await authorizationCode(t(), user);
    expectOAuthError(
      await exchangeCode(t(), first, { redirect_uri: "http://127.0.0.1:4321/other" }),
      400,
      "invalid_grant",
    );
    const second = await authorizationCode(t(), user);
    expectOAuthError(await exchangeCode(t(), second, { redirect_uri: undefined }), 400, "invalid_grant");
  });

  it("refuses a resource other than the authorized one (invalid_target), or one that was not authorized (invalid_grant)", async () => {
    const user = await newUser(t());
    const foreign = await authorizationCode(t(), user);
    expectOAuthError(
      await exchangeCode(t(), foreign, { resource: "https://other.example/mcp" }),
      400,
      "invalid_target",
    );
    const unbound = await authorizationCode(t(), user, { resource: null });
    expectOAuthError(await exchangeCode(t(), unbound, { resource: MCP_RESOURCE }), 400, "invalid_grant");
  });

  it("binds the token to the authorized resource when the token request leaves it out", async () => {
    const user = await newUser(t());
    const authorized = await authorizationCode(t(), user);
    const res = await exchangeCode(t(), authorized, { resource: undefined });
    assert.equal(res.statusCode, 200, res.body);
    const tokens = res.json() as TokenResponse;
    const { rows } = await t().app.db.query<{ resource: string }>(
      "SELECT resource FROM oauth_tokens WHERE token_hash = $1",
      [sha256(tokens.access_token)],
    );
    assert.equal(rows[0]!.resource, MCP_RESOURCE);
  });

  it("refuses a code after its 5 minutes with invalid_grant", async () => {
    const user = await newUser(t());
    const authorized = await authorizationCode(t(), user);
    t().clock.advance(6 * MINUTE);
    expectOAuthError(await exchangeCode(t(), authorized), 400, "invalid_grant");
  });

  it("refuses an unknown code, another client's code and an unsupported grant type", async () => {
    const user = await newUser(t());
    const authorized = await authorizationCode(t(), user);
    expectOAuthError(await exchangeCode(t(), authorized, { code: "not-a-code" }), 400, "invalid_grant");
    const otherClient = await registerClient(t());
    expectOAuthError(await exchangeCode(t(), authorized, { client_id: otherClient }), 400, "invalid_grant");
    expectOAuthError(await exchangeCode(t(), authorized, { client_id: "no-such-client" }), 400, "invalid_client");
    expectOAuthError(
      await tokenRequest(t(), { grant_type: "client_credentials", client_id: authorized.clientId }),
      400,
      "unsupported_grant_type",
    );
    const res = await exchangeCode(t(), authorized);
    assert.equal(res.statusCode, 200, `the code is still good for its own client: ${res.body}`);
  });

  it("refuses a reused code with invalid_grant and revokes the tokens issued from it", async () => {
    const user = await newUser(t());
    const authorized = await authorizationCode(t(), user);
    const first = await exchangeCode(t(), authorized);
    assert.equal(first.statusCode, 200, first.body);
    const tokens = first.json() as TokenResponse;
    await expectWorks(t(), tokens.access_token);
    expectOAuthError(await exchangeCode(t(), authorized), 400, "invalid_grant");
    await expectRefused(t(), tokens.access_token);
    expectOAuthError(await refreshTokens(t(), authorized.clientId, tokens.refresh_token), 400, "invalid_grant");
  });
});

describeEachEngine("OAuth refresh, revocation and token lifetime", (t) => {
  it("rotates refresh tokens: the new access token works and the old refresh token is refused", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    const res = await refreshTokens(t(), tokens.clientId, tokens.refresh_token);
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json() as TokenResponse;
    assert.notEqual(rotated.access_token, tokens.access_token);
    assert.notEqual(rotated.refresh_token, tokens.refresh_token);
    assert.equal(rotated.scope, tokens.scope);
    await expectWorks(t(), rotated.access_token);
    expectOAuthError(
      await refreshTokens(t(), tokens.clientId, rotated.refresh_token, { client_id: await registerClient(t()) }),
      400,
      "invalid_grant",
    );
    const next = await refreshTokens(t(), tokens.clientId, rotated.refresh_token);
    assert.equal(next.statusCode, 200, next.body);
  });

  it("treats a reused refresh token as theft: refused, and every newer token of the grant is revoked", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    const rotated = (await refreshTokens(t(), tokens.clientId, tokens.refresh_token)).json() as TokenResponse;
    await expectWorks(t(), rotated.access_token);
    expectOAuthError(await refreshTokens(t(), tokens.clientId, tokens.refresh_token), 400, "invalid_grant");
    await expectRefused(t(), rotated.access_token);
    await expectRefused(t(), tokens.access_token);
    expectOAuthError(await refreshTokens(t(), tokens.clientId, rotated.refresh_token), 400, "invalid_grant");
  });

  it("narrows scopes on refresh but never widens them, and keeps the resource", async () => {
    const user = await newUser(t());
    const readOnly = await obtainTokens(t(), user, ["read:invoices"]);
    expectOAuthError(
      await refreshTokens(t(), readOnly.clientId, readOnly.refresh_token, { scope: "read:invoices write:invoices" }),
      400,
      "invalid_scope",
    );
    const full = await obtainTokens(t(), user);
    const narrowed = await refreshTokens(t(), full.clientId, full.refresh_token, { scope: "read:invoices" });
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    assert.equal((narrowed.json() as TokenResponse).scope, "read:invoices");
    const again = await obtainTokens(t(), user);
    expectOAuthError(
      await refreshTokens(t(), again.clientId, again.refresh_token, { resource: "https://other.example/mcp" }),
      400,
      "invalid_target",
    );
  });

  it("revokes an access token (POST /revoke with token and client_id → 200); /mcp then answers 401", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    await expectWorks(t(), tokens.access_token);
    const res = await postForm(t(), "/revoke", { token: tokens.access_token, client_id: tokens.clientId });
    assert.equal(res.statusCode, 200, res.body);
    await expectRefused(t(), tokens.access_token);
    const unknown = await postForm(t(), "/revoke", { token: "mcp_at_unknown", client_id: tokens.clientId });
    assert.equal(unknown.statusCode, 200, "RFC 7009: an unknown token is no error");
  });

  it("revokes a refresh token with the access tokens of its grant", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    const res = await postForm(t(), "/revoke", {
      token: tokens.refresh_token,
      token_type_hint: "refresh_token",
      client_id: tokens.clientId,
    });
    assert.equal(res.statusCode, 200, res.body);
    expectOAuthError(await refreshTokens(t(), tokens.clientId, tokens.refresh_token), 400, "invalid_grant");
    await expectRefused(t(), tokens.access_token);
  });

  it("does not let another client revoke a token", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    const other = await registerClient(t());
    const res = await postForm(t(), "/revoke", { token: tokens.access_token, client_id: other });
    assert.equal(res.statusCode, 200, res.body);
    await expectWorks(t(), tokens.access_token);
    expectOAuthError(await postForm(t(), "/revoke", { token: tokens.access_token }), 400, "invalid_request");
  });

  it("stops honouring the tokens of a deleted user", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    await expectWorks(t(), tokens.access_token);
    await t().app.db.query("DELETE FROM users WHERE id = $1", [user.userId]);
    await expectRefused(t(), tokens.access_token);
    expectOAuthError(await refreshTokens(t(), tokens.clientId, tokens.refresh_token), 400, "invalid_grant");
  });

  it("refuses an access token after its hour (by the service's clock); the refresh token still gets a new one", async () => {
    const user = await newUser(t());
    const tokens = await obtainTokens(t(), user);
    t().clock.advance(59 * MINUTE);
    await expectWorks(t(), tokens.access_token);
    t().clock.advance(2 * MINUTE);
    const res = await expectRefused(t(), tokens.access_token);
    assert.equal((res.json() as { error: string }).error, "invalid_token");
    const refreshed = await refreshTokens(t(), tokens.clientId, tokens.refresh_token);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    await expectWorks(t(), (refreshed.json() as TokenResponse).access_token);
  });
});

describeEachEngine("OAuth login and consent binding", (t) => {
  it("moves the authorization to a new id at login, so the id from the login form cannot answer the consent", async () => {
    const user = await newUser(t());
    const clientId = await registerClient(t());
    const { challenge } = pkce();
    const page = await authorize(t(), {
      clientId,
      challenge,
      method: "S256",
      redirectUri: "http://127.0.0.1:4321/callback",
      state: "s1",
    });
    assert.equal(page.statusCode, 200);
    const loginId = requestIdOf(page.body);
    const consentPage = await login(t(), loginId, user.email, user.password);
    assert.equal(consentPage.statusCode, 200);
    const consentId = requestIdOf(consentPage.body);
    assert.notEqual(consentId, loginId);
    const planted = await consent(t(), loginId, "allow");
    assert.equal(planted.statusCode, 400, "the login form's id answers no consent");
    const again = await login(t(), loginId, user.email, user.password);
    assert.equal(again.statusCode, 400, "and logs nobody in a second time");
    const allowed = await consent(t(), consentId, "allow");
    assert.equal(allowed.statusCode, 302);
    assert.ok(redirectParams(allowed).get("code"));
    assert.equal(redirectParams(allowed).get("state"), "s1");
  });
});
