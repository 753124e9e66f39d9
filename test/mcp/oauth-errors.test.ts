/**
 * Bad input to the agent surface (OAuth endpoints, sign-in pages, /mcp, the well-known documents). The kinds
 * an external review found answered with 500 — a malformed or oversized body on /register and /mcp, a login
 * form over 16 KB, a NUL byte in /token, /revoke, the login and consent forms or /register (which reached
 * PostgreSQL) — and their neighbours each get their exact 4xx in the endpoint's shape, and store nothing.
 */
import assert from "node:assert/strict";
import { before, it } from "node:test";
import type { InjectOptions } from "fastify";
import { OAuthProtocolError } from "../../src/domain/oauth/oauth-protocol.js";
import { describeEachEngine } from "../support/harness.js";
import {
  REDIRECT_URI,
  assertSentence,
  authorize,
  consent,
  login,
  mcpRequest,
  newUser,
  obtainTokens,
  pkce,
  redirectParams,
  registerClient,
  requestIdOf,
  type HttpResponse,
  type User,
} from "../support/mcp-client.js";
import { storedOAuthState, storedState } from "../support/fuzz-generators.js";

interface Fixture {
  user: User;
  clientId: string;
  accessToken: string;
  refreshToken: string;
  /** An authorization waiting for its sign-in (the login form's id). */
  pendingId: string;
  /** An authorization signed in to, waiting for its consent (the consent form's id). */
  consentId: string;
}

/** What the answer must be: its status, and the endpoint's error shape with its code. */
type Expected = { status: number } & ({ oauth: string } | { page: true } | { rpc: number });

const METADATA = { client_name: "Bad input", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" };
const MB = 1024 * 1024;

const json = (url: string, payload: string, contentType = "application/json"): InjectOptions => ({
  method: "POST",
  url,
  headers: { "content-type": contentType },
  payload,
});
const form = (url: string, fields: Record<string, string>): InjectOptions => ({
  method: "POST",
  url,
  headers: { "content-type": "application/x-www-form-urlencoded" },
  payload: new URLSearchParams(fields).toString(),
});
const mcp = (f: Fixture, payload: string, contentType = "application/json"): InjectOptions => ({
  method: "POST",
  url: "/mcp",
  headers: {
    authorization: `Bearer ${f.accessToken}`,
    "content-type": contentType,
    accept: "application/json, text/event-stream",
  },
  payload,
});

function expectAnswer(res: HttpResponse, expected: Expected): void {
  const summary = `${res.statusCode} ${String(res.headers["content-type"])}: ${res.body.slice(0, 300)}`;
  assert.equal(res.statusCode, expected.status, summary);
  if ("page" in expected) {
    assert.match(String(res.headers["content-type"]), /^text\/html/, summary);
    assert.match(res.body, /<h1>Authorization failed<\/h1><p class="error" role="alert">[^<]+<\/p>/, summary);
    assert.equal(res.headers["x-frame-options"], "DENY");
  } else if ("rpc" in expected) {
    const body = res.json() as { jsonrpc: string; error: { code: number; message: string }; id: unknown };
    assert.deepEqual(
      [body.jsonrpc, body.error.code, typeof body.error.message, body.id],
      ["2.0", expected.rpc, "string", null],
      summary,
    );
  } else {
    const body = res.json() as { error: string; error_description: string };
    assert.equal(body.error, expected.oauth, summary);
    assert.equal(typeof body.error_description, "string", summary);
    assert.ok(body.error_description.length > 0, summary);
    assertSentence(body.error_description);
  }
}

describeEachEngine(
  "OAuth and MCP: bad input is a 4xx in the endpoint's shape, never a 500",
  (t) => {
    let f: Fixture;
    before(async () => {
      const user = await newUser(t());
      const tokens = await obtainTokens(t(), user);
      const clientId = await registerClient(t());
      const started = async () =>
        requestIdOf(
          (
            await authorize(t(), {
              clientId,
              challenge: pkce().challenge,
              method: "S256",
              redirectUri: REDIRECT_URI,
              state: "s",
            })
          ).body,
        );
      const pendingId = await started();
      const consentId = requestIdOf((await login(t(), await started(), user.email, user.password)).body);
      f = {
        user,
        clientId,
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        pendingId,
        consentId,
      };
    });

    const cases: [string, (f: Fixture) => InjectOptions, Expected][] = [
      // the kinds that answered 500
      [
        "/register: malformed JSON",
        () => json("/register", '{"client_name":'),
        { status: 400, oauth: "invalid_request" },
      ],
      [
        "/register: a body over 1 MB",
        () => json("/register", JSON.stringify({ ...METADATA, software_id: "x".repeat(MB) })),
        { status: 413, oauth: "invalid_request" },
      ],
      ["/mcp: malformed JSON", (f) => mcp(f, '{"jsonrpc":"2.0",'), { status: 400, rpc: -32700 }],
      [
        "/mcp: a body over 1 MB",
        (f) => mcp(f, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(MB) } })),
        { status: 413, rpc: -32000 },
      ],
      [
        "/oauth/login: a form over 16 KB",
        (f) => form("/oauth/login", { request_id: f.pendingId, email: f.user.email, password: "p".repeat(17 * 1024) }),
        { status: 413, page: true },
      ],
      [
        "/token: a NUL",
        (f) =>
          form("/token", {
            grant_type: "refresh_token",
            client_id: f.clientId,
            refresh_token: `${f.refreshToken}\u0000`,
          }),
        { status: 400, oauth: "invalid_request" },
      ],
      [
        "/revoke: a NUL",
        (f) => form("/revoke", { client_id: `${f.clientId}\u0000`, token: f.accessToken }),
        { status: 400, oauth: "invalid_request" },
      ],
      [
        "/oauth/login: a NUL",
        (f) =>
          form("/oauth/login", { request_id: f.pendingId, email: `\u0000${f.user.email}`, password: f.user.password }),
        { status: 400, page: true },
      ],
      [
        "/oauth/consent: a NUL",
        (f) => form("/oauth/consent", { request_id: f.consentId, decision: "allow\u0000" }),
        { status: 400, page: true },
      ],
      [
        "/register: a NUL",
        () => json("/register", JSON.stringify({ ...METADATA, client_name: "Claude\u0000" })),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/authorize (POST): a NUL",
        (f) =>
          form("/authorize", {
            response_type: "code",
            client_id: f.clientId,
            redirect_uri: REDIRECT_URI,
            code_challenge: pkce().challenge,
            code_challenge_method: "S256",
            state: "\u0000",
          }),
        { status: 400, oauth: "invalid_request" },
      ],
      // their neighbours
      [
        "/register: an unpaired surrogate",
        () => json("/register", JSON.stringify({ ...METADATA, client_name: "\ud800" })),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/register: an unpaired surrogate in a redirect URI",
        () => json("/register", JSON.stringify({ ...METADATA, redirect_uris: ["https://app.example/\udc00"] })),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/register: a NUL in a key the SDK would drop",
        () => json("/register", JSON.stringify({ ...METADATA, "x\u0000": 1 })),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      ["/register: not an object", () => json("/register", '"x"'), { status: 400, oauth: "invalid_request" }],
      [
        "/register: a body over 100 KB",
        () => json("/register", JSON.stringify({ ...METADATA, software_id: "x".repeat(110 * 1024) })),
        { status: 413, oauth: "invalid_request" },
      ],
      [
        "/register: text/plain",
        () => json("/register", JSON.stringify(METADATA), "text/plain"),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/register: a form",
        () => json("/register", "client_name=x", "application/x-www-form-urlencoded"),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/register: charset latin1",
        () => json("/register", JSON.stringify(METADATA), "application/json; charset=latin1"),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/register: an unknown content encoding",
        () => ({
          ...json("/register", JSON.stringify(METADATA)),
          headers: { "content-type": "application/json", "content-encoding": "zz" },
        }),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/register: a gzip body that is not gzip",
        () => ({
          ...json("/register", JSON.stringify(METADATA)),
          headers: { "content-type": "application/json", "content-encoding": "gzip" },
        }),
        { status: 400, oauth: "invalid_request" },
      ],
      [
        "/register: 11 redirect URIs",
        () =>
          json(
            "/register",
            JSON.stringify({
              ...METADATA,
              redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`),
            }),
          ),
        { status: 400, oauth: "invalid_redirect_uri" },
      ],
      [
        "/register: 3,000 redirect URIs",
        () =>
          json(
            "/register",
            JSON.stringify({ ...METADATA, redirect_uris: Array.from({ length: 3000 }, () => "https://a.example/") }),
          ),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/register: a redirect URI of 2,001 characters",
        () =>
          json(
            "/register",
            JSON.stringify({ ...METADATA, redirect_uris: [`https://app.example/${"a".repeat(1981)}`] }),
          ),
        { status: 400, oauth: "invalid_redirect_uri" },
      ],
      [
        "/register: client_name of 201 characters",
        () => json("/register", JSON.stringify({ ...METADATA, client_name: "n".repeat(201) })),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/register: metadata over 16 KB",
        () => json("/register", JSON.stringify({ ...METADATA, software_id: "x".repeat(17 * 1024) })),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/register: jwks nested 20,000 deep",
        () =>
          json(
            "/register",
            `{"redirect_uris":["${REDIRECT_URI}"],"token_endpoint_auth_method":"none","jwks":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
          ),
        { status: 400, oauth: "invalid_client_metadata" },
      ],
      [
        "/token: a JSON body",
        (f) =>
          json(
            "/token",
            JSON.stringify({ grant_type: "refresh_token", client_id: f.clientId, refresh_token: f.refreshToken }),
          ),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/token: a body over 100 KB",
        (f) =>
          form("/token", { grant_type: "refresh_token", client_id: f.clientId, refresh_token: "r".repeat(110 * 1024) }),
        { status: 413, oauth: "invalid_request" },
      ],
      [
        "/token: a NUL in a field name",
        (f) => ({
          ...form("/token", { grant_type: "refresh_token", client_id: f.clientId }),
          payload: `grant_type=refresh_token&client_id=${f.clientId}&x%00=1`,
        }),
        { status: 400, oauth: "invalid_request" },
      ],
      [
        "/revoke: text/plain",
        (f) => json("/revoke", `token=${f.accessToken}&client_id=${f.clientId}`, "text/plain"),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/authorize (POST): a JSON body",
        (f) => json("/authorize", JSON.stringify({ client_id: f.clientId })),
        { status: 415, oauth: "invalid_request" },
      ],
      [
        "/oauth/login: a JSON body",
        (f) => json("/oauth/login", JSON.stringify({ request_id: f.pendingId })),
        { status: 415, page: true },
      ],
      ["/oauth/login: GET", () => ({ method: "GET", url: "/oauth/login" }), { status: 405, page: true }],
      [
        "/oauth/consent: a form over 16 KB",
        (f) => form("/oauth/consent", { request_id: f.consentId, decision: "allow", pad: "x".repeat(17 * 1024) }),
        { status: 413, page: true },
      ],
      [
        "/oauth/consent: a NUL in the request id",
        (f) => form("/oauth/consent", { request_id: `${f.consentId}\u0000`, decision: "deny" }),
        { status: 400, page: true },
      ],
      ["/oauth/consent: GET", () => ({ method: "GET", url: "/oauth/consent" }), { status: 405, page: true }],
      ["/mcp: no body", (f) => mcp(f, ""), { status: 400, rpc: -32700 }],
      [
        "/mcp: text/plain",
        (f) => mcp(f, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), "text/plain"),
        { status: 415, rpc: -32000 },
      ],
      [
        "/.well-known/oauth-protected-resource: POST",
        () => ({ method: "POST", url: "/.well-known/oauth-protected-resource", payload: "{}" }),
        { status: 405, oauth: "method_not_allowed" },
      ],
      [
        "/.well-known/oauth-authorization-server: DELETE",
        () => ({ method: "DELETE", url: "/.well-known/oauth-authorization-server" }),
        { status: 405, oauth: "method_not_allowed" },
      ],
    ];
    for (const [what, request, expected] of cases) {
      it(`${what}: ${expected.status} ${"oauth" in expected ? expected.oauth : "page" in expected ? "error page" : `JSON-RPC ${expected.rpc}`}, nothing stored`, async () => {
        const oauthBefore = await storedOAuthState(t());
        const companyBefore = await storedState(t(), f.user.companyId);
        expectAnswer(await t().call(request(f)), expected);
        assert.equal(await storedOAuthState(t()), oauthBefore, "the OAuth tables changed");
        assert.equal(await storedState(t(), f.user.companyId), companyBefore, "the company's data changed");
      });
    }

    it("refuses a NUL or an unpaired surrogate in a tool's arguments, storing nothing", async () => {
      for (const name of ["Acme\u0000", "Acme\ud800"]) {
        const before = await storedState(t(), f.user.companyId);
        const res = await mcpRequest(t(), f.accessToken, "tools/call", {
          name: "create_customer",
          arguments: { name },
        });
        assert.equal(res.statusCode, 200, res.body);
        const answer = res.json() as {
          result?: { isError?: boolean; structuredContent?: { code?: string } };
          error?: { code: number; message: string };
        };
        // The name's schema refuses a NUL (JSON-RPC Invalid params); the storable-text check, run before
        // any tool as the API runs it before any route, refuses a lone surrogate (a tool error, as the API's).
        if (name.includes("\u0000")) {
          assert.equal(answer.error?.code, -32602, res.body);
          assertSentence(answer.error.message);
        } else {
          assert.equal(answer.result?.isError, true, res.body);
          assert.equal(answer.result?.structuredContent?.code, "invalid_request", res.body);
        }
        assert.equal(await storedState(t(), f.user.companyId), before);
      }
    });

    it("leaves the refused forms' authorizations usable: the sign-in and the consent still go through", async () => {
      const consentPage = await login(t(), f.pendingId, f.user.email, f.user.password);
      assert.equal(consentPage.statusCode, 200, consentPage.body);
      const allowed = redirectParams(await consent(t(), f.consentId, "allow"));
      assert.ok(allowed.get("code"));
      assert.equal(allowed.get("state"), "s");
    });

    it("refuses such text in the service too, before any query, whatever surface calls it", async () => {
      const oauth = t().app.services.oauth;
      const refusals: [string, () => Promise<unknown>][] = [
        ["getClient", () => oauth.getClient("c\u0000")],
        ["registerClient", () => oauth.registerClient({ ...METADATA, client_id: "c\u0000" })],
        [
          "beginAuthorization (redirect_uri)",
          () => oauth.beginAuthorization(f.clientId, { redirectUri: `${REDIRECT_URI}\u0000`, codeChallenge: "c" }),
        ],
        [
          "beginAuthorization (state)",
          () =>
            oauth.beginAuthorization(f.clientId, { redirectUri: REDIRECT_URI, codeChallenge: "c", state: "\ud800" }),
        ],
        [
          "beginAuthorization (code_challenge)",
          () => oauth.beginAuthorization(f.clientId, { redirectUri: REDIRECT_URI, codeChallenge: "c\u0000" }),
        ],
        ["pendingRequest", () => oauth.pendingRequest("r\u0000")],
        ["login (request id)", () => oauth.login("r\udc00", f.user.email, f.user.password)],
        ["login (email)", () => oauth.login(f.pendingId, `${f.user.email}\u0000`, f.user.password)],
        ["decide", () => oauth.decide("r\u0000", true)],
        ["challengeFor", () => oauth.challengeFor(f.clientId, "c\u0000")],
        ["exchangeCode", () => oauth.exchangeCode(f.clientId, "c\u0000", REDIRECT_URI, undefined)],
        ["refresh", () => oauth.refresh(f.clientId, "t\u0000", undefined, undefined)],
        ["revoke", () => oauth.revoke(f.clientId, "t\ud800")],
      ];
      const before = await storedOAuthState(t());
      for (const [what, call] of refusals) {
        await assert.rejects(
          call(),
          (error: unknown) =>
            error instanceof OAuthProtocolError && /invalid_(request|client_metadata|redirect_uri)/.test(error.code),
          what,
        );
      }
      assert.equal(await oauth.verifyAccessToken("mcp_at_\u0000"), undefined, "an access token that was never issued");
      assert.equal(await storedOAuthState(t()), before);
    });

    it("answers a bug with 500 in the endpoint's shape, and logs it", async () => {
      const { app } = t();
      const logged: unknown[] = [];
      const original = { decide: app.services.oauth.decide, error: app.logger.error };
      app.services.oauth.decide = async () => {
        throw new Error("boom");
      };
      app.logger.error = ((...args: unknown[]) => void logged.push(args)) as typeof app.logger.error;
      try {
        const res = await t().call(form("/oauth/consent", { request_id: "any", decision: "allow" }));
        assert.equal(res.statusCode, 500, res.body);
        assert.match(String(res.headers["content-type"]), /^text\/html/);
        assert.match(res.body, /Something went wrong on our side/);
        assert.ok(!res.body.includes("boom"), "the error's own message stays in the log");
        assert.equal(logged.length, 1);
      } finally {
        app.services.oauth.decide = original.decide;
        app.logger.error = original.error;
      }
    });
  },
  { env: { BILLING_AUTH_FAILURES: "off" } },
);

describeEachEngine(
  "OAuth /authorize: a PKCE challenge no verifier can match is refused before the sign-in page",
  (t) => {
    let clientId: string;
    before(async () => {
      clientId = await registerClient(t());
    });

    const good = pkce().challenge;
    const refused: Array<[string, { challenge?: string; method?: string }, RegExp]> = [
      ["an empty challenge", { challenge: "", method: "S256" }, /code_challenge/],
      ["a challenge of 42 characters", { challenge: good.slice(0, 42), method: "S256" }, /43 to 128 characters/],
      ["a challenge of 129 characters", { challenge: "a".repeat(129), method: "S256" }, /43 to 128 characters/],
      ["a challenge with padding", { challenge: `${good}=`, method: "S256" }, /base64url/],
      ["a challenge in base64 (+ and /)", { challenge: `${good.slice(0, 41)}+/`, method: "S256" }, /base64url/],
      [
        "a challenge with a space",
        { challenge: `${good.slice(0, 21)} ${good.slice(22)}`, method: "S256" },
        /base64url/,
      ],
      ["a challenge with a non-ASCII letter", { challenge: `${good.slice(0, 42)}é`, method: "S256" }, /base64url/],
      ["the plain method", { challenge: good, method: "plain" }, /code_challenge_method/],
      ["no method", { challenge: good }, /code_challenge_method/],
      ["no challenge", { method: "S256" }, /code_challenge/],
    ];
    for (const [what, params, sentence] of refused) {
      it(`refuses ${what}: a redirect with invalid_request and a sentence, no sign-in page, nothing stored`, async () => {
        const before = await storedOAuthState(t());
        const res = await authorize(t(), { clientId, redirectUri: REDIRECT_URI, state: "keep", ...params });
        const location = new URL(String(res.headers.location));
        assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI, res.body);
        const answer = redirectParams(res);
        assert.equal(answer.get("error"), "invalid_request");
        assert.equal(answer.get("state"), "keep");
        assert.equal(answer.get("code"), null);
        const description = answer.get("error_description") ?? "";
        assertSentence(description);
        assert.match(description, sentence);
        assert.doesNotMatch(res.body, /request_id|<form/, "no sign-in page");
        assert.equal(await storedOAuthState(t()), before, "no authorization begun");
      });
    }

    it("refuses a bad challenge with an unregistered redirect URI as a 400 with a sentence, redirecting nowhere", async () => {
      const before = await storedOAuthState(t());
      const res = await authorize(t(), {
        clientId,
        redirectUri: "http://127.0.0.1:4321/elsewhere",
        challenge: "",
        method: "S256",
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.headers.location, undefined);
      const body = res.json() as { error: string; error_description: string };
      assert.equal(body.error, "invalid_request");
      assertSentence(body.error_description);
      assert.equal(await storedOAuthState(t()), before);
    });

    for (const [what, challenge] of [
      ["43", good],
      ["128", "A".repeat(64) + "z_-9".repeat(16)],
    ] as const) {
      it(`takes a challenge of ${what} characters of the base64url alphabet to the sign-in page`, async () => {
        const res = await authorize(t(), { clientId, redirectUri: REDIRECT_URI, challenge, method: "S256" });
        assert.equal(res.statusCode, 200, res.body);
        assert.ok(requestIdOf(res.body));
      });
    }

    it("answers the token, registration and revocation endpoints' refusals with sentences, never the validator's output", async () => {
      const answers = [
        await t().call(form("/token", { grant_type: "authorization_code", client_id: clientId })),
        await t().call(form("/token", { client_id: clientId })),
        await t().call(form("/token", {})),
        await t().call(form("/token", { grant_type: "refresh_token", client_id: clientId })),
        await t().call(form("/revoke", { client_id: clientId })),
        await t().call(json("/register", JSON.stringify({ redirect_uris: "not a list" }))),
        await t().call(json("/register", JSON.stringify({ redirect_uris: [5] }))),
        await t().call(json("/register", JSON.stringify({ client_name: "x" }))),
        await authorize(t(), { clientId: "", redirectUri: "not a url" }),
      ];
      for (const res of answers) {
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode}: ${res.body}`);
        const body = res.json() as { error: string; error_description: string };
        assertSentence(body.error_description);
      }
    });
  },
);
