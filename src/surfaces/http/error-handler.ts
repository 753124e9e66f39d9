import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { ConflictError, DomainError, RateLimitedError, type ErrorDetail } from "../../domain/kernel/errors.js";

export interface HttpErrorBody {
  error: string;
  code: string;
  details?: ErrorDetail[];
  [extra: string]: unknown;
}

const STATUS_BY_KIND: Record<DomainError["kind"], number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  too_large: 413,
  unsupported: 415,
};

// Fastify's own client errors, with the code and sentence we answer instead.
const FASTIFY_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: "invalid_json", message: "The body is not valid JSON" },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: "invalid_json", message: "The body is empty; send a JSON object" },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: "payload_too_large", message: "The body is larger than 1 MiB" },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "Send the body as application/json",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: "invalid_request",
    message: "Content-Length does not match the body",
  },
  FST_ERR_CTP_INVALID_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "Send the body as application/json",
  },
  // A body sent without a Content-Type says nothing of what it is: as a body of a type we do not take.
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "The body has no Content-Type: send it as application/json",
  },
  // These two reach this handler only because http-app.ts routes Fastify's `frameworkErrors` here.
  FST_ERR_BAD_URL: { status: 400, code: "invalid_request", message: "The URL is not valid" },
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 414,
    code: "uri_too_long",
    message: "A segment of the path is longer than 2048 characters",
  },
};

/**
 * Our code and sentence for any other client error Fastify raises, by its status: a framework's own code
 * (`FST_ERR_…`) and wording are no part of the API, and would change with its versions.
 */
const BY_STATUS: Record<number, { code: string; message: string }> = {
  400: { code: "invalid_request", message: "The request is not valid" },
  404: { code: "not_found", message: "Not found" },
  405: { code: "method_not_allowed", message: "This method is not allowed on this path" },
  408: { code: "request_timeout", message: "The request was not received in time" },
  413: { code: "payload_too_large", message: "The body is larger than 1 MiB" },
  414: { code: "uri_too_long", message: "The URL is too long" },
  415: { code: "unsupported_media_type", message: "Send the body as application/json" },
  431: { code: "headers_too_large", message: "The request headers are too large" },
};

const pathOf = (path: readonly PropertyKey[]): string => path.map(String).join(".");

/** The one mapping from errors to HTTP answers: `{ error, code, details? }` (docs/decisions.md, "Errors and limits"). */
export function toHttpError(error: unknown): { status: number; body: HttpErrorBody; unexpected: boolean } {
  if (error instanceof DomainError) {
    const body: HttpErrorBody = { error: error.message, code: error.code };
    if (error.details) body.details = error.details;
    if (error instanceof ConflictError && error.extra) Object.assign(body, error.extra);
    return { status: STATUS_BY_KIND[error.kind], body, unexpected: false };
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const details = error.validation.map((issue) => {
      const where = issue.instancePath.replace(/^\//, "").replaceAll("/", ".");
      const field = [error.validationContext === "body" ? "" : error.validationContext, where]
        .filter(Boolean)
        .join(".");
      const keys = (issue.params as { keys?: unknown }).keys;
      const message =
        issue.keyword === "unrecognized_keys" && Array.isArray(keys)
          ? `Unknown field: ${keys.map((k) => pathOf([...(where ? [where] : []), String(k)])).join(", ")}`
          : issue.message;
      return { path: field, message: message ?? "is invalid" };
    });
    const first = details[0];
    const sentence = first
      ? first.path && !first.message.startsWith("Unknown field")
        ? `${first.path}: ${first.message}`
        : first.message
      : "Invalid request";
    return {
      status: 400,
      body: { error: `Invalid request. ${sentence}`, code: "invalid_request", details },
      unexpected: false,
    };
  }
  const fastifyError = error as FastifyError;
  const known = fastifyError?.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return { status: known.status, body: { error: known.message, code: known.code }, unexpected: false };
  const status = fastifyError?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // A status we give no meaning of our own to is a 400.
    const answered = BY_STATUS[status] ? status : 400;
    const ours = BY_STATUS[answered]!;
    return { status: answered, body: { error: ours.message, code: ours.code }, unexpected: false };
  }
  return { status: 500, body: { error: "Internal server error", code: "internal_error" }, unexpected: true };
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, unexpected } = toHttpError(error);
  if (error instanceof RateLimitedError) void reply.header("retry-after", String(error.retryAfterSeconds));
  if (unexpected) request.log.error({ err: error }, "unhandled error");
  void reply.code(status).send(body);
}
