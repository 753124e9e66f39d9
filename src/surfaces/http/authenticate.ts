import type { FastifyRequest } from "fastify";
import type { AccessService } from "../../domain/access/access-service.js";
import type { Actor } from "../../domain/kernel/actor.js";
import { UnauthenticatedError } from "../../domain/kernel/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    actor: Actor | undefined;
  }
}

/** The key from `Authorization: Bearer <key>` or `X-Api-Key: <key>` (spec section 5). */
export function presentedApiKey(request: FastifyRequest): string | undefined {
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

/** An onRequest hook: sets `request.actor`, or answers 401 before the body is even read. */
export function apiKeyAuth(access: AccessService) {
  return async (request: FastifyRequest): Promise<void> => {
    const key = presentedApiKey(request);
    if (key === undefined) throw UnauthenticatedError.missing();
    if (key.length > 512) throw UnauthenticatedError.invalid();
    request.actor = await access.authenticate(key);
  };
}

/** The actor of an authenticated route. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw UnauthenticatedError.missing();
  return request.actor;
}
