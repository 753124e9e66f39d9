/**
 * What dynamic client registration (RFC 7591) accepts. Anyone may register, without credentials, and
 * whatever is registered is kept, so the metadata is bounded: a few redirect URIs of sane length, a short
 * name, little nesting, 16 KB in all, and only text PostgreSQL can store.
 */
import { unstorableText } from "../kernel/storable-text.js";

export const CLIENT_METADATA_LIMITS = {
  redirectUris: 10,
  /** Characters (code points) of one redirect URI. */
  redirectUriLength: 2000,
  /** Characters (code points) of client_name. */
  clientNameLength: 200,
  /** The whole metadata as JSON, in UTF-8 bytes. */
  metadataBytes: 16 * 1024,
  /** Levels of nested objects and arrays: a JWKS needs four; a deeper value cannot be written as JSON safely. */
  depth: 10,
} as const;

/** RFC 7591, 3.2.2: the two registration error codes this service answers. */
export interface ClientMetadataProblem {
  code: "invalid_client_metadata" | "invalid_redirect_uri";
  message: string;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

const characters = (text: string) => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

/**
 * Why a redirect URI cannot be registered, if it cannot: no fragment (RFC 6749, 3.1.2), and plain http only
 * on a loopback host (OAuth 2.1, 2.3.1; the MCP authorization spec). https and private-use schemes of
 * native apps (RFC 8252, 7.1) are fine.
 */
function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== "string") return "redirect_uris must hold strings";
  const length = characters(uri);
  if (length > CLIENT_METADATA_LIMITS.redirectUriLength) {
    return `A redirect URI may have at most ${CLIENT_METADATA_LIMITS.redirectUriLength} characters; one has ${length}`;
  }
  if (!URL.canParse(uri)) return `${uri} is not a URL`;
  const url = new URL(uri);
  if (uri.includes("#")) return `${uri} must not contain a fragment`;
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname))
    return `${uri}: http is for loopback hosts only; use https`;
  return undefined;
}

/**
 * The nesting depth of a JSON value and its size as JSON in UTF-8 bytes, counted without recursion (a value
 * may nest deeper than the call stack, which JSON.stringify would overflow); counting stops past `maxBytes`.
 */
function measure(value: unknown, maxBytes: number): { depth: number; bytes: number } {
  let depth = 0;
  let bytes = 0;
  const stack: { value: unknown; level: number }[] = [{ value, level: 0 }];
  while (stack.length > 0 && bytes <= maxBytes) {
    const { value: item, level } = stack.pop()!;
    if (item !== null && typeof item === "object") {
      depth = Math.max(depth, level + 1);
      // brackets and separators, then each key with its quotes and colon
      const entries = Array.isArray(item)
        ? item.map((v) => ["", v] as const)
        : Object.entries(item).filter(([, v]) => v !== undefined);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, child] of entries) {
        if (!Array.isArray(item)) bytes += Buffer.byteLength(JSON.stringify(key)) + 1;
        stack.push({ value: child, level: level + 1 });
      }
    } else {
      bytes += Buffer.byteLength(JSON.stringify(item) ?? "null");
    }
  }
  return { depth, bytes };
}

/**
 * Why this client metadata cannot be registered, or undefined: the limits above, public clients only
 * (token_endpoint_auth_method "none": MCP clients cannot keep a secret; PKCE protects their codes) and at
 * least one acceptable redirect URI.
 */
export function clientMetadataProblem(metadata: Record<string, unknown>): ClientMetadataProblem | undefined {
  const invalid = (message: string): ClientMetadataProblem => ({ code: "invalid_client_metadata", message });
  const badRedirect = (message: string): ClientMetadataProblem => ({ code: "invalid_redirect_uri", message });

  const [unstorable] = unstorableText(metadata, 1);
  if (unstorable) {
    const message = `${unstorable.path}: ${unstorable.message}`;
    return unstorable.path.startsWith("redirect_uris") ? badRedirect(message) : invalid(message);
  }
  const { depth, bytes } = measure(metadata, CLIENT_METADATA_LIMITS.metadataBytes);
  if (depth > CLIENT_METADATA_LIMITS.depth)
    return invalid(`The client metadata may nest at most ${CLIENT_METADATA_LIMITS.depth} levels deep`);
  if (bytes > CLIENT_METADATA_LIMITS.metadataBytes) {
    return invalid(`The client metadata may take at most ${CLIENT_METADATA_LIMITS.metadataBytes / 1024} KB as JSON`);
  }
  if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== "none") {
    return invalid("Only public clients are supported: token_endpoint_auth_method must be none");
  }
  if (metadata.client_name !== undefined) {
    if (typeof metadata.client_name !== "string") return invalid("client_name must be a string");
    const length = characters(metadata.client_name);
    if (length > CLIENT_METADATA_LIMITS.clientNameLength) {
      return invalid(
        `client_name may have at most ${CLIENT_METADATA_LIMITS.clientNameLength} characters; it has ${length}`,
      );
    }
  }
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) return badRedirect("Register at least one redirect URI");
  if (uris.length > CLIENT_METADATA_LIMITS.redirectUris) {
    return badRedirect(
      `Register at most ${CLIENT_METADATA_LIMITS.redirectUris} redirect URIs; there are ${uris.length}`,
    );
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return badRedirect(problem);
  }
  return undefined;
}
