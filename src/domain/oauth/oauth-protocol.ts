import { createHash, randomBytes } from "node:crypto";
import type { Actor, Scope } from "../kernel/actor.js";
import { unstorableReason } from "../kernel/storable-text.js";

/** The scopes this service serves over MCP (the API description lists more; docs/mcp.md, "Scopes" maps them). */
export const OAUTH_SCOPES = ["read:invoices", "write:invoices"] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** What each OAuth scope lets the MCP tools do, in the API's own scopes. */
const INTERNAL_SCOPES: Record<OAuthScope, Scope[]> = {
  "read:invoices": ["contracts:read", "usage:read", "invoices:read", "customers:read"],
  "write:invoices": ["contracts:write", "usage:write", "invoices:write", "customers:write"],
};

/** The actor an MCP call acts as: the token's company, with the API scopes its OAuth scopes stand for. */
export function actorForGrant(grant: { companyId: string; scopes: readonly string[]; credential: string }): Actor {
  const scopes = new Set<Scope>();
  for (const s of grant.scopes) for (const internal of INTERNAL_SCOPES[s as OAuthScope] ?? []) scopes.add(internal);
  return { companyId: grant.companyId, scopes, credentialId: grant.credential };
}

/** An OAuth protocol error with its RFC 6749 / 8707 code; the MCP surface maps it to the SDK's classes. */
export class OAuthProtocolError extends Error {
  constructor(
    readonly code:
      | "invalid_request"
      | "invalid_client"
      | "invalid_grant"
      | "invalid_scope"
      | "invalid_target"
      | "invalid_client_metadata"
      | "invalid_redirect_uri"
      | "access_denied",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Refuses a parameter PostgreSQL could not store (storable-text.ts) before any query sees it: a 400
 * invalid_request rather than a database error. Codes and tokens are only hashed, but none was ever issued
 * with such a character, so they are refused the same way.
 */
export function storable(name: string, value: string | undefined): void {
  const reason = value === undefined ? undefined : unstorableReason(value);
  if (reason) throw new OAuthProtocolError("invalid_request", `${name} ${reason}`);
}

/** Codes and tokens are stored as their SHA-256 only. */
export const hashSecret = (secret: string) => createHash("sha256").update(secret, "utf8").digest();

/** A new code, token or request id: 32 random bytes in base64url, after a prefix that says what it is. */
export const newSecret = (prefix = "") => `${prefix}${randomBytes(32).toString("base64url")}`;

/** The resource (RFC 8707) a request names: this server's, or null when it names none; any other is refused. */
export function checkResource(resource: string, requested: string | null | undefined): string | null {
  if (requested === undefined || requested === null) return null;
  if (requested.replace(/\/+$/, "") !== resource.replace(/\/+$/, "")) {
    throw new OAuthProtocolError("invalid_target", `This server issues tokens for ${resource} only`);
  }
  return resource;
}
