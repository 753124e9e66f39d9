/**
 * Fuzzing the agent surface: generated bad requests to every OAuth endpoint (/register, /authorize, /token,
 * /revoke), the sign-in and consent forms, /mcp and the well-known documents, built from the same generators
 * as the /v1 fuzz (test/support/fuzz-generators.ts): malformed JSON and forms, wrong content types, bodies over 1 MB and
 * forms over 16 KB, NUL and unpaired surrogates in every field, huge redirect_uris arrays, odd Unicode.
 *
 * Whatever arrives, the answer comes in time, is never a 5xx, has the endpoint's error shape (RFC 6749
 * `{ error, error_description }`, an HTML page for the forms, JSON-RPC on /mcp), and nothing is stored: every
 * request is one that must store nothing (the seed's real ids only ever travel with a break that the
 * surface refuses before reading them), so the OAuth tables and the company's data must be the same after
 * each one.
 *
 * FUZZ_RUNS=n scales the number of requests (default 2500 / 8 per engine); FUZZ_SEED=n replays a run.
 */
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { before, it } from "node:test";
import fc from "fast-check";
import { percentEscapesAreUtf8 } from "../../src/domain/kernel/storable-text.js";
import { OAUTH_SCOPES } from "../../src/domain/oauth/oauth-protocol.js";
import { describeEachEngine } from "../support/harness.js";
import {
  MCP_RESOURCE,
  REDIRECT_URI,
  authorize,
  consent,
  login,
  newUser,
  obtainTokens,
  pkce,
  redirectParams,
  registerClient,
  requestIdOf,
  type User,
} from "../support/mcp-client.js";
import {
  CONTENT_TYPES,
  RAW_LITERALS,
  anyJson,
  anyString,
  deepValue,
  encodedBody,
  hugeString,
  oddString,
  percentEncode,
  rawBody,
  storedOAuthState,
  storedState,
} from "../support/fuzz-generators.js";

const RUNS = Math.max(1, Math.round(Number(process.env.FUZZ_RUNS ?? 2500) / 8));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const MAX_MS = 2000;
const MB = 1024 * 1024;

/** How an endpoint answers errors: RFC 6749 JSON, an HTML page, or JSON-RPC (/mcp). */
type Surface = "oauth" | "page" | "mcp";

interface FuzzRequest {
  route: string;
  surface: Surface;
  method: "GET" | "POST" | "DELETE" | "OPTIONS";
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** The client's address: many, as from many clients, so that no per-address limit cuts the run short. */
  remoteAddress: string;
  /** Broken by construction: an error status, or (on /authorize, once the client is known) a redirect with error=. */
  mustFail: boolean;
}

interface Seed {
  user: User;
  clientId: string;
  accessToken: string;
  refreshToken: string;
  pendingId: string;
  consentId: string;
  state: string;
}

// ---------------------------------------------------------------------------------------------------------
// Values

/** Text that PostgreSQL cannot store, whatever surrounds it: a NUL, or a surrogate half kept from pairing. */
const poison = fc.constantFrom("\u0000", "\ud800x", "\udbffx", "x\udc00", "x\udfff", "a\u0000b");
const poisoned = fc.tuple(oddString, poison, oddString).map(([a, p, b]) => a + p + b);
/** A form carries no surrogate (URL-encoding turns one into U+FFFD): only a NUL is sure to be refused. */
const nulText = fc
  .tuple(oddString, fc.constantFrom("\u0000", "\u0000\u0000", "%00\u0000"), oddString)
  .map(([a, p, b]) => a + p + b);

/** Strings for fields: odd, huge (up to ~1.1 MB), or plain. */
const fieldText = fc.oneof(
  { arbitrary: oddString, weight: 5 },
  { arbitrary: anyString, weight: 3 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
);

const FORM_TYPES = ["application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8"];
const NOT_FORM_TYPES = CONTENT_TYPES.filter((type) => !type.startsWith("application/x-www-form-urlencoded"));
const NOT_JSON_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/json-patch",
];

/** Form bodies that are not well-formed: stray percent signs, broken UTF-8, nesting, repeats, NUL keys. */
const RAW_FORMS = [
  "%",
  "%zz=1",
  "a=%E0%A4%A",
  "=&&==",
  "a[b]=1&a[c][d]=2",
  "a=1&a=2&a=3",
  "%ED%A0%80=%ED%A0%80",
  "x%00=1",
  "\u0000",
  "a=%C0%AF",
  "&".repeat(2000),
  "k=v;k2=v2",
  "a=1&".repeat(1200),
];

/** Form fields: the endpoint's names and others, each value a string. */
function formFields(names: string[]): fc.Arbitrary<[string, string][]> {
  const name = fc.oneof({ arbitrary: fc.constantFrom(...names), weight: 5 }, { arbitrary: oddString, weight: 1 });
  return fc.array(fc.tuple(name, fieldText), { maxLength: 6 });
}

const encodeForm = (fields: [string, string][]) =>
  fields
    .map(
      ([k, v]) =>
        `${encodeURIComponent(k.replace(/[\ud800-\udfff]/gu, "\ufffd"))}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/gu, "\ufffd"))}`,
    )
    .join("&");

/**
 * A form body that the surface must refuse before any handler reads it: a NUL in one field (key or value),
 * more than the form's limit, or not a form at all. Safe to send with the seed's real ids.
 */
function refusedForm(
  base: fc.Arbitrary<[string, string][]>,
  limitBytes: number,
): fc.Arbitrary<{ payload: string; contentType: string }> {
  return fc.oneof(
    fc.tuple(base, nulText, fc.boolean()).map(([fields, bad, asKey]) => ({
      payload: encodeForm([...fields, asKey ? [bad, "1"] : ["zz", bad]] as [string, string][]),
      contentType: "application/x-www-form-urlencoded",
    })),
    fc.tuple(base, fc.integer({ min: limitBytes + 1, max: limitBytes * 3 })).map(([fields, size]) => ({
      payload: encodeForm([...fields, ["pad", "p".repeat(size)]] as [string, string][]),
      contentType: "application/x-www-form-urlencoded",
    })),
    fc
      .tuple(base, fc.constantFrom(...NOT_FORM_TYPES.filter((t) => t !== "")))
      .map(([fields, contentType]) => ({ payload: encodeForm(fields), contentType })),
  );
}

/** Any form body, well-formed or not, with mostly the right content type. */
function anyForm(
  base: fc.Arbitrary<[string, string][]>,
): fc.Arbitrary<{ payload: string; contentType: string | undefined }> {
  return fc.oneof(
    {
      arbitrary: fc
        .tuple(base, fc.constantFrom(...FORM_TYPES))
        .map(([fields, contentType]) => ({ payload: encodeForm(fields), contentType })),
      weight: 6,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom(...RAW_FORMS), fc.constantFrom(...FORM_TYPES))
        .map(([payload, contentType]) => ({ payload, contentType })),
      weight: 2,
    },
    { arbitrary: encodedBody(anyJson), weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------------------
// The endpoints

type ModelRequest = Omit<FuzzRequest, "route" | "surface" | "remoteAddress">;

interface Model {
  route: string;
  surface: Surface;
  weight?: number;
  requests: fc.Arbitrary<ModelRequest>;
}

function models(seed: Seed): Model[] {
  const formPost = (
    url: string,
    body: { payload: string; contentType: string | undefined },
    mustFail: boolean,
  ): ModelRequest => ({
    method: "POST",
    url,
    headers: body.contentType === undefined ? {} : { "content-type": body.contentType },
    payload: body.payload,
    mustFail,
  });

  // /register: never a registration the service accepts; each body carries at least one break.
  const goodMetadata = fc.record(
    {
      client_name: fc.oneof(fc.constant("Fuzz client"), oddString),
      redirect_uris: fc.constant([REDIRECT_URI]),
      token_endpoint_auth_method: fc.constant("none"),
      grant_types: fc.constant(["authorization_code", "refresh_token"]),
      response_types: fc.constant(["code"]),
      client_uri: fc.constant("https://app.example/"),
      scope: fc.oneof(fc.constant("read:invoices"), oddString),
      contacts: fc.array(oddString, { maxLength: 3 }),
      software_id: oddString,
      jwks: fc.oneof(fc.constant({ keys: [] }), anyJson),
    },
    { requiredKeys: ["redirect_uris", "token_endpoint_auth_method"] },
  );
  type Metadata = Record<string, unknown>;
  const metadataBreak: fc.Arbitrary<(m: Metadata) => void> = fc.oneof(
    // text that cannot be stored, in a field the SDK reads or one it would drop, or in a key
    fc
      .tuple(fc.constantFrom("client_name", "scope", "software_id", "zz_unknown", "redirect_uris"), poisoned)
      .map(([key, bad]) => (m: Metadata) => {
        m[key] = key === "redirect_uris" ? [`https://app.example/${bad}`] : bad;
      }),
    poisoned.map((bad) => (m: Metadata) => void (m[bad] = 1)),
    fc.tuple(poisoned, deepValue).map(
      ([bad, deep]) =>
        (m: Metadata) =>
          void (m.jwks = { keys: [{ kid: bad }], deep }),
    ),
    // too many, too long or unacceptable redirect URIs
    fc
      .integer({ min: 11, max: 6000 })
      .map(
        (n) => (m: Metadata) =>
          void (m.redirect_uris = Array.from({ length: n }, (_, i) => `https://app.example/cb/${i}`)),
      ),
    fc
      .integer({ min: 2001, max: 50_000 })
      .map((n) => (m: Metadata) => void (m.redirect_uris = [`https://app.example/${"a".repeat(n - 20)}`])),
    fc
      .constantFrom(
        [],
        ["http://evil.example/cb"],
        ["https://app.example/cb#frag"],
        ["javascript:alert(1)"],
        "https://app.example/cb",
        [null],
      )
      .map((uris) => (m: Metadata) => void (m.redirect_uris = uris)),
    // too long a name, too much metadata (up to past 1 MB), nesting too deep, a confidential client
    fc.integer({ min: 201, max: 5000 }).map((n) => (m: Metadata) => void (m.client_name = "\u00e9".repeat(n))),
    hugeString.filter((s) => s.length > 16 * 1024).map((s) => (m: Metadata) => void (m.policy_uri = s)),
    // (as JSON text: rawBody below nests deeper than JSON.stringify can write)
    fc.integer({ min: 11, max: 1500 }).map((depth) => (m: Metadata) => {
      let value: unknown = {};
      for (let i = 0; i < depth; i++) value = [value];
      m.jwks = value;
    }),
    fc
      .constantFrom("client_secret_post", "client_secret_basic", "private_key_jwt", "")
      .map((method) => (m: Metadata) => void (m.token_endpoint_auth_method = method)),
  );
  const brokenMetadata = fc
    .tuple(goodMetadata, fc.array(metadataBreak, { minLength: 1, maxLength: 3 }))
    .map(([base, breaks]) => {
      const metadata: Metadata = { ...base };
      for (const apply of breaks) apply(metadata);
      return metadata;
    });
  const registerBody = fc.oneof(
    {
      arbitrary: brokenMetadata.map((m) => ({
        payload: JSON.stringify(m),
        contentType: "application/json" as string | undefined,
      })),
      weight: 8,
    },
    {
      arbitrary: rawBody(
        (lit) =>
          `{"redirect_uris":["${REDIRECT_URI}"],"token_endpoint_auth_method":"none","client_name":${lit},"redirect_uris":${lit}}`,
      ),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(goodMetadata, fc.constantFrom(...NOT_JSON_TYPES))
        .map(([m, contentType]) => ({ payload: JSON.stringify(m), contentType: contentType as string | undefined })),
      weight: 1,
    },
    {
      arbitrary: goodMetadata.map((m) => ({
        payload: JSON.stringify({ ...m, pad: "x".repeat(MB + 10) }),
        contentType: "application/json" as string | undefined,
      })),
      weight: 1,
    },
  );

  // /authorize: the seed's client, with at least one break the SDK or the service refuses.
  const authorizeBase = fc.record({
    response_type: fc.constant("code"),
    client_id: fc.constant(seed.clientId),
    redirect_uri: fc.constant(REDIRECT_URI),
    code_challenge: fc.constant(pkce().challenge),
    code_challenge_method: fc.constant("S256"),
    state: fc.oneof(fc.constant("fuzz"), oddString),
    resource: fc.constant(MCP_RESOURCE),
  });
  type Params = Record<string, string | undefined>;
  const authorizeBreak: fc.Arbitrary<(p: Params) => void> = fc.oneof(
    fc.tuple(fc.constantFrom("client_id", "redirect_uri", "code_challenge", "state", "scope", "resource"), nulText).map(
      ([key, bad]) =>
        (p: Params) =>
          void (p[key] = bad),
    ),
    oddString.filter((id) => id !== seed.clientId).map((id) => (p: Params) => void (p.client_id = id)),
    fc
      .oneof(oddString, fc.constantFrom("http://127.0.0.1:4321/other", "https://evil.example/cb", `${REDIRECT_URI}/x`))
      .filter((u) => u.trim() !== REDIRECT_URI)
      .map((uri) => (p: Params) => void (p.redirect_uri = uri)),
    fc
      .constantFrom("plain", "s256", "", "S256 ")
      .map((method) => (p: Params) => void (p.code_challenge_method = method)),
    fc.constant((p: Params) => void (p.code_challenge = undefined)),
    // RFC 7636, 4.2: 43 to 128 characters of the base64url alphabet, or the flow could never finish.
    fc
      .oneof(
        fc.constantFrom(
          "",
          "a".repeat(42),
          "a".repeat(129),
          `${pkce().challenge}=`,
          `${"a".repeat(42)}+`,
          `${"a".repeat(42)}/`,
          `${"a".repeat(42)}.`,
          `${"a".repeat(42)}~`,
        ),
        fc.string({ minLength: 43, maxLength: 60 }).filter((c) => !/^[A-Za-z0-9_-]+$/.test(c)),
      )
      .map((challenge) => (p: Params) => void (p.code_challenge = challenge)),
    fc.constantFrom("token", "code id_token", "", "CODE").map((type) => (p: Params) => void (p.response_type = type)),
    oddString
      .filter((s) => s.split(" ").some((scope) => !(OAUTH_SCOPES as readonly string[]).includes(scope)))
      .map((scope) => (p: Params) => void (p.scope = scope)),
    fc
      .oneof(oddString, fc.constantFrom("https://other.example/mcp", "not a url", `${MCP_RESOURCE}/x`))
      .filter((r) => r.replace(/\/+$/, "") !== MCP_RESOURCE)
      .map((r) => (p: Params) => void (p.resource = r)),
  );
  const authorizeParams = fc
    .tuple(authorizeBase, fc.array(authorizeBreak, { minLength: 1, maxLength: 2 }))
    .map(([base, breaks]) => {
      const params: Params = { ...base };
      for (const apply of breaks) apply(params);
      return Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
    });
  const query = (pairs: [string, string][]) =>
    pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join("&");

  const tokenFields = [
    "grant_type",
    "client_id",
    "code",
    "code_verifier",
    "redirect_uri",
    "resource",
    "refresh_token",
    "scope",
  ];
  // No real code or refresh token ever goes in: whatever the rest says, no grant can succeed.
  const tokenBase = fc
    .record(
      {
        grant_type: fc.constantFrom("authorization_code", "refresh_token", "client_credentials", "password", ""),
        client_id: fc.oneof(fc.constant(seed.clientId), oddString),
        code: fc.oneof(oddString, fc.constant("not-a-code")),
        code_verifier: fc.constant(pkce().verifier),
        redirect_uri: fc.constant(REDIRECT_URI),
        resource: fc.oneof(fc.constant(MCP_RESOURCE), oddString),
        refresh_token: fc.oneof(oddString, fc.constant("mcp_rt_fuzz")),
        scope: fc.oneof(fc.constant("read:invoices"), oddString),
      },
      { requiredKeys: ["grant_type", "client_id"] },
    )
    .chain((base) => formFields(tokenFields).map((extra) => [...Object.entries(base), ...extra] as [string, string][]));

  const loginBase = (id: string) =>
    fc
      .tuple(fc.oneof(fc.constant(seed.user.email), oddString), fc.oneof(fc.constant(seed.user.password), oddString))
      .map(
        ([email, password]) =>
          [
            ["request_id", id],
            ["email", email],
            ["password", password],
          ] as [string, string][],
      );
  const fakeId = fc.oneof(oddString, fc.constantFrom("", "no-such-request", "a".repeat(43)));

  // /mcp: reads with any arguments; writes only with text no tool may store, so that nothing is written.
  const rpc = (method: fc.Arbitrary<string>, params: fc.Arbitrary<unknown>) =>
    fc.record({
      jsonrpc: fc.constant("2.0"),
      id: fc.oneof(fc.integer(), oddString, fc.constant(null)),
      method,
      params,
    });
  const readCall = fc.record({
    name: fc.constantFrom(
      "list_contracts",
      "get_contract",
      "get_contract_pricing",
      "list_usage_events",
      "get_usage_event",
      "list_invoices",
      "get_invoice",
      "list_customers",
      "zz_unknown_tool",
    ),
    arguments: fc.oneof(
      fc.dictionary(
        fc.constantFrom(
          "contract_id",
          "event_id",
          "number",
          "status",
          "contract",
          "from",
          "to",
          "limit",
          "starting_after",
          "external_id",
        ),
        fc.oneof(fieldText, anyJson),
        { maxKeys: 3 },
      ),
      anyJson,
    ),
  });
  const poisonedWrite = fc.oneof(
    poisoned.map((name) => ({ name: "create_customer", arguments: { name } })),
    poisoned.map((customer_id) => ({ name: "create_sample_contract", arguments: { customer_id } })),
    poisoned.map((event_id) => ({
      name: "submit_usage",
      arguments: {
        events: [
          {
            external_contract_id: "c",
            event_id,
            metric: "domestic_wire",
            quantity: 1,
            timestamp: "2026-03-20T10:00:00Z",
          },
        ],
      },
    })),
    poisoned.map((contract_id) => ({
      name: "add_pricing_rule",
      arguments: { contract_id, rule: { metric: "domestic_wire", amount: "1.00" } },
    })),
    poisoned.map((name) => ({
      name: "project_invoice",
      arguments: { external_contract_id: name, billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" },
    })),
  );
  const message = fc.oneof(
    { arbitrary: rpc(fc.constant("tools/call"), readCall), weight: 4 },
    { arbitrary: rpc(fc.constant("tools/call"), poisonedWrite), weight: 4 },
    {
      arbitrary: rpc(
        fc.oneof(
          fc.constantFrom("tools/list", "initialize", "ping", "resources/list", "notifications/initialized"),
          oddString,
        ),
        anyJson,
      ),
      weight: 2,
    },
  );
  const mcpBody = fc.oneof(
    {
      arbitrary: message.map((m) => ({
        payload: JSON.stringify(m),
        contentType: "application/json" as string | undefined,
      })),
      weight: 6,
    },
    {
      arbitrary: fc
        .array(message, { minLength: 1, maxLength: 4 })
        .map((m) => ({ payload: JSON.stringify(m), contentType: "application/json" as string | undefined })),
      weight: 1,
    },
    {
      arbitrary: rawBody(
        (lit) =>
          `{"jsonrpc":"2.0","id":${lit},"method":"tools/call","params":{"name":"get_contract","arguments":{"contract_id":${lit}}}}`,
      ),
      weight: 2,
    },
    { arbitrary: encodedBody(anyJson), weight: 2 },
    {
      arbitrary: fc.constant({
        payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(MB) } }),
        contentType: "application/json" as string | undefined,
      }),
      weight: 1,
    },
  );
  const mcpAuth = fc.oneof(
    { arbitrary: fc.constant({ authorization: `Bearer ${seed.accessToken}` }), weight: 8 },
    {
      arbitrary: fc.constantFrom<Record<string, string>>(
        {},
        { authorization: "Bearer" },
        { authorization: "Basic dXNlcjpwYXNz" },
        { authorization: `Bearer ${seed.refreshToken}` },
        { authorization: "Bearer mcp_at_\u00e9\u00e8" },
        { authorization: `Bearer ${"k".repeat(5000)}` },
      ),
      weight: 2,
    },
  );
  const accept = fc.oneof(
    { arbitrary: fc.constant("application/json, text/event-stream"), weight: 8 },
    { arbitrary: fc.constantFrom("application/json", "text/event-stream", "*/*", ""), weight: 1 },
  );

  const WELL_KNOWN = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
  ];

  return [
    {
      route: "POST /register",
      surface: "oauth",
      weight: 3,
      requests: registerBody.map((body) => formPost("/register", body, true)),
    },
    {
      route: "GET /authorize",
      surface: "oauth",
      weight: 2,
      requests: authorizeParams.map((pairs) => ({
        method: "GET" as const,
        url: `/authorize?${query(pairs)}`,
        headers: {},
        mustFail: true,
      })),
    },
    {
      route: "POST /authorize",
      surface: "oauth",
      requests: fc
        .oneof(
          authorizeParams.map((pairs) => ({
            payload: encodeForm(pairs),
            contentType: "application/x-www-form-urlencoded" as string | undefined,
          })),
          refusedForm(
            authorizeBase.map((b) => Object.entries(b) as [string, string][]),
            100 * 1024,
          ),
        )
        .map((body) => formPost("/authorize", body, true)),
    },
    {
      route: "POST /token",
      surface: "oauth",
      weight: 2,
      requests: fc
        .oneof(anyForm(tokenBase), refusedForm(tokenBase, 100 * 1024))
        .map((body) => formPost("/token", body, true)),
    },
    {
      // A made-up token with a known client is "revoked" (RFC 7009: 200); nothing is stored either way.
      route: "POST /revoke",
      surface: "oauth",
      requests: fc
        .oneof(
          anyForm(
            fc
              .record({
                token: fc.oneof(oddString, fc.constant("mcp_at_fuzz")),
                client_id: fc.oneof(fc.constant(seed.clientId), oddString),
              })
              .chain((b) =>
                formFields(["token", "client_id", "token_type_hint"]).map(
                  (extra) => [...Object.entries(b), ...extra] as [string, string][],
                ),
              ),
          ),
          refusedForm(
            fc.constant([
              ["token", seed.accessToken],
              ["client_id", seed.clientId],
            ] as [string, string][]),
            100 * 1024,
          ),
        )
        .map((body) => formPost("/revoke", body, false)),
    },
    {
      // Made-up request ids, or the seed's real one with a break refused before the form is read.
      route: "POST /oauth/login",
      surface: "page",
      requests: fc
        .oneof(anyForm(fakeId.chain(loginBase)), refusedForm(loginBase(seed.pendingId), 16 * 1024))
        .map((body) => formPost("/oauth/login", body, true)),
    },
    {
      route: "POST /oauth/consent",
      surface: "page",
      requests: fc
        .oneof(
          anyForm(
            fc.tuple(fakeId, fc.oneof(fc.constantFrom("allow", "deny"), oddString)).map(
              ([id, decision]) =>
                [
                  ["request_id", id],
                  ["decision", decision],
                ] as [string, string][],
            ),
          ),
          refusedForm(
            fc.constant([
              ["request_id", seed.consentId],
              ["decision", "allow"],
            ] as [string, string][]),
            16 * 1024,
          ),
        )
        .map((body) => formPost("/oauth/consent", body, true)),
    },
    {
      route: "POST /mcp",
      surface: "mcp",
      weight: 3,
      requests: fc.tuple(mcpBody, mcpAuth, accept).map(([body, auth, acceptHeader]) => ({
        method: "POST" as const,
        url: "/mcp",
        headers: {
          ...auth,
          ...(body.contentType === undefined ? {} : { "content-type": body.contentType }),
          ...(acceptHeader ? { accept: acceptHeader } : {}),
        },
        payload: body.payload,
        mustFail: false,
      })),
    },
    {
      route: "GET|DELETE /mcp",
      surface: "mcp",
      requests: fc
        .tuple(
          fc.constantFrom("GET" as const, "DELETE" as const),
          fc.option(fc.constantFrom(...RAW_LITERALS), { nil: undefined }),
        )
        .map(([method, payload]) => ({
          method,
          url: "/mcp",
          headers: {
            authorization: `Bearer ${seed.accessToken}`,
            ...(payload === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(payload === undefined ? {} : { payload }),
          mustFail: true,
        })),
    },
    {
      route: "the well-known documents",
      surface: "oauth",
      requests: fc
        .tuple(
          fc.constantFrom(...WELL_KNOWN),
          fc.constantFrom("GET" as const, "POST" as const, "DELETE" as const, "OPTIONS" as const),
          fc.option(oddString, { nil: undefined }),
          fc.option(encodedBody(anyJson), { nil: undefined }),
        )
        .map(
          ([path, method, q, body]): ModelRequest => ({
            method,
            url: q === undefined ? path : `${path}?${percentEncode(q)}=${percentEncode(q)}`,
            headers: body?.contentType === undefined ? {} : { "content-type": body.contentType },
            ...(body === undefined || method === "GET" ? {} : { payload: body.payload }),
            mustFail: false,
          }),
        ),
    },
  ];
}

function fuzzRequests(seed: Seed): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    ...models(seed).map((m) => ({
      arbitrary: fc
        .tuple(m.requests, fc.ipV4())
        .map(([r, remoteAddress]) => withShortString({ ...r, remoteAddress, route: m.route, surface: m.surface })),
      weight: m.weight ?? 1,
    })),
  );
}

/** fast-check prints a failing request with this: long strings are cut. */
function withShortString(request: FuzzRequest): FuzzRequest {
  const cut = (text: string, max: number) =>
    text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
  Object.defineProperty(request, fc.toStringMethod, {
    value: () =>
      `${request.method} ${cut(request.url, 300)} from ${request.remoteAddress} headers=${cut(JSON.stringify(request.headers), 200)}${request.payload === undefined ? "" : ` body=${cut(JSON.stringify(request.payload), 400)}`}`,
  });
  return request;
}

// ---------------------------------------------------------------------------------------------------------
// Checking one answer

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

function parsed(res: Answer): Record<string, unknown> {
  let body: unknown;
  assert.doesNotThrow(
    () => (body = JSON.parse(res.body)),
    `a ${res.statusCode} whose body is not JSON: ${res.body.slice(0, 200)}`,
  );
  assert.ok(
    body !== null && typeof body === "object",
    `a ${res.statusCode} whose body is not an object: ${res.body.slice(0, 200)}`,
  );
  return body as Record<string, unknown>;
}

/** RFC 6749, 5.2 (and RFC 7591, 3.2.2): `{ error: code, error_description: sentence }`. */
function assertOAuthError(res: Answer): void {
  const body = parsed(res);
  assert.match(
    String(body.error),
    /^[a-z_]+$/,
    `a ${res.statusCode} without an OAuth error code: ${res.body.slice(0, 200)}`,
  );
  assert.equal(
    typeof body.error_description,
    "string",
    `a ${res.statusCode} without error_description: ${res.body.slice(0, 200)}`,
  );
  assertDescribed(String(body.error_description));
}

/** A sentence, not a validator's output (it may quote what was sent, so brackets inside are the sender's). */
function assertDescribed(description: string): void {
  assert.doesNotMatch(description, /^\s*(ZodError:\s*)?[[{]/, `a validator's output: ${description.slice(0, 200)}`);
  assert.doesNotMatch(
    description,
    /invalid_type|invalid_value|Invalid input: expected|"path":|"code":/,
    `a validator's wording: ${description.slice(0, 200)}`,
  );
}

function assertAnswer(request: FuzzRequest, res: Answer, ms: number): void {
  const summary = `${res.statusCode} ${String(res.headers["content-type"])}: ${res.body.slice(0, 300)}`;
  assert.ok(res.statusCode < 500, `answered ${summary}`);
  assert.ok(ms < MAX_MS, `took ${ms.toFixed(0)} ms (limit ${MAX_MS} ms)`);
  if (request.mustFail) {
    const location = String(res.headers.location ?? "");
    const failed =
      res.statusCode >= 400 ||
      (res.statusCode === 302 && location.startsWith(REDIRECT_URI) && new URL(location).searchParams.has("error"));
    assert.ok(failed, `a broken request answered ${summary} ${location}`);
  }
  if (res.statusCode === 302) {
    assert.ok(
      String(res.headers.location).startsWith(REDIRECT_URI),
      `a redirect elsewhere: ${String(res.headers.location)}`,
    );
    const description = new URL(String(res.headers.location)).searchParams.get("error_description");
    if (description !== null) assertDescribed(description);
  }
  if (res.statusCode < 400) return;
  if (request.url.includes("%00")) {
    // The HTTP app refuses a NUL in any URL before routing, in the API's shape (http-app.ts).
    assert.equal(parsed(res).code, "invalid_request", summary);
  } else if (!percentEscapesAreUtf8(request.url)) {
    // And escapes that are not UTF-8 text, the same way (storable-text.ts).
    assert.equal(parsed(res).code, "invalid_encoding", summary);
  } else if (request.surface === "page") {
    assert.match(String(res.headers["content-type"]), /^text\/html/, summary);
    assert.match(res.body, /<h1>[^<]+<\/h1>/, summary);
  } else if (request.surface === "mcp" && res.statusCode !== 401 && res.statusCode !== 403) {
    const body = parsed(res) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; id?: unknown };
    assert.equal(body.jsonrpc, "2.0", summary);
    assert.equal(typeof body.error?.code, "number", summary);
    assert.equal(typeof body.error?.message, "string", summary);
  } else {
    assertOAuthError(res);
  }
}

// ---------------------------------------------------------------------------------------------------------

describeEachEngine(
  "fuzz: bad requests to every OAuth and MCP endpoint",
  (t) => {
    let seed: Seed;
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
              state: "seed-state",
            })
          ).body,
        );
      const pendingId = await started();
      const consentId = requestIdOf((await login(t(), await started(), user.email, user.password)).body);
      seed = {
        user,
        clientId,
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        pendingId,
        consentId,
        state: "seed-state",
      };
    });

    it(`answers ${RUNS} generated bad requests in time, never 5xx, in each endpoint's error shape, storing nothing`, {
      timeout: 30 * 60_000,
    }, async (tctx) => {
      const statuses = new Map<string, number>();
      const startedAt = performance.now();
      await fc.assert(
        fc.asyncProperty(fuzzRequests(seed), async (request) => {
          const oauthBefore = await storedOAuthState(t());
          const companyBefore = await storedState(t(), seed.user.companyId);
          const started = performance.now();
          const res = await t().app.http.inject({
            method: request.method,
            url: request.url,
            headers: request.headers,
            remoteAddress: request.remoteAddress,
            ...(request.payload === undefined ? {} : { payload: request.payload }),
          });
          const ms = performance.now() - started;
          const key = `${request.route} ${res.statusCode}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          assertAnswer(request, res, ms);
          assert.equal(
            await storedOAuthState(t()),
            oauthBefore,
            `the OAuth tables changed (answered ${res.statusCode})`,
          );
          assert.equal(
            await storedState(t(), seed.user.companyId),
            companyBefore,
            `the company's data changed (answered ${res.statusCode})`,
          );
        }),
        { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
      tctx.diagnostic(
        `${RUNS} requests in ${((performance.now() - startedAt) / 1000).toFixed(1)} s: ${[...statuses]
          .sort()
          .map(([k, n]) => `${k}: ${n}`)
          .join("; ")}`,
      );
    });

    it("leaves the seed's authorizations as they were: its sign-in and consent still go through", async () => {
      const consentPage = await login(t(), seed.pendingId, seed.user.email, seed.user.password);
      assert.equal(consentPage.statusCode, 200, consentPage.body);
      const params = redirectParams(await consent(t(), seed.consentId, "allow"));
      assert.ok(params.get("code"));
      assert.equal(params.get("state"), seed.state);
    });
  },
  // No failure budget: the run signs in with made-up request ids, and must not be cut short by a 429.
  { env: { BILLING_AUTH_FAILURES: "off" } },
);
