/**
 * The addresses the MCP endpoint answers as a protected resource (RFC 9728). In production that is
 * BILLING_PUBLIC_URL's origin alone. A service on a loopback URL is also reached under the other spellings
 * of the local machine (it logs `http://127.0.0.1:8080` when it listens, while BILLING_PUBLIC_URL defaults
 * to `http://localhost:8080`), and an MCP client insists that the resource the metadata names has the
 * origin it connected to (the SDK's `selectResourceURL`: "Protected resource … does not match"). So on
 * loopback the metadata names whichever of `localhost`, `127.0.0.1` and `[::1]` (same scheme and port) the
 * request was addressed to, and a resource indicator under any of them stands for the canonical one.
 */

/** Loopback host names, as URL.hostname spells them. */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

export const isLoopbackHost = (hostname: string) => LOOPBACK_HOSTS.includes(hostname.toLowerCase());

export interface ResourceOrigins {
  /** BILLING_PUBLIC_URL's origin (as a URL ending in "/"): the one the tokens are bound to. */
  canonical: URL;
  /** Every origin the resource answers as: the canonical one first, then its loopback aliases (if any). */
  all: readonly URL[];
  /** The origin a request's Host header names, when it is one of `all`; otherwise the canonical one. */
  of(host: string | undefined): URL;
  /** A resource indicator: the MCP URL under an alias becomes the canonical MCP URL; anything else is unchanged. */
  canonicalResource(resource: string): string;
}

const withoutTrailingSlashes = (text: string) => text.replace(/\/+$/, "");

export function resourceOrigins(publicUrl: string): ResourceOrigins {
  const canonical = new URL("/", publicUrl);
  const all = [canonical];
  if (isLoopbackHost(canonical.hostname)) {
    for (const hostname of LOOPBACK_HOSTS) {
      if (hostname === canonical.hostname) continue;
      const alias = new URL(canonical.href);
      alias.hostname = hostname;
      all.push(alias);
    }
  }
  // By URL.host (lower case, default port left out): what a client sends as its Host header.
  const byHost = new Map(all.map((origin) => [origin.host, origin]));
  const aliasResources = new Set(all.slice(1).map((origin) => new URL("/mcp", origin).href));
  const canonicalMcp = new URL("/mcp", canonical).href;

  return {
    canonical,
    all,
    of: (host) => (host === undefined ? canonical : (byHost.get(host.toLowerCase()) ?? canonical)),
    canonicalResource: (resource) => (aliasResources.has(withoutTrailingSlashes(resource)) ? canonicalMcp : resource),
  };
}
