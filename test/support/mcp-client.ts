/**
 * Helpers shared by the MCP and OAuth test files: the authorization flow (register, authorize, login,
 * consent, token) and MCP JSON-RPC calls, all through fastify.inject; and, over a real socket, the MCP
 * SDK's own client with an API key or with an OAuth provider that signs in through the service's pages.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "./harness.js";

export type HttpResponse = LightMyRequestResponse;

/** One request through fastify.inject. A non-string payload goes as JSON. */
export function send(
  t: TestApp,
  options: { method: "GET" | "POST" | "DELETE"; url: string; headers?: Record<string, string>; payload?: unknown },
): Promise<HttpResponse> {
  return t.call({
    method: options.method,
    url: options.url,
    headers: options.headers ?? {},
    ...(options.payload === undefined ? {} : { payload: options.payload as string | object }),
  });
}

/** The harness's public URL, and what it makes of it. */
export const BASE = "http://localhost:8080";
export const MCP_RESOURCE = `${BASE}/mcp`;
export const RESOURCE_METADATA_URL = `${BASE}/.well-known/oauth-protected-resource`;
export const REDIRECT_URI = "http://127.0.0.1:4321/callback";
export const ALL_SCOPES = ["read:invoices", "write:invoices"] as const;

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

/** A form POST through inject. */
export function postForm(t: TestApp, url: string, fields: Record<string, string | undefined>): Promise<HttpResponse> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.set(name, value);
  return send(t, {
    method: "POST",
    url,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: body.toString(),
  });
}

/** POST /register with a public client's metadata (overridable); returns the raw response. */
export function register(t: TestApp, metadata: Record<string, unknown> = {}): Promise<HttpResponse> {
  return send(t, {
    method: "POST",
    url: "/register",
    payload: {
      client_name: "Test MCP client",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...metadata,
    },
  });
}

/** Registers a public client; returns its client_id. */
export async function registerClient(t: TestApp, metadata: Record<string, unknown> = {}): Promise<string> {
  const res = await register(t, metadata);
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json() as { client_id: string; client_secret?: string };
  assert.equal(typeof body.client_id, "string");
  assert.equal(body.client_secret, undefined, "a public client gets no secret");
  return body.client_id;
}

export interface AuthorizeParams {
  clientId: string;
  challenge?: string | undefined;
  method?: string | undefined;
  redirectUri?: string | undefined;
  scope?: string | undefined;
  resource?: string | undefined;
  state?: string | undefined;
}

/** GET /authorize with the given parameters (undefined ones left out). */
export function authorize(t: TestApp, params: AuthorizeParams): Promise<HttpResponse> {
  const query = new URLSearchParams();
  const fields: Record<string, string | undefined> = {
    response_type: "code",
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    code_challenge: params.challenge,
    code_challenge_method: params.method,
    scope: params.scope,
    resource: params.resource,
    state: params.state,
  };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) query.set(name, value);
  return send(t, { method: "GET", url: `/authorize?${query.toString()}` });
}

/** The request_id hidden in a login or consent page. */
export function requestIdOf(html: string): string {
  const match = /name="request_id" value="([^"]+)"/.exec(html);
  assert.ok(match, `no request_id in page: ${html.slice(0, 500)}`);
  return match[1]!;
}

/** The query parameters of a redirect (302) response. */
export function redirectParams(res: HttpResponse): URLSearchParams {
  assert.equal(res.statusCode, 302, `expected a redirect, got ${res.statusCode}: ${res.body}`);
  return new URL(String(res.headers.location)).searchParams;
}

export function login(t: TestApp, requestId: string, email: string, password: string): Promise<HttpResponse> {
  return postForm(t, "/oauth/login", { request_id: requestId, email, password });
}

export function consent(t: TestApp, requestId: string, decision: "allow" | "deny"): Promise<HttpResponse> {
  return postForm(t, "/oauth/consent", { request_id: requestId, decision });
}

export function tokenRequest(t: TestApp, fields: Record<string, string | undefined>): Promise<HttpResponse> {
  return postForm(t, "/token", fields);
}

export interface User {
  companyId: string;
  /** A full-access API key of the user's company, to set up data through the API. */
  key: string;
  email: string;
  password: string;
  userId: string;
}

/** A new company with a dashboard user and a full-access API key. */
export async function newUser(t: TestApp): Promise<User> {
  const { companyId, key } = await t.newCompany();
  const email = `user-${randomBytes(4).toString("hex")}@example.com`;
  const password = `pw-${randomBytes(8).toString("hex")}`;
  const user = await t.app.services.access.createUser(companyId, email, password);
  return { companyId, key, email, password, userId: user.id };
}

export interface Authorized {
  clientId: string;
  code: string;
  verifier: string;
  redirectUri: string;
  state: string;
}

/** Register (unless a client is given), authorize, log in, allow: an authorization code and what redeems it. */
export async function authorizationCode(
  t: TestApp,
  user: { email: string; password: string },
  options: { scopes?: readonly string[]; clientId?: string; resource?: string | null; redirectUri?: string } = {},
): Promise<Authorized> {
  const clientId = options.clientId ?? (await registerClient(t));
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString("hex");
  const redirectUri = options.redirectUri ?? REDIRECT_URI;
  const page = await authorize(t, {
    clientId,
    challenge,
    method: "S256",
    redirectUri,
    scope: (options.scopes ?? ALL_SCOPES).join(" "),
    resource: options.resource === null ? undefined : (options.resource ?? MCP_RESOURCE),
    state,
  });
  assert.equal(page.statusCode, 200, page.body);
  const requestId = requestIdOf(page.body);
  const consentPage = await login(t, requestId, user.email, user.password);
  assert.equal(consentPage.statusCode, 200, consentPage.body);
  const decided = await consent(t, requestIdOf(consentPage.body), "allow");
  const params = redirectParams(decided);
  assert.equal(params.get("state"), state);
  const code = params.get("code");
  assert.ok(code, `no code in ${String(decided.headers.location)}`);
  return { clientId, code, verifier, redirectUri, state };
}

/** Redeems a code (as the SDK client would: with redirect_uri and resource). */
export function exchangeCode(
  t: TestApp,
  authorized: Authorized,
  overrides: Record<string, string | undefined> = {},
): Promise<HttpResponse> {
  return tokenRequest(t, {
    grant_type: "authorization_code",
    client_id: authorized.clientId,
    code: authorized.code,
    code_verifier: authorized.verifier,
    redirect_uri: authorized.redirectUri,
    resource: MCP_RESOURCE,
    ...overrides,
  });
}

export function refreshTokens(
  t: TestApp,
  clientId: string,
  refreshToken: string,
  overrides: Record<string, string | undefined> = {},
): Promise<HttpResponse> {
  return tokenRequest(t, {
    grant_type: "refresh_token",
    client_id: clientId,
    refresh_token: refreshToken,
    resource: MCP_RESOURCE,
    ...overrides,
  });
}

/** The whole flow for `user` with `scopes`: tokens and the client they were issued to. */
export async function obtainTokens(
  t: TestApp,
  user: { email: string; password: string },
  scopes: readonly string[] = ALL_SCOPES,
): Promise<TokenResponse & { clientId: string }> {
  const authorized = await authorizationCode(t, user, { scopes });
  const res = await exchangeCode(t, authorized);
  assert.equal(res.statusCode, 200, res.body);
  return { ...(res.json() as TokenResponse), clientId: authorized.clientId };
}

/** Asserts an RFC 6749 error body `{ error, error_description? }` with the status and code. */
export function expectOAuthError(res: HttpResponse, status: number, code: string): void {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`);
  assert.equal((res.json() as { error: string }).error, code, res.body);
}

let rpcId = 0;

/** One JSON-RPC request to POST /mcp (no initialize: the server is stateless). */
export function mcpRequest(
  t: TestApp,
  token: string | undefined,
  method: string,
  params: Record<string, unknown> = {},
): Promise<HttpResponse> {
  return send(t, {
    method: "POST",
    url: "/mcp",
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    payload: { jsonrpc: "2.0", id: ++rpcId, method, params },
  });
}

export interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown> & { code?: string; error?: string };
}

/** tools/call through /mcp; asserts a JSON-RPC result and returns it. */
export async function callTool(
  t: TestApp,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolResult> {
  const res = await mcpRequest(t, token, "tools/call", { name, arguments: args });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { result?: ToolResult; error?: unknown };
  assert.ok(body.result, `no result: ${res.body}`);
  return body.result;
}

/** A tool call that must succeed; returns its structured content. */
export async function toolOk<T = Record<string, unknown>>(
  t: TestApp,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = await callTool(t, token, name, args);
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result)}`);
  assert.ok(result.structuredContent, `${name}: no structuredContent`);
  assert.deepEqual(
    JSON.parse(result.content[0]!.text),
    result.structuredContent,
    "text content mirrors the structured content",
  );
  return result.structuredContent as T;
}

/** A tool call that must fail as a tool error with `code`; returns the error body. */
export async function toolError(
  t: TestApp,
  token: string,
  name: string,
  args: Record<string, unknown>,
  code: string,
): Promise<{ error: string; code: string }> {
  const result = await callTool(t, token, name, args);
  assert.equal(result.isError, true, `${name} should fail with ${code}: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent?.code, code, `${name}: ${JSON.stringify(result.structuredContent)}`);
  assert.equal(typeof result.structuredContent?.error, "string");
  return result.structuredContent as { error: string; code: string };
}

/**
 * A tool call refused before any tool runs: JSON-RPC Invalid params (-32602) with one sentence. Returns
 * the sentence, checked for what a validator's dump would hold (brackets, braces, zod's own wording).
 */
export async function invalidParams(
  t: TestApp,
  token: string,
  name: string,
  args: unknown,
  params?: unknown,
): Promise<string> {
  const res = await mcpRequest(
    t,
    token,
    "tools/call",
    (params ?? { name, arguments: args }) as Record<string, unknown>,
  );
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { result?: unknown; error?: { code: number; message: string } };
  assert.ok(body.error, `${name}: a JSON-RPC error, not ${res.body}`);
  assert.equal(body.error.code, -32602, res.body);
  assertSentence(body.error.message);
  return body.error.message;
}

/** One sentence for a person: no JSON, no list of issues, no validator's wording. */
export function assertSentence(message: string): void {
  assert.ok(message.length > 0 && message.length < 300, message);
  assert.doesNotMatch(message, /[[\]{}]|\n/, `no structure in ${JSON.stringify(message)}`);
  assert.doesNotMatch(
    message,
    /zod|Invalid input|Too (small|big)|expected \w+, received|invalid_type|MCP error/i,
    `no validator wording in ${message}`,
  );
}

/** The redirect URI of the SDK-client tests: nothing listens there, the provider reads the code off the redirect. */
const SDK_REDIRECT_URI = "http://127.0.0.1:48123/callback";

/**
 * An in-memory OAuthClientProvider whose "browser" is fetch: it opens the authorization URL, signs in
 * through the login form, allows on the consent page and keeps the code from the redirect.
 */
export class SignInOAuthProvider implements OAuthClientProvider {
  code: string | undefined;
  authorizationUrl: URL | undefined;
  private stateValue = randomBytes(8).toString("hex");
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier: string | undefined;

  /** `fetchFn` is the browser's network (a test may route a public host name to the local socket). */
  constructor(
    private readonly user: { email: string; password: string },
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  get redirectUrl(): string {
    return SDK_REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK test client",
      redirect_uris: [SDK_REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
  }

  state(): string {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    assert.ok(this.verifier, "no code verifier saved");
    return this.verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrl = url;
    const page = await this.fetchFn(url, { redirect: "manual" });
    assert.equal(page.status, 200, "the authorize step shows the login page");
    const form = (fields: Record<string, string>) => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual" as const,
    });
    const consentPage = await this.fetchFn(
      new URL("/oauth/login", url),
      form({ request_id: requestIdOf(await page.text()), email: this.user.email, password: this.user.password }),
    );
    assert.equal(consentPage.status, 200, "signed in: the consent page");
    const html = await consentPage.text();
    assert.ok(html.includes("read:invoices") && html.includes("write:invoices"), "the consent page lists the scopes");
    const decided = await this.fetchFn(
      new URL("/oauth/consent", url),
      form({ request_id: requestIdOf(html), decision: "allow" }),
    );
    assert.equal(decided.status, 302);
    const location = new URL(decided.headers.get("location")!);
    assert.equal(`${location.origin}${location.pathname}`, SDK_REDIRECT_URI);
    assert.equal(location.searchParams.get("state"), this.stateValue);
    this.code = location.searchParams.get("code") ?? undefined;
    assert.ok(this.code, `no code in ${location.href}`);
  }
}

/** The SDK client connected to `mcpUrl` with `Authorization: Bearer <credential>` (an API key or an access token), as a headless agent is. */
export async function connectWithBearer(mcpUrl: URL, credential: string): Promise<Client> {
  const client = new Client({ name: "headless agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }),
  );
  return client;
}

/**
 * The SDK client connected to `mcpUrl` after the whole OAuth flow as an MCP client does it: the 401, discovery,
 * registration, sign-in and consent (through `provider`), the code for tokens, and a new connection with them.
 */
export async function connectWithOAuth(
  mcpUrl: URL,
  provider: SignInOAuthProvider,
  fetchFn: typeof fetch = fetch,
): Promise<Client> {
  const options = { authProvider: provider, fetch: fetchFn };
  await assert.rejects(
    new Client({ name: "oauth agent", version: "1.0.0" }).connect(new StreamableHTTPClientTransport(mcpUrl, options)),
    UnauthorizedError,
  );
  assert.ok(provider.code, "the flow reached the redirect with a code");
  const transport = new StreamableHTTPClientTransport(mcpUrl, options);
  await transport.finishAuth(provider.code);
  const client = new Client({ name: "oauth agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A customer and a sample contract made through the REST API with `key`; the contract's id. */
export async function seedContract(base: string, key: string, customerName: string): Promise<string> {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const customer = await fetch(`${base}/v1/billing/customers`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: customerName }),
  });
  assert.equal(customer.status, 201, await customer.clone().text());
  const contract = await fetch(`${base}/v1/billing/contracts`, {
    method: "POST",
    headers,
    body: JSON.stringify({ customer_id: ((await customer.json()) as { id: string }).id }),
  });
  assert.equal(contract.status, 201, await contract.clone().text());
  return ((await contract.json()) as { id: string }).id;
}

/** The ids of the contracts `client` lists (list_contracts must succeed). */
export async function listedContracts(client: Client): Promise<string[]> {
  const result = (await client.callTool({ name: "list_contracts", arguments: {} })) as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
  };
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { data: { id: string }[] }).data.map((contract) => contract.id);
}

/** Runs `work` with `client`, then closes the client whatever happened. */
export const closing = async <T>(client: Client, work: (client: Client) => Promise<T>): Promise<T> => {
  try {
    return await work(client);
  } finally {
    await client.close();
  }
};
