import type { FastifyRequest } from "fastify";
import type { AccessService } from "../../domain/access/access-service.js";
import type { Tenancy } from "../../domain/kernel/tenancy.js";
import { RateLimitedError, UnauthenticatedError } from "../../domain/kernel/errors.js";
import type { FailureThrottle } from "../../platform/failure-throttle.js";
import type { RateLimiter } from "../../platform/rate-limiter.js";

declare module "fastify" {
  interface FastifyRequest {
    actor: Tenancy | undefined;
  }
}

/** The key from `Authorization: Bearer <key>` or `X-Api-Key: <key>` (docs/api.md, "Errors": `missing_api_key`). */
function presentedApiKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === "string" && authorization.trim() !== "") {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw UnauthenticatedError.invalid();
    return match[1];
  }
  const header = request.headers["x-api-key"];
  if (typeof header === "string" && header.trim() !== "") return header.trim();
  return undefined;
}

/**
 * An onRequest hook: sets `request.actor`, or answers 401 before the body is even read; then 429 with
 * Retry-After when the key has used up its rate (per key, per process).
 * A bad key (unknown, revoked, expired, or a malformed header) counts against the client address's failure
 * budget; once that is spent, bad keys get 429 `too_many_failed_attempts` instead of 401. The key is always
 * checked first (a hash and an indexed lookup), so a valid key is never refused by that throttle, even from
 * an address shared with a guesser; no key at all is no failure.
 */
export function apiKeyAuth(access: AccessService, limiter: RateLimiter | null, failures: FailureThrottle | null) {
  return async (request: FastifyRequest): Promise<void> => {
    try {
      const key = presentedApiKey(request);
      if (key === undefined) throw UnauthenticatedError.missing();
      if (key.length > 512) throw UnauthenticatedError.invalid();
      request.actor = await access.authenticate(key);
    } catch (error) {
      if (failures && error instanceof UnauthenticatedError && error.code === "invalid_api_key") {
        const wait = failures.refusal(request.ip, "api");
        if (wait !== undefined) throw RateLimitedError.failedAttempts(wait);
        failures.countFailure(request.ip);
      }
      throw error;
    }
    if (limiter) {
      const verdict = limiter.take(request.actor.credentialId);
      if (!verdict.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000)));
    }
  };
}

/** The actor of an authenticated route. */
export function actorOf(request: FastifyRequest): Tenancy {
  if (!request.actor) throw UnauthenticatedError.missing();
  return request.actor;
}
