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
import { OAuthProtocolError } from "../../domain/oauth/oauth-protocol.js";
import { z } from "zod";
import { decimalInput } from "../../domain/kernel/decimal-schemas.js";
import { argumentsProblem, oauthDescription, toolCallProblem } from "./mcp-argument-problems.js";
import { clientErrorOf } from "./mcp-errors.js";

/** An error as body-parser (through http-errors) raises it. */
const parserError = (status: number, type: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(type), { status, statusCode: status, expose: status < 500, type, ...extra });

describe("the agent surface's mapping of errors to answers", () => {
  const cases: [
    string,
    unknown,
    { status: number; code: string; rpcCode: number; description?: RegExp } | undefined,
  ][] = [
    [
      "malformed JSON",
      parserError(400, "entity.parse.failed"),
      { status: 400, code: "invalid_request", rpcCode: -32700, description: /not valid JSON/ },
    ],
    [
      "a body over the limit",
      parserError(413, "entity.too.large", { limit: 1024 * 1024 }),
      { status: 413, code: "invalid_request", rpcCode: -32000, description: /larger than 1 MB/ },
    ],
    [
      "a form over 16 KB",
      parserError(413, "entity.too.large", { limit: 16 * 1024 }),
      { status: 413, code: "invalid_request", rpcCode: -32000, description: /larger than 16 KB/ },
    ],
    [
      "too many form fields",
      parserError(413, "parameters.too.many"),
      { status: 413, code: "invalid_request", rpcCode: -32000 },
    ],
    [
      "a form nested too deeply",
      parserError(400, "querystring.parse.rangeError"),
      { status: 400, code: "invalid_request", rpcCode: -32000 },
    ],
    [
      "an unsupported charset",
      parserError(415, "charset.unsupported", { charset: "latin1" }),
      { status: 415, code: "invalid_request", rpcCode: -32000, description: /latin1/ },
    ],
    [
      "an unsupported content encoding",
      parserError(415, "encoding.unsupported", { encoding: "zz" }),
      { status: 415, code: "invalid_request", rpcCode: -32000, description: /zz/ },
    ],
    [
      "an aborted request",
      parserError(400, "request.aborted"),
      { status: 400, code: "invalid_request", rpcCode: -32000 },
    ],
    [
      "a body shorter than its Content-Length",
      parserError(400, "request.size.invalid"),
      { status: 400, code: "invalid_request", rpcCode: -32000 },
    ],
    [
      "a 4xx of a type not listed (a corrupt gzip body)",
      parserError(400, "zz.unknown"),
      { status: 400, code: "invalid_request", rpcCode: -32000, description: /could not be read/ },
    ],
    ["a stream read twice: our bug", parserError(500, "stream.not.readable"), undefined],
    [
      "malformed percent-encoding",
      new URIError("URI malformed"),
      { status: 400, code: "invalid_request", rpcCode: -32000 },
    ],
    [
      "a domain protocol error",
      new OAuthProtocolError("invalid_request", "request_id must not contain NUL characters"),
      { status: 400, code: "invalid_request", rpcCode: -32600 },
    ],
    [
      "a domain registration error",
      new OAuthProtocolError("invalid_redirect_uri", "x"),
      { status: 400, code: "invalid_redirect_uri", rpcCode: -32600 },
    ],
    ["the SDK's invalid_grant", new InvalidGrantError("x"), { status: 400, code: "invalid_grant", rpcCode: -32000 }],
    [
      "the SDK's invalid_client_metadata",
      new InvalidClientMetadataError("x"),
      { status: 400, code: "invalid_client_metadata", rpcCode: -32000 },
    ],
    ["the SDK's invalid_token", new InvalidTokenError("x"), { status: 401, code: "invalid_token", rpcCode: -32000 }],
    [
      "the SDK's insufficient_scope",
      new InsufficientScopeError("x"),
      { status: 403, code: "insufficient_scope", rpcCode: -32000 },
    ],
    [
      "the SDK's method_not_allowed",
      new MethodNotAllowedError("x"),
      { status: 405, code: "method_not_allowed", rpcCode: -32000 },
    ],
    [
      "the SDK's too_many_requests",
      new TooManyRequestsError("x"),
      { status: 429, code: "too_many_requests", rpcCode: -32000 },
    ],
    ["the SDK's server_error", new ServerError("x"), undefined],
    ["a plain Error", new Error("boom"), undefined],
    [
      "a database error",
      Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: "22021" }),
      undefined,
    ],
    ["a thrown string", "boom", undefined],
    ["null", null, undefined],
  ];
  for (const [what, error, expected] of cases) {
    it(`${what}: ${expected ? `${expected.status} ${expected.code}` : "a bug (500)"}`, () => {
      const known = clientErrorOf(error);
      if (!expected) return assert.equal(known, undefined);
      assert.ok(known, "a client error");
      assert.deepEqual(
        { status: known.status, code: known.code, rpcCode: known.rpcCode },
        { status: expected.status, code: expected.code, rpcCode: expected.rpcCode },
      );
      assert.ok(known.description.length > 0);
      if (expected.description) assert.match(known.description, expected.description);
    });
  }
});

describe("a tool's refused arguments as one sentence", () => {
  const schema = z.strictObject({
    external_contract_id: z.string().min(1).max(255),
    quantity: decimalInput("quantity", 12),
    limit: z.number().int().min(1).max(100).optional(),
    status: z.enum(["draft", "issued"]).optional(),
    confirm: z.literal(true).optional(),
    events: z.array(z.record(z.string(), z.unknown())).min(1).max(100).optional(),
    name: z.string().max(5).optional(),
  });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["a missing argument", { quantity: 1 }, "external_contract_id is required"],
    ["an empty string", { external_contract_id: "", quantity: 1 }, "external_contract_id: must not be empty"],
    [
      "a string too long",
      { external_contract_id: "c", quantity: 1, name: "abcdefg" },
      "name: must be at most 5 characters",
    ],
    [
      "a number in words",
      { external_contract_id: "c", quantity: "1,5" },
      "quantity: must be a decimal number such as 12.5 (a JSON number or a string)",
    ],
    ["a string for a number", { external_contract_id: "c", quantity: 1, limit: "ten" }, "limit: must be a number"],
    ["a fraction for an integer", { external_contract_id: "c", quantity: 1, limit: 1.5 }, "limit: must be an integer"],
    ["a number too small", { external_contract_id: "c", quantity: 1, limit: 0 }, "limit: must be at least 1"],
    ["a number too large", { external_contract_id: "c", quantity: 1, limit: 101 }, "limit: must be at most 100"],
    [
      "a value not listed",
      { external_contract_id: "c", quantity: 1, status: "paid" },
      'status: must be one of "draft", "issued"',
    ],
    ["a literal", { external_contract_id: "c", quantity: 1, confirm: false }, "confirm: must be true"],
    ["an empty list", { external_contract_id: "c", quantity: 1, events: [] }, "events: must hold at least one item"],
    [
      "an item of the wrong type",
      { external_contract_id: "c", quantity: 1, events: [5] },
      "events.0: must be an object",
    ],
    ["an unknown argument", { external_contract_id: "c", quantity: 1, extra: 1 }, "unknown argument extra"],
    ["two problems", {}, "external_contract_id is required (and 1 more problem)"],
  ];
  for (const [what, args, sentence] of cases) {
    it(`${what}: "${sentence}"`, () => {
      const parsed = schema.safeParse(args);
      assert.equal(parsed.success, false);
      const message = argumentsProblem("a_tool", parsed.error!.issues, args);
      assert.equal(message, `Invalid arguments for a_tool: ${sentence}`);
    });
  }

  const calls: Array<[string, unknown, RegExp | undefined]> = [
    ["well formed", { name: "a_tool", arguments: {} }, undefined],
    ["without arguments", { name: "a_tool" }, undefined],
    ["params missing", undefined, /takes an object/],
    ["params an array", [], /takes an object/],
    ["no name", { arguments: {} }, /name is required/],
    ["arguments a string", { name: "a_tool", arguments: "x" }, /arguments must be an object/],
    ["arguments null", { name: "a_tool", arguments: null }, /arguments must be an object/],
  ];
  for (const [what, params, problem] of calls) {
    it(`a tools/call ${what}: ${problem ?? "taken"}`, () => {
      const found = toolCallProblem(params);
      if (problem === undefined) assert.equal(found, undefined);
      else assert.match(found ?? "", problem);
    });
  }
});

describe("an OAuth error_description as a sentence", () => {
  const zodDump = (issues: unknown[]) => JSON.stringify(issues, null, 2);
  const cases: Array<[string, string, string]> = [
    ["a sentence, kept", "Invalid client_id", "Invalid client_id"],
    [
      "a missing parameter",
      zodDump([
        {
          code: "invalid_type",
          expected: "string",
          path: ["code_challenge"],
          message: "Invalid input: expected string, received undefined",
        },
      ]),
      "code_challenge is required",
    ],
    [
      "a literal",
      zodDump([
        {
          code: "invalid_value",
          values: ["S256"],
          path: ["code_challenge_method"],
          message: 'Invalid input: expected "S256"',
        },
      ]),
      'code_challenge_method: must be "S256"',
    ],
    [
      "behind ZodError:",
      `ZodError: ${zodDump([{ code: "invalid_type", expected: "array", path: ["redirect_uris"], message: "Invalid input: expected array, received string" }])}`,
      "redirect_uris: must be an array",
    ],
    [
      "a URL",
      zodDump([{ code: "invalid_format", format: "url", path: ["resource"], message: "Invalid URL" }]),
      "resource: must be a URL",
    ],
    ["other JSON", '{"detail":"x"}', "The request's parameters are not valid"],
    ["broken JSON", "[oops", "The request's parameters are not valid"],
  ];
  for (const [what, description, sentence] of cases) {
    it(`${what}: "${sentence}"`, () => assert.equal(oauthDescription(description), sentence));
  }
});
