import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The dashboard's two cookies. `__Host-` pins them to this origin (Secure, Path=/, no Domain); HttpOnly keeps
 * them from scripts; SameSite=Lax keeps them off cross-site POSTs (and a CSRF token is checked anyway).
 * Browsers accept Secure cookies from http://localhost, so local development works without TLS.
 */
export const SESSION_COOKIE = "__Host-billing_session";
/** Before sign-in: the double-submit token of the login and sign-up forms (login CSRF). */
export const PRELOGIN_COOKIE = "__Host-billing_prelogin";

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== "string") return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : undefined;
  }
  return undefined;
}

export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  maxAgeSeconds: number,
  sameSite: "Lax" | "Strict" = "Lax",
): void {
  const cookie = `${name}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; Secure; SameSite=${sameSite}`;
  const existing = reply.getHeader("set-cookie");
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)];
  void reply.header("set-cookie", [...list, cookie]);
}

export const clearCookie = (reply: FastifyReply, name: string) => setCookie(reply, name, "", 0);
