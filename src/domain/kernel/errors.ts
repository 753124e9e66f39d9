/**
 * Typed domain errors. Each carries a stable snake_case code; surfaces map them to HTTP (and MCP)
 * in exactly one place each.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly kind:
    | "not_found"
    | "conflict"
    | "invalid"
    | "unauthenticated"
    | "forbidden"
    | "rate_limited"
    | "too_large"
    | "unsupported";
  constructor(
    message: string,
    readonly code: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 404. The message is always "Not found" (docs/api.md, "Errors"): another company's id looks exactly like a missing one. */
export class NotFoundError extends DomainError {
  readonly kind = "not_found" as const;
  constructor(readonly resource: string) {
    super("Not found", "not_found");
  }
}

/** 409, optionally with the existing resource (docs/api.md, "Customers": the same `external_id`). */
export class ConflictError extends DomainError {
  readonly kind = "conflict" as const;
  constructor(
    message: string,
    code: string,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message, code);
  }
}

/** 400 for input the schema accepts but the domain refuses. */
export class ValidationError extends DomainError {
  readonly kind = "invalid" as const;
  constructor(message: string, code = "invalid_request", details?: ErrorDetail[]) {
    super(message, code, details);
  }
}

/** 413: an uploaded file over its limit (docs/api.md, "Uploading a contract"). */
export class TooLargeError extends DomainError {
  readonly kind = "too_large" as const;
}

/** 415: content of a kind the operation does not take (a file that is not a PDF, a body that is not multipart). */
export class UnsupportedContentError extends DomainError {
  readonly kind = "unsupported" as const;
}

export class UnauthenticatedError extends DomainError {
  readonly kind = "unauthenticated" as const;
  static missing() {
    return new UnauthenticatedError("Missing API key", "missing_api_key");
  }
  static invalid() {
    return new UnauthenticatedError("Invalid API key", "invalid_api_key");
  }
}

export class ForbiddenError extends DomainError {
  readonly kind = "forbidden" as const;
  constructor(readonly requiredScopes: readonly string[]) {
    super(`This API key lacks the required scope: ${requiredScopes.join(" or ")}`, "insufficient_scope");
  }
}

/** 429: too many requests for this key; answered with Retry-After. */
export class RateLimitedError extends DomainError {
  readonly kind = "rate_limited" as const;
  constructor(
    readonly retryAfterSeconds: number,
    message = `Too many requests; retry after ${retryAfterSeconds} s`,
    code = "rate_limited",
  ) {
    super(message, code);
  }

  /**
   * 429 in place of 401: this client address has failed to authenticate too often (BILLING_AUTH_FAILURES).
   * A code of its own: `rate_limited` says a valid key sent too much, this one that the address failed too often.
   */
  static failedAttempts(retryAfterSeconds: number) {
    return new RateLimitedError(
      retryAfterSeconds,
      `Too many failed authentication attempts from this address; retry after ${retryAfterSeconds} s`,
      "too_many_failed_attempts",
    );
  }

  /**
   * 429: an uploaded PDF that cannot be queued for reading (contracts/agreement-upload.ts): `why` says whose
   * bound it is past, its company's or the service's.
   */
  static tooManyUploads(retryAfterSeconds: number, why: string) {
    return new RateLimitedError(
      retryAfterSeconds,
      `${why}; try this upload again in ${retryAfterSeconds} seconds`,
      "too_many_uploads",
    );
  }

  /**
   * 429: a document (a PDF, a logo to normalise) that cannot be queued for the document processes
   * (documents/document-pool.ts): `why` says whose bound it is past, its company's or the service's.
   */
  static tooManyDocuments(retryAfterSeconds: number, why: string) {
    return new RateLimitedError(
      retryAfterSeconds,
      `${why}; try again in ${retryAfterSeconds} seconds`,
      "too_many_documents",
    );
  }
}
