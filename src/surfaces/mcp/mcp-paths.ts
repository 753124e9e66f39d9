/**
 * What the HTTP app needs of the agent surface at start-up: its paths, and whether it is served. Kept apart
 * from mcp-app.ts so that the MCP SDK and express (~17 MB of memory once loaded) are imported only when the
 * first of these paths is asked for (docs/performance.md, peak RSS).
 */
import { isLoopbackHost } from "./mcp-origins.js";

/** The paths the agent surface's express app answers; Fastify routes exactly these to it. */
export const MCP_PATHS = [
  "/mcp",
  "/authorize",
  "/token",
  "/register",
  "/revoke",
  "/oauth/login",
  "/oauth/consent",
  "/.well-known/oauth-authorization-server",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
] as const;

/**
 * OAuth 2.1 wants an https issuer, except on the local machine (localhost, 127.0.0.1, [::1]): any other
 * deployment serves no MCP.
 */
export function mcpAvailable(publicUrl: string): boolean {
  const url = new URL(publicUrl);
  return url.protocol === "https:" || isLoopbackHost(url.hostname);
}
