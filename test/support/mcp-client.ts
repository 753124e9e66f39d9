/**
 * Helpers shared by the MCP and OAuth test files: the authorization flow (register, authorize, login,
 * consent, token) and MCP JSON-RPC calls, all through fastify.inject.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "./harness.js";

export type HttpResponse = LightMyRequestResponse;

/** One request through fastify.inject. A non-string payload goes as JSON. */
export function send(t: TestApp, options: { method: "GET" | "POST" | "DELETE"; url: string; headers?: Record<string, string>; payload?: unknown }): Promise<HttpResponse> {
  return t.call({ method: options.method, url: options.url, headers: options.headers ?? {}, ...(options.payload === undefined ? {} : { payload: options.payload as string | object }) });
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
  return send(t, { method: "POST", url, headers: { "content-type": "application/x-www-form-urlencoded" }, payload: body.toString() });
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
export function exchangeCode(t: TestApp, authorized: Authorized, overrides: Record<string, string | undefined> = {}): Promise<HttpResponse> {
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

export function refreshTokens(t: TestApp, clientId: string, refreshToken: string, overrides: Record<string, string | undefined> = {}): Promise<HttpResponse> {
  return tokenRequest(t, { grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken, resource: MCP_RESOURCE, ...overrides });
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
export function mcpRequest(t: TestApp, token: string | undefined, method: string, params: Record<string, unknown> = {}): Promise<HttpResponse> {
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
export async function callTool(t: TestApp, token: string, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const res = await mcpRequest(t, token, "tools/call", { name, arguments: args });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { result?: ToolResult; error?: unknown };
  assert.ok(body.result, `no result: ${res.body}`);
  return body.result;
}

/** A tool call that must succeed; returns its structured content. */
export async function toolOk<T = Record<string, unknown>>(t: TestApp, token: string, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = await callTool(t, token, name, args);
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result)}`);
  assert.ok(result.structuredContent, `${name}: no structuredContent`);
  assert.deepEqual(JSON.parse(result.content[0]!.text), result.structuredContent, "text content mirrors the structured content");
  return result.structuredContent as T;
}

/** A tool call that must fail as a tool error with `code`; returns the error body. */
export async function toolError(t: TestApp, token: string, name: string, args: Record<string, unknown>, code: string): Promise<{ error: string; code: string }> {
  const result = await callTool(t, token, name, args);
  assert.equal(result.isError, true, `${name} should fail with ${code}: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent?.code, code, `${name}: ${JSON.stringify(result.structuredContent)}`);
  assert.equal(typeof result.structuredContent?.error, "string");
  return result.structuredContent as { error: string; code: string };
}
