import { ForbiddenError } from "./errors.js";

export const ALL_SCOPES = [
  "usage:write",
  "usage:read",
  "contracts:read",
  "contracts:write",
  "invoices:read",
  "invoices:write",
  "customers:read",
  "customers:write",
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

export const isScope = (value: string): value is Scope => (ALL_SCOPES as readonly string[]).includes(value);

/** Who is calling: one company and what it may do. The first argument of every service function. */
export interface Actor {
  companyId: string;
  scopes: ReadonlySet<Scope>;
  /** The API key (or OAuth token) the request came with, for audit; never its secret. */
  credentialId: string;
}

/** Throws 403 unless the actor holds at least one of `anyOf`. */
export function requireScope(actor: Actor, ...anyOf: Scope[]): void {
  if (!anyOf.some((scope) => actor.scopes.has(scope))) throw new ForbiddenError(anyOf);
}
