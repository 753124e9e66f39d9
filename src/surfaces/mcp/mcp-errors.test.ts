import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  InsufficientScopeError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidTokenError,
  MethodNotAllowedError,
  ServerError,
  TooManyRequestsError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { OAuthProtocolError } from "../../domain/oauth/oauth-service.js";
import { clientErrorOf } from "./mcp-errors.js";

/** An error as body-parser (through http-errors) raises it. */
const parserError = (status: number, type: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(type), { status, statusCode: status, expose: status < 500, type, ...extra });

describe("the agent surface's mapping of errors to answers", () => {
  const cases: [string, unknown, { status: number; code: string; rpcCode: number; description?: RegExp } | undefined][] = [
    ["malformed JSON", parserError(400, "entity.parse.failed"), { status: 400, code: "invalid_request", rpcCode: -32700, description: /not valid JSON/ }],
    ["a body over the limit", parserError(413, "entity.too.large", { limit: 1024 * 1024 }), { status: 413, code: "invalid_request", rpcCode: -32000, description: /larger than 1 MB/ }],
    ["a form over 16 KB", parserError(413, "entity.too.large", { limit: 16 * 1024 }), { status: 413, code: "invalid_request", rpcCode: -32000, description: /larger than 16 KB/ }],
    ["too many form fields", parserError(413, "parameters.too.many"), { status: 413, code: "invalid_request", rpcCode: -32000 }],
    ["a form nested too deeply", parserError(400, "querystring.parse.rangeError"), { status: 400, code: "invalid_request", rpcCode: -32000 }],
    ["an unsupported charset", parserError(415, "charset.unsupported", { charset: "latin1" }), { status: 415, code: "invalid_request", rpcCode: -32000, description: /latin1/ }],
    ["an unsupported content encoding", parserError(415, "encoding.unsupported", { encoding: "zz" }), { status: 415, code: "invalid_request", rpcCode: -32000, description: /zz/ }],
    ["an aborted request", parserError(400, "request.aborted"), { status: 400, code: "invalid_request", rpcCode: -32000 }],
    ["a body shorter than its Content-Length", parserError(400, "request.size.invalid"), { status: 400, code: "invalid_request", rpcCode: -32000 }],
    ["a 4xx of a type not listed (a corrupt gzip body)", parserError(400, "zz.unknown"), { status: 400, code: "invalid_request", rpcCode: -32000, description: /could not be read/ }],
    ["a stream read twice: our bug", parserError(500, "stream.not.readable"), undefined],
    ["malformed percent-encoding", new URIError("URI malformed"), { status: 400, code: "invalid_request", rpcCode: -32000 }],
    ["a domain protocol error", new OAuthProtocolError("invalid_request", "request_id must not contain NUL characters"), { status: 400, code: "invalid_request", rpcCode: -32600 }],
    ["a domain registration error", new OAuthProtocolError("invalid_redirect_uri", "x"), { status: 400, code: "invalid_redirect_uri", rpcCode: -32600 }],
    ["the SDK's invalid_grant", new InvalidGrantError("x"), { status: 400, code: "invalid_grant", rpcCode: -32000 }],
    ["the SDK's invalid_client_metadata", new InvalidClientMetadataError("x"), { status: 400, code: "invalid_client_metadata", rpcCode: -32000 }],
    ["the SDK's invalid_token", new InvalidTokenError("x"), { status: 401, code: "invalid_token", rpcCode: -32000 }],
    ["the SDK's insufficient_scope", new InsufficientScopeError("x"), { status: 403, code: "insufficient_scope", rpcCode: -32000 }],
    ["the SDK's method_not_allowed", new MethodNotAllowedError("x"), { status: 405, code: "method_not_allowed", rpcCode: -32000 }],
    ["the SDK's too_many_requests", new TooManyRequestsError("x"), { status: 429, code: "too_many_requests", rpcCode: -32000 }],
    ["the SDK's server_error", new ServerError("x"), undefined],
    ["a plain Error", new Error("boom"), undefined],
    ["a database error", Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: "22021" }), undefined],
    ["a thrown string", "boom", undefined],
    ["null", null, undefined],
  ];
  for (const [what, error, expected] of cases) {
    it(`${what}: ${expected ? `${expected.status} ${expected.code}` : "a bug (500)"}`, () => {
      const known = clientErrorOf(error);
      if (!expected) return assert.equal(known, undefined);
      assert.ok(known, "a client error");
      assert.deepEqual({ status: known.status, code: known.code, rpcCode: known.rpcCode }, { status: expected.status, code: expected.code, rpcCode: expected.rpcCode });
      assert.ok(known.description.length > 0);
      if (expected.description) assert.match(known.description, expected.description);
    });
  }
});
