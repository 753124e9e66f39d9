import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mcpAvailable } from "./mcp-paths.js";
import { resourceOrigins } from "./mcp-origins.js";

describe("resourceOrigins", () => {
  it("on a loopback URL answers as localhost, 127.0.0.1 and [::1] on the same scheme and port, the configured one first", () => {
    for (const publicUrl of ["http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"]) {
      const origins = resourceOrigins(publicUrl);
      assert.equal(origins.canonical.href, `${publicUrl}/`);
      assert.deepEqual(
        origins.all.map((origin) => origin.href).sort(),
        ["http://127.0.0.1:8080/", "http://[::1]:8080/", "http://localhost:8080/"],
        publicUrl,
      );
      assert.equal(origins.all[0]!.href, `${publicUrl}/`);
    }
  });

  it("picks the origin by Host header: a loopback alias on the same port, anything else the configured one", () => {
    const origins = resourceOrigins("http://localhost:8080");
    assert.equal(origins.of("127.0.0.1:8080").href, "http://127.0.0.1:8080/");
    assert.equal(origins.of("[::1]:8080").href, "http://[::1]:8080/");
    assert.equal(origins.of("LOCALHOST:8080").href, "http://localhost:8080/");
    for (const host of [
      undefined,
      "",
      "127.0.0.1",
      "127.0.0.1:8081",
      "127.0.0.2:8080",
      "evil.example",
      "evil.example:8080",
      "user@127.0.0.1:8080",
    ]) {
      assert.equal(origins.of(host).href, "http://localhost:8080/", String(host));
    }
    // A default port is left out of the Host header, as of URL.host.
    assert.equal(resourceOrigins("http://localhost").of("127.0.0.1").href, "http://127.0.0.1/");
  });

  it("maps the MCP URL under a loopback alias to the configured one, and leaves every other resource alone", () => {
    const origins = resourceOrigins("http://localhost:8080");
    assert.equal(origins.canonicalResource("http://127.0.0.1:8080/mcp"), "http://localhost:8080/mcp");
    assert.equal(origins.canonicalResource("http://[::1]:8080/mcp/"), "http://localhost:8080/mcp");
    for (const resource of [
      "http://localhost:8080/mcp",
      "http://127.0.0.1:8081/mcp",
      "http://127.0.0.1:8080/other",
      "https://127.0.0.1:8080/mcp",
      "https://evil.example/mcp",
    ]) {
      assert.equal(origins.canonicalResource(resource), resource);
    }
  });

  it("on a public URL answers as that origin only", () => {
    const origins = resourceOrigins("https://billing.example.com");
    assert.deepEqual(
      origins.all.map((origin) => origin.href),
      ["https://billing.example.com/"],
    );
    assert.equal(origins.of("127.0.0.1:443").href, "https://billing.example.com/");
    assert.equal(origins.of("localhost").href, "https://billing.example.com/");
    assert.equal(origins.canonicalResource("https://127.0.0.1/mcp"), "https://127.0.0.1/mcp");
    assert.equal(origins.canonicalResource("http://localhost/mcp"), "http://localhost/mcp");
  });
});

describe("mcpAvailable", () => {
  it("serves MCP on https and on the loopback hosts only", () => {
    for (const url of [
      "https://billing.example.com",
      "http://localhost:8080",
      "http://127.0.0.1:8080",
      "http://[::1]:8080",
    ])
      assert.equal(mcpAvailable(url), true, url);
    for (const url of ["http://billing.example.com", "http://10.0.0.7:8080", "http://127.0.0.2:8080"])
      assert.equal(mcpAvailable(url), false, url);
  });
});
