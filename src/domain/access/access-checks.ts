// The admin API validates these in its schemas; the CLI calls the service directly, so the service checks
// them too (a blank company name, an invalid date or a one-letter password must not get in by the CLI).
import { z } from "zod";
import { ALL_SCOPES, isScope, type Scope } from "../kernel/actor.js";
import { ValidationError } from "../kernel/errors.js";

/** An API key's scopes: null (full access) when left out; each known, at least one, no repeats. */
export function checkScopes(scopes: readonly string[] | undefined): Scope[] | null {
  if (scopes === undefined) return null;
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown scope: ${unknown.join(", ")}. Known scopes: ${ALL_SCOPES.join(", ")}`,
      "invalid_scope",
    );
  }
  if (scopes.length === 0)
    throw new ValidationError("scopes must name at least one scope, or be left out for full access", "invalid_scope");
  return [...new Set(scopes)] as Scope[];
}

/** Each refusal names its field in `details` (`name`, `company`, `email`, `password`, `expires_at`), for forms. */
export function checkName(field: string, name: string, path = field): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200 || trimmed.includes("\u0000")) {
    const message =
      trimmed.length < 1
        ? "is required"
        : trimmed.length > 200
          ? "Too big: expected string to have <=200 characters"
          : "must not contain NUL characters";
    throw new ValidationError(`${field} must be 1 to 200 characters`, "invalid_request", [{ path, message }]);
  }
  return trimmed;
}

export function checkExpiry(expiresAt: Date | null | undefined, now: Date): void {
  if (!expiresAt) return;
  if (Number.isNaN(expiresAt.getTime())) {
    throw new ValidationError("expires_at is not a valid date", "invalid_expires_at", [
      { path: "expires_at", message: "Invalid date" },
    ]);
  }
  if (expiresAt.getTime() <= now.getTime()) {
    throw new ValidationError("expires_at must be in the future", "invalid_expires_at", [
      { path: "expires_at", message: "must be in the future" },
    ]);
  }
}

const emailSchema = z.string().trim().max(254).pipe(z.email());

/** A user's email and password checked; the email as stored (trimmed, lower-cased). */
export function checkUser(email: string, password: string): string {
  const parsed = emailSchema.safeParse(email);
  if (!parsed.success) {
    throw new ValidationError("email must be a valid email address", "invalid_request", [
      { path: "email", message: email.trim() === "" ? "is required" : "Invalid email address" },
    ]);
  }
  if (password.length < 8 || password.length > 1024) {
    throw new ValidationError("password must be 8 to 1024 characters", "invalid_request", [
      {
        path: "password",
        message: password.length < 8 ? "Too short: use at least 8 characters." : "Too long: at most 1024 characters.",
      },
    ]);
  }
  return parsed.data.toLowerCase();
}
