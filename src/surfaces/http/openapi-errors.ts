// The error answers in the OpenAPI document (docs/api.md, "Errors"): one schema, `Error`; the codes each
// operation can answer, in its responses' descriptions and as the enum of each answer's `code` (so that a
// generated client can narrow on them). The errors every operation shares are added here, to
// the generated document, once; a route declares only its own (errorResponses), as data.
import { STATUS_CODES } from "node:http";
import type { SwaggerTransform } from "@fastify/swagger";
import { z } from "zod";

/** Every error answer: `{ error, code, details? }` (error-handler.ts); `Error` in the OpenAPI document. */
export const errorSchema = z
  .object({
    error: z.string().describe("A sentence for people: what was refused, and why"),
    code: z
      .string()
      .describe(
        "snake_case and stable: what a client branches on (the operation's responses list the codes it can answer)",
      ),
    details: z
      .array(
        z.object({ path: z.string().describe("The field, dot-separated (`rules.0.amount`)"), message: z.string() }),
      )
      .optional()
      .describe("One entry per refused field, where there are several"),
  })
  .meta({ id: "Error" });

/** Error codes, each with when it is answered: `{ not_found: "no such contract" }`. */
type Codes = Record<string, string>;

/** The 429 of an operation that makes a document (a PDF, a logo) or reads an agreement's terms in the document processes: documents/document-pool.ts. */
export const TOO_MANY_DOCUMENTS: Codes = {
  too_many_documents:
    "the company already has 4 documents (PDFs, logos) being made or waiting (each company's are made in turn with the others'), or the service holds as many waiting as it may; `Retry-After` says when to try again",
};

/** The codes of the error schemas that errorResponses hands to routes, until withRouteErrorCodes reads them. */
const declaredCodes = new WeakMap<object, Codes>();
/** Where a route's own codes travel on its operation, from withRouteErrorCodes to describeCommonErrors. */
const CODES_KEY = "x-error-codes";

type RouteErrorStatus = 400 | 404 | 409 | 413 | 415 | 429;

/**
 * The errors an operation answers beyond those every operation shares (which describeCommonErrors adds), for
 * a route's `response`: by status, the codes and when. A status whose answer carries more than `Error` (the
 * existing customer of a 409 `customer_exists`) gives its schema with its codes.
 */
export function errorResponses(
  byStatus: { [S in RouteErrorStatus]?: Codes | { schema: z.ZodType; codes: Codes } },
): Record<string, z.ZodType> {
  return Object.fromEntries(
    Object.entries(byStatus).map(([status, spec]) => {
      const { schema, codes } =
        spec.schema instanceof z.ZodType
          ? (spec as { schema: z.ZodType; codes: Codes })
          : { schema: errorSchema, codes: spec as Codes };
      const declared = schema.clone(); // the same schema (documented as a reference to it), an object of its own
      declaredCodes.set(declared, codes);
      return [status, declared];
    }),
  );
}

/** Wraps the per-route transform: the codes of the route's error responses go with its operation. */
export function withRouteErrorCodes(transform: SwaggerTransform): SwaggerTransform {
  return (route) => {
    const responses = Object.entries((route.schema?.response ?? {}) as Record<string, object>);
    const codes = Object.fromEntries(
      responses.flatMap(([status, schema]) => (declaredCodes.has(schema) ? [[status, declaredCodes.get(schema)]] : [])),
    );
    const result = transform(route);
    return Object.keys(codes).length === 0 ? result : { ...result, schema: { ...result.schema, [CODES_KEY]: codes } };
  };
}

/** What every operation can answer (each needs an API key): docs/api.md, "Conventions" and "Errors". */
const EVERY_OPERATION: Record<string, Codes> = {
  400: {
    invalid_request:
      "a parameter or field is missing, of the wrong type, out of range or unknown, or the URL is not valid (bad percent-encoding, NUL); `details` name the fields",
    invalid_encoding:
      "text sent is not UTF-8: the bytes a `%XX` escape of the URL stands for (or, for an operation with a body, the body's bytes)",
  },
  401: {
    missing_api_key: "no `Authorization: Bearer` and no `X-Api-Key` header",
    invalid_api_key: "the key is unknown, revoked or expired, or the `Authorization` header is malformed",
  },
  403: { insufficient_scope: "the API key lacks the operation's scope; the sentence names the scopes that would do" },
  429: {
    rate_limited:
      "the API key used up its rate (`BILLING_RATE_LIMIT`, by default 100 requests a second); `Retry-After` says in how many seconds to try again",
    too_many_failed_attempts:
      "in place of 401 `invalid_api_key`: this client address failed to authenticate too often in the last minute; `Retry-After` says when to try again",
  },
  408: { request_timeout: "the request was not received within the service's time for it (30 s by default)" },
  414: { uri_too_long: "a segment of the path is longer than 2048 characters, or the request line longer than 8 KiB" },
  431: { headers_too_large: "the request line and headers together are larger than 16 KiB" },
  500: { internal_error: "a bug; the service's log has it under the answer's `request-id`" },
};

/** What an operation answers when it reads a body: Fastify reads one sent with POST, PUT, PATCH or DELETE. */
const WITH_BODY: Record<string, Codes> = {
  400: { invalid_json: "the body is not JSON, or is empty" },
  413: { payload_too_large: "the body is larger than 1 MiB" },
  415: { unsupported_media_type: "the body is not sent as `application/json`" },
};
const READS_BODY = new Set(["post", "put", "patch", "delete"]);

/** The shared answers, named in `components.responses` where an operation adds nothing to them. */
const SHARED_NAMES: Record<string, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  408: "RequestTimeout",
  414: "UriTooLong",
  431: "RequestHeaderFieldsTooLarge",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  429: "TooManyRequests",
  500: "InternalServerError",
};

// Always sent with a 429 (error-handler.ts): required.
const RETRY_AFTER = {
  "Retry-After": {
    description: "Seconds to wait before trying again",
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
};
const ERROR_REF = { $ref: "#/components/schemas/Error" };

type Schema = Record<string, unknown>;
type Response = {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Schema }>;
  $ref?: string;
};
type Operation = { responses?: Record<string, Response>; [CODES_KEY]?: Record<string, Codes> };
type Document = {
  paths?: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, unknown> };
};

const codeList = (codes: Codes): string =>
  Object.entries(codes)
    .map(([code, when]) => `- \`${code}\`: ${when}`)
    .join("\n");

// The answer's schema, with `code` one of the codes listed: what the contract test holds answers to, and
// what a generated client narrows on.
const errorAnswer = (status: string, codes: Codes, schema: Schema = ERROR_REF): Response => ({
  description: `${STATUS_CODES[Number(status)]}. Codes:\n${codeList(codes)}`,
  ...(status === "429" ? { headers: RETRY_AFTER } : {}),
  content: {
    "application/json": {
      schema: {
        type: "object",
        allOf: [schema],
        properties: { code: { type: "string", enum: Object.keys(codes) } },
        required: ["code"],
      },
    },
  },
});

/**
 * Gives every operation of the document every error it can answer: the shared ones, merged with the route's
 * own (a route's wording of a code wins), each described by its codes. Success answers without a description
 * of their own get the status's name.
 */
export function describeCommonErrors<T extends object>(document: T): T {
  const doc = document as Document;
  const shared: Record<string, Response> = {};
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const responses = operation.responses ?? {};
      const own = operation[CODES_KEY] ?? {};
      delete operation[CODES_KEY];
      for (const [status, response] of Object.entries(responses)) {
        if (status >= "400" && !own[status])
          throw new Error(`${method.toUpperCase()} ${path}: declare its ${status} with errorResponses()`);
        if (response.description === "Default Response") response.description = STATUS_CODES[Number(status)] ?? status;
      }
      const common: Record<string, Codes> = { ...EVERY_OPERATION };
      if (READS_BODY.has(method))
        for (const [status, codes] of Object.entries(WITH_BODY)) common[status] = { ...common[status], ...codes };
      for (const status of new Set([...Object.keys(common), ...Object.keys(own)])) {
        const name = SHARED_NAMES[status];
        if (name && !own[status]) {
          shared[name] ??= errorAnswer(status, common[status]!);
          responses[status] = { $ref: `#/components/responses/${name}` };
        } else {
          // The route's wording of a code wins; its schema too (the existing resource beside the error).
          responses[status] = errorAnswer(
            status,
            { ...common[status], ...own[status] },
            responses[status]?.content?.["application/json"]?.schema,
          );
          // (The route's schema is the one errorResponses cloned: Error, or one that carries more.)
        }
      }
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  doc.components = { ...doc.components, responses: { ...doc.components?.responses, ...shared } };
  return document;
}
