// What the service answers to requests at the edges of HTTP (docs/api.md, "Errors"): a method a path does not
// take (405 with Allow), a path nothing serves (404), a URL or headers too long (414, 431), a body without a
// Content-Type (415); always our own `{ error, code }`, never a framework's code.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { before, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";

/** Sends raw bytes and returns the raw answer (the connection closes after it, or after 15 s: status 0). */
function raw(port: number, request: string | Buffer): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let out = "";
    const done = () => {
      const [head = "", body = ""] = [out.slice(0, out.indexOf("\r\n\r\n")), out.slice(out.indexOf("\r\n\r\n") + 4)];
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body });
    };
    socket.on("data", (chunk) => (out += chunk.toString("latin1")));
    socket.on("close", done);
    socket.on("error", () => undefined);
    // Long enough for a first request to /mcp, which loads the MCP SDK, on a busy machine.
    setTimeout(() => socket.destroy(), 15_000).unref();
  });
}

describeEachEngine("HTTP edges: 405, 404, 414, 431, 415, in our words", (t) => {
  let port = 0;
  let key = "";
  before(async () => {
    port = Number(new URL(await t().app.http.listen({ port: 0, host: "127.0.0.1" })).port);
    ({ key } = await t().newCompany());
  });
  const request = (line: string, extra = "") =>
    `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n${extra}\r\n`;

  it("answers a method a known path does not take with 405 and Allow, and an unknown path with 404", async () => {
    for (const method of ["TRACE", "QUERY", "PATCH", "PUT", "OPTIONS", "PROPFIND"]) {
      const res = await raw(port, request(`${method} /v1/billing/customers`));
      assert.equal(res.status, 405, `${method}: ${res.body}`);
      assert.match(res.headers, /\r\nallow: get, head, post/);
      assert.equal(JSON.parse(res.body).code, "method_not_allowed");
      const unknown = await raw(port, request(`${method} /v1/billing/nothing-here`));
      assert.equal(unknown.status, 404, `${method} on an unknown path: ${unknown.body}`);
      assert.deepEqual(JSON.parse(unknown.body), { error: "Not found", code: "not_found" });
    }
    const del = await raw(port, request("DELETE /v1/billing/invoices/INV-000001"));
    assert.equal(del.status, 405);
    assert.match(del.headers, /\r\nallow: get, head\r\n/);
  });

  it("answers 414 for a URL too long, 431 for headers too large, 415 for a body without a Content-Type", async () => {
    const param = await raw(port, request(`GET /v1/billing/usage/${"a".repeat(3000)}`));
    assert.equal(param.status, 414, param.body);
    assert.equal(JSON.parse(param.body).code, "uri_too_long");
    const line = await raw(port, request(`GET /v1/billing/usage?x=${"a".repeat(20_000)}`));
    assert.equal(line.status, 414, line.body);
    assert.equal(JSON.parse(line.body).code, "uri_too_long");
    const headers = await raw(port, request("GET /v1/billing/usage", `X-Big: ${"a".repeat(20_000)}\r\n`));
    assert.equal(headers.status, 431, headers.body);
    assert.equal(JSON.parse(headers.body).code, "headers_too_large");
    const untyped = await raw(
      port,
      `POST /v1/billing/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\nContent-Length: 13\r\n\r\n{"name":"x"}\n`,
    );
    assert.equal(untyped.status, 415, untyped.body);
    assert.equal(JSON.parse(untyped.body).code, "unsupported_media_type");
  });

  it("never lets a framework's code or wording reach a client, across odd requests", async () => {
    const odd = [
      request("GET /v1/billing/usage/%E0%A4%A"),
      request(`GET /v1/billing/contracts/${"%41".repeat(2100)}`),
      request("GET /v1/billing/customers?limit=%FF"),
      request("POST /v1/billing/customers", "Content-Type: application/json\r\nContent-Length: 0\r\n"),
      request("POST /v1/billing/customers", "Content-Type: application/json\r\nContent-Length: 5\r\n") + "{nope",
      request("POST /v1/billing/customers", "Content-Type: text/plain\r\nContent-Length: 2\r\n") + "hi",
      request("POST /v1/billing/customers", "Content-Type: application/json\r\nContent-Length: 2\r\n") + "{}",
      request("POST /v1/billing/customers", "Content-Type: application/json; charset=latin1\r\nContent-Length: 2\r\n") +
        "{}",
      request("POST /v1/billing/customers", "Content-Type: \r\nContent-Length: 2\r\n") + "{}",
      request("SEARCH /v1/billing/customers"),
      request("GET /v1/billing/customers", "Content-Length: abc\r\n"),
      "GARBAGE\r\n\r\n",
      request("POST /mcp", "Content-Length: 2\r\n") + "{}",
      request("PUT /docs"),
    ];
    for (const text of odd) {
      const res = await raw(port, text);
      assert.ok(res.status >= 400 && res.status < 500, `${text.slice(0, 80)}: ${res.status} ${res.body.slice(0, 200)}`);
      assert.doesNotMatch(res.body, /fst_err|FST_/i, text.slice(0, 80));
    }
  });
});
