// Bytes that are not UTF-8 are refused on every surface that takes text (docs/api.md, "Conventions"), with
// 400 `invalid_encoding` (the OAuth endpoints: `invalid_request`, their RFC's code, saying why; MCP: a JSON-RPC
// parse error), rather than kept as U+FFFD: the API's JSON bodies and URLs, the upload's parts, the dashboard's
// forms, MCP bodies and the OAuth forms.
import assert from "node:assert/strict";
import { it } from "node:test";
import { createCustomer, createSampleContract } from "../support/api.js";
import { dashboardCompany, type DashboardClient } from "../support/dashboard-client.js";
import { MALFORMED_UTF8, percentEscaped } from "../support/fuzz-generators.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { plainPdf } from "../support/uploads.js";

const bytes = (...parts: (string | readonly number[])[]) =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))));

/** A multipart body by hand, so that a part's bytes are exactly the ones given. */
function multipartBytes(parts: { name: string; value: Buffer; filename?: string; type?: string }[]): {
  payload: Buffer;
  headers: Record<string, string>;
} {
  const boundary = "----edges0123456789";
  const chunks = parts.flatMap((part) => [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ""}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`,
    ),
    part.value,
    Buffer.from("\r\n"),
  ]);
  return {
    payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  };
}

const cookieOf = (client: DashboardClient) => [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");

describeEachEngine("text that is not UTF-8, on every surface", (t: () => TestApp) => {
  it("the API: a JSON body, a URL's path and query, each malformed sequence", async () => {
    const { key } = await t().newCompany();
    for (const sequence of MALFORMED_UTF8) {
      const res = await t().call({
        method: "POST",
        url: "/v1/billing/customers",
        key,
        payload: bytes('{"name":"A', sequence, 'B"}'),
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { error: "The body is not valid UTF-8 text", code: "invalid_encoding" });
      for (const url of [
        `/v1/billing/usage/a${percentEscaped(Buffer.from(sequence))}`,
        `/v1/billing/customers?starting_after=${percentEscaped(Buffer.from(sequence))}`,
      ]) {
        const get = await t().call({ method: "GET", url, key });
        assert.equal(get.statusCode, 400, `${url}: ${get.body}`);
        assert.equal(get.json().code, "invalid_encoding");
      }
    }
    const listed = await t().call({ method: "GET", url: "/v1/billing/customers", key });
    assert.equal(listed.json().data.length, 0, "nothing was stored");
    // Valid UTF-8, U+FFFD itself included, is taken as sent.
    const kept = await createCustomer(t(), key, { name: "Zoë \ufffd 😀" });
    assert.equal(kept.name, "Zoë \ufffd 😀");
  });

  it("the API's upload: the terms part, as a field or as a file", async () => {
    const { key } = await t().newCompany();
    const pdf = await plainPdf(["An agreement"]);
    for (const asFile of [false, true]) {
      const terms = bytes(
        '{"customer":{"name":"Caf',
        [0xe9],
        '"},"contract_id":"enc-1","start_date":"2026-03-01","currency":"USD","rules":[]}',
      );
      const form = multipartBytes([
        { name: "file", value: pdf, filename: "signed.pdf", type: "application/pdf" },
        {
          name: "terms",
          value: terms,
          ...(asFile ? { filename: "terms.json", type: "application/json; charset=utf-8" } : {}),
        },
      ]);
      const res = await t().call({
        method: "POST",
        url: "/v1/billing/contracts/upload",
        key,
        payload: form.payload,
        headers: form.headers,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, "invalid_encoding");
      assert.match(res.json().error, /terms/);
    }
  });

  it("the dashboard: a form (urlencoded, raw bytes or escapes) and an upload's fields", async () => {
    const { client } = await dashboardCompany(t);
    const csrf = await client.csrf();
    for (const payload of [
      bytes(`_csrf=${encodeURIComponent(csrf)}&name=Caf`, [0xe9]),
      Buffer.from(`_csrf=${encodeURIComponent(csrf)}&name=Caf%E9`),
    ]) {
      const res = await t().call({
        method: "POST",
        url: "/customers",
        payload,
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieOf(client) },
      });
      assert.equal(res.statusCode, 400, res.body.slice(0, 500));
      assert.match(res.body, /not valid UTF-8/);
    }
    const pdf = await plainPdf(["An agreement"]);
    const form = multipartBytes([
      { name: "_csrf", value: Buffer.from(csrf) },
      { name: "customer_name", value: bytes("Caf", [0xe9]) },
      { name: "file", value: pdf, filename: "signed.pdf", type: "application/pdf" },
    ]);
    const upload = await t().call({
      method: "POST",
      url: "/upload-contract",
      payload: form.payload,
      headers: { ...form.headers, cookie: cookieOf(client) },
    });
    assert.equal(upload.statusCode, 400, upload.body.slice(0, 500));
    assert.match(upload.body, /not valid UTF-8/);
  });

  it("MCP: a JSON-RPC body; OAuth: the token, registration and sign-in forms", async () => {
    const { key } = await t().newCompany();
    await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Mcp Enc" })).id);
    const rpc = bytes(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_contracts","arguments":{"x":"',
      [0xc0, 0xaf],
      '"}}}',
    );
    const mcp = await t().call({
      method: "POST",
      url: "/mcp",
      payload: rpc,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
    });
    assert.equal(mcp.statusCode, 400, mcp.body);
    assert.equal(mcp.json().error.code, -32700);
    assert.match(mcp.json().error.message, /not valid UTF-8/);

    const token = await t().call({
      method: "POST",
      url: "/token",
      payload: bytes("grant_type=authorization_code&code=", [0xff]),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    assert.equal(token.statusCode, 400, token.body);
    assert.equal(token.json().error, "invalid_request");
    assert.match(token.json().error_description, /not valid UTF-8/);
    const escaped = await t().call({
      method: "POST",
      url: "/token",
      payload: "grant_type=authorization_code&code=%ED%A0%80",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    assert.equal(escaped.statusCode, 400, escaped.body);
    assert.match(escaped.json().error_description, /not valid UTF-8/);

    const register = await t().call({
      method: "POST",
      url: "/register",
      payload: bytes('{"redirect_uris":["http://127.0.0.1:4321/cb"],"client_name":"A', [0xe2, 0x82], '"}'),
      headers: { "content-type": "application/json" },
    });
    assert.equal(register.statusCode, 400, register.body);
    assert.match(register.json().error_description, /not valid UTF-8/);

    const login = await t().call({
      method: "POST",
      url: "/oauth/login",
      payload: bytes("email=a", [0x80], "@example.com&password=x"),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    assert.equal(login.statusCode, 400, login.body.slice(0, 500));
    assert.match(login.body, /not valid UTF-8/);
  });
});
