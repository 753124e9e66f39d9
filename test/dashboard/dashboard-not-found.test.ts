/**
 * Unknown URLs: a browser (Accept: text/html) outside the API's paths gets a 404 page in the dashboard's layout
 * with a link home; the API, MCP, OAuth and service paths keep the JSON 404 `{ error, code }` for everyone.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { signUp } from "../support/dashboard-client.js";

// What a browser sends when it follows a link.
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

function browserGet(t: TestApp, url: string, cookie?: string): Promise<LightMyRequestResponse> {
  return t.call({ method: "GET", url, headers: { accept: BROWSER_ACCEPT, ...(cookie ? { cookie } : {}) } });
}

function assertJsonNotFound(res: LightMyRequestResponse, url: string): void {
  assert.equal(res.statusCode, 404, url);
  assert.match(String(res.headers["content-type"]), /^application\/json/, url);
  assert.deepEqual(res.json(), { error: "Not found", code: "not_found" }, url);
}

describeEachEngine("dashboard: unknown URLs", (t) => {
  it("shows a signed-out browser a 404 page in the dashboard's layout with a link to the dashboard", async () => {
    const res = await browserGet(t(), "/no-such-page?x=1");
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers["content-type"]), /^text\/html; charset=utf-8/);
    assert.match(String(res.headers["content-security-policy"]), /default-src 'none'/);
    assert.match(res.body, /<title>Page not found · Billing<\/title>/);
    assert.match(res.body, /<h1>Page not found<\/h1>/);
    assert.match(res.body, /role="alert"><p>There is no page at <code>\/no-such-page<\/code>\./);
    assert.match(res.body, /<a href="\/">Go to the dashboard<\/a>/);
    assert.doesNotMatch(res.body, /nav class="main"/, "no navigation without a session");
  });

  it("shows a signed-in browser the page with the navigation, escaping the URL", async () => {
    const { client } = await signUp(t);
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    for (const url of ["/customers/deep/nowhere", "/settings/nope", "/%3Cscript%3Ealert(1)%3C%2Fscript%3E"]) {
      const res = await browserGet(t(), url, cookie);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.body, /<nav class="main" aria-label="Main">/, url);
      assert.match(res.body, /<a href="\/">Back to the overview<\/a>/, url);
      assert.doesNotMatch(res.body, /<script>alert/, url);
    }
    const escaped = await browserGet(t(), "/%3Cb%3Ehi", cookie);
    assert.match(escaped.body, /<code>\/%3Cb%3Ehi<\/code>/);
  });

  it("keeps the JSON 404 for the API, MCP, OAuth and service paths, even for a browser", async () => {
    for (const url of [
      "/v1/nope",
      "/v1/billing/nope",
      "/admin/v1/nope",
      "/mcp/nope",
      "/oauth/nope",
      "/.well-known/nope",
      "/authorize/nope",
      "/token/x",
      "/metrics/x",
      "/healthz/x",
      "/docs/x",
    ]) {
      assertJsonNotFound(await browserGet(t(), url), url);
    }
  });

  it("keeps the JSON 404 for clients that do not ask for HTML", async () => {
    for (const accept of [undefined, "*/*", "application/json"]) {
      const res = await t().call({ method: "GET", url: "/no-such-page", headers: accept ? { accept } : {} });
      assertJsonNotFound(res, `Accept: ${accept}`);
    }
  });
});
