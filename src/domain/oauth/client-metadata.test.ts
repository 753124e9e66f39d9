import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NUL_MESSAGE } from "../kernel/storable-text.js";
import { CLIENT_METADATA_LIMITS, clientMetadataProblem } from "./client-metadata.js";

const GOOD = {
  client_name: "Claude",
  redirect_uris: ["http://127.0.0.1:4321/callback"],
  token_endpoint_auth_method: "none",
};

/** Nested arrays `levels` deep around a value (the metadata itself is one more level). */
const nested = (levels: number, leaf: unknown = 1): unknown => {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

describe("client registration limits (RFC 7591 metadata)", () => {
  const cases: [string, Record<string, unknown>, string | undefined, RegExp?][] = [
    ["a public client with one loopback redirect URI", {}, undefined],
    [
      "https, loopback http on any host spelling, a native app's private-use scheme",
      {
        redirect_uris: [
          "https://app.example/cb",
          "http://localhost:3000/cb",
          "http://[::1]:9/cb",
          "com.example.app:/oauth/cb",
        ],
      },
      undefined,
    ],
    [
      "exactly 10 redirect URIs",
      { redirect_uris: Array.from({ length: 10 }, (_, i) => `https://app.example/cb/${i}`) },
      undefined,
    ],
    [
      "11 redirect URIs",
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/cb/${i}`) },
      "invalid_redirect_uri",
      /at most 10 redirect URIs; there are 11/,
    ],
    [
      "10,000 redirect URIs",
      { redirect_uris: Array.from({ length: 10_000 }, () => "https://a.example/") },
      "invalid_client_metadata",
      /at most 16 KB/,
    ],
    [
      "a redirect URI of 2,000 characters",
      { redirect_uris: [`https://app.example/${"a".repeat(2000 - 20)}`] },
      undefined,
    ],
    [
      "a redirect URI of 2,001 characters",
      { redirect_uris: [`https://app.example/${"a".repeat(2001 - 20)}`] },
      "invalid_redirect_uri",
      /at most 2000 characters; one has 2001/,
    ],
    [
      "2,000 characters counted as characters, not UTF-16 units",
      { redirect_uris: [`https://app.example/${"\ud83d\ude00".repeat(2000 - 20)}`] },
      undefined,
    ],
    ["no redirect URI", { redirect_uris: [] }, "invalid_redirect_uri", /at least one/],
    ["redirect_uris missing", { redirect_uris: undefined }, "invalid_redirect_uri", /at least one/],
    ["redirect_uris not an array", { redirect_uris: "https://app.example/cb" }, "invalid_redirect_uri", /at least one/],
    ["a redirect URI that is not a string", { redirect_uris: [42] }, "invalid_redirect_uri", /strings/],
    ["a redirect URI that is not a URL", { redirect_uris: ["not a url"] }, "invalid_redirect_uri", /not a URL/],
    [
      "plain http off loopback",
      { redirect_uris: ["http://evil.example/cb"] },
      "invalid_redirect_uri",
      /loopback hosts only/,
    ],
    ["a fragment", { redirect_uris: ["https://app.example/cb#x"] }, "invalid_redirect_uri", /fragment/],
    [
      "a NUL in a redirect URI",
      { redirect_uris: ["https://app.example/cb\u0000"] },
      "invalid_redirect_uri",
      /^redirect_uris\.0: must not contain NUL/,
    ],
    [
      "a lone surrogate in a redirect URI",
      { redirect_uris: ["https://app.example/\ud800"] },
      "invalid_redirect_uri",
      /^redirect_uris\.0: must be valid Unicode/,
    ],
    ["client_name of 200 characters", { client_name: "n".repeat(200) }, undefined],
    ["client_name of 200 emoji", { client_name: "\ud83d\ude00".repeat(200) }, undefined],
    [
      "client_name of 201 characters",
      { client_name: "n".repeat(201) },
      "invalid_client_metadata",
      /client_name may have at most 200 characters; it has 201/,
    ],
    ["client_name not a string", { client_name: 7 }, "invalid_client_metadata", /client_name must be a string/],
    ["bidi and zero-width marks in client_name", { client_name: "\u202eevil\u200b" }, undefined],
    [
      "a NUL in client_name",
      { client_name: "a\u0000b" },
      "invalid_client_metadata",
      new RegExp(`^client_name: ${NUL_MESSAGE}`),
    ],
    [
      "a lone surrogate in client_name",
      { client_name: "a\udc00" },
      "invalid_client_metadata",
      /^client_name: must be valid Unicode/,
    ],
    ["a NUL in a key", { "x\u0000": 1 }, "invalid_client_metadata", /must not contain NUL/],
    [
      "a lone surrogate deep in jwks",
      { jwks: { keys: [{ kid: "\ud800" }] } },
      "invalid_client_metadata",
      /^jwks\.keys\.0\.kid: must be valid Unicode/,
    ],
    [
      "a confidential client",
      { token_endpoint_auth_method: "client_secret_post" },
      "invalid_client_metadata",
      /public clients/,
    ],
    // (RFC 7591 reads no token_endpoint_auth_method as confidential; the provider refuses such a client before this runs)
    ["no token_endpoint_auth_method", { token_endpoint_auth_method: undefined }, undefined],
    ["metadata just under 16 KB", { client_uri: `https://app.example/${"u".repeat(16 * 1024 - 300)}` }, undefined],
    [
      "metadata over 16 KB in one field",
      { policy_uri: "p".repeat(16 * 1024) },
      "invalid_client_metadata",
      /at most 16 KB/,
    ],
    [
      "16 KB counted in UTF-8 bytes",
      { software_id: "\u00e9".repeat(8200) },
      "invalid_client_metadata",
      /at most 16 KB/,
    ],
    ["nesting 10 levels deep", { jwks: nested(9) }, undefined],
    ["nesting 11 levels deep", { jwks: nested(10) }, "invalid_client_metadata", /at most 10 levels/],
    ["nesting deeper than the call stack", { jwks: nested(200_000) }, "invalid_client_metadata", /at most 10 levels/],
  ];
  for (const [what, overrides, code, message] of cases) {
    it(`${what}: ${code ?? "accepted"}`, () => {
      const problem = clientMetadataProblem({ ...GOOD, ...overrides });
      assert.equal(problem?.code, code, JSON.stringify(problem));
      if (message) assert.match(problem!.message, message);
    });
  }

  it("names its limits in one place", () => {
    assert.deepEqual(CLIENT_METADATA_LIMITS, {
      redirectUris: 10,
      redirectUriLength: 2000,
      clientNameLength: 200,
      metadataBytes: 16384,
      depth: 10,
    });
  });
});
