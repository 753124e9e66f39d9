/**
 * Who is calling /mcp: `Authorization: Bearer <credential>`, where the credential is either an OAuth access
 * token of this service's authorization server or an API key of the REST API. What the two let a caller do
 * is the same set of tools; the scopes differ (mcp-tools.ts, McpCaller).
 */
import type { Request, RequestHandler, Response } from "express";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { AccessService } from "../../domain/access/access-service.js";
import type { OAuthService } from "../../domain/oauth/oauth-service.js";
import type { Tenancy } from "../../domain/kernel/tenancy.js";
import { UnauthenticatedError } from "../../domain/kernel/errors.js";
import type { FailureThrottle } from "../../platform/failure-throttle.js";
import type { RateLimiter } from "../../platform/rate-limiter.js";
import type { McpCaller } from "./mcp-tools.js";

/** Every access token this service issues starts so (oauth-tokens.ts); no API key it generates does. */
const ACCESS_TOKEN_PREFIX = "mcp_at_";

/** What the middleware leaves in res.locals for the /mcp handler. */
export interface McpCredential {
  caller: McpCaller;
  /** An OAuth token's grant, handed on to the MCP transport as before; undefined for an API key. */
  authInfo: AuthInfo | undefined;
}

export const credentialOf = (res: Response) => res.locals.mcpCredential as McpCredential;

/**
 * Authenticates POST /mcp. A credential that starts with `mcp_at_` is an OAuth access token and nothing
 * else; any other is looked up as an API key (hashed: key-authentication.ts), so one lookup decides either way.
 * Refusals are the SDK's bearer middleware's (401 `invalid_token` with `WWW-Authenticate: Bearer …,
 * resource_metadata="…"`), the metadata URL on the host the request was addressed to, so that a client
 * led by it finds a resource matching the URL it connected to (mcp-origins.ts).
 *
 * A wrong API key counts against the client address's failed-authentication budget, as on the API
 * (authenticate.ts): once spent, wrong keys get 429 with Retry-After; a valid credential is never refused
 * by it. OAuth tokens do not count, as before: an expired one is the normal prelude to a refresh.
 * Neither kind of credential is ever logged.
 */
export function authenticateMcp({
  access,
  oauth,
  provider,
  resourceMetadataUrl,
  authFailures,
  rateLimiter,
}: {
  access: AccessService;
  oauth: OAuthService;
  provider: OAuthServerProvider;
  /** The protected resource metadata URL on the host `req` was addressed to. */
  resourceMetadataUrl: (req: Request) => string;
  authFailures: FailureThrottle | null;
  /** The API's per-credential request budget (BILLING_RATE_LIMIT), the same one: a key spends it on either surface. */
  rateLimiter: RateLimiter | null;
}): RequestHandler {
  return async (req, res, next) => {
    /** Once authenticated: within the credential's request budget, or 429 with Retry-After. */
    const admit = (credential: McpCredential) => {
      const verdict = rateLimiter?.take(credential.caller.actor.credentialId);
      if (verdict && !verdict.allowed) {
        const wait = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
        res.set("Retry-After", String(wait));
        res.status(429).json({ error: "rate_limited", error_description: `Too many requests; retry after ${wait} s` });
        return;
      }
      res.locals.mcpCredential = credential;
      next();
    };
    const refuse = (description: string) => {
      res.set(
        "WWW-Authenticate",
        `Bearer error="invalid_token", error_description="${description}", resource_metadata="${resourceMetadataUrl(req)}"`,
      );
      res.status(401).json({ error: "invalid_token", error_description: description });
    };
    try {
      const header = req.headers.authorization;
      if (!header) return refuse("Missing Authorization header");
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) return refuse("Invalid Authorization header format, expected 'Bearer TOKEN'");
      const credential = match[1]!;

      if (credential.startsWith(ACCESS_TOKEN_PREFIX)) {
        let authInfo: AuthInfo;
        try {
          authInfo = await provider.verifyAccessToken(credential);
        } catch (error) {
          if (error instanceof InvalidTokenError) return refuse(error.message);
          throw error;
        }
        const companyId = authInfo.extra?.companyId as string;
        const actor = oauth.tenancyForGrant({
          companyId,
          scopes: authInfo.scopes,
          credential: `oauth:${authInfo.clientId}`,
        });
        return admit({ caller: { actor, oauthScopes: authInfo.scopes }, authInfo });
      }

      let actor: Tenancy;
      try {
        if (credential.length > 512) throw UnauthenticatedError.invalid();
        actor = await access.authenticate(credential);
      } catch (error) {
        if (!(error instanceof UnauthenticatedError)) throw error;
        const address = req.ip ?? req.socket.remoteAddress ?? "";
        const wait = authFailures?.refusal(address, "api");
        if (wait !== undefined) {
          res.set("Retry-After", String(wait));
          res.status(429).json({
            error: "too_many_failed_attempts",
            error_description: `Too many failed authentication attempts from this address; retry after ${wait} s`,
          });
          return;
        }
        authFailures?.countFailure(address);
        return refuse("Invalid or expired token");
      }
      admit({ caller: { actor, oauthScopes: null }, authInfo: undefined });
    } catch (error) {
      next(error);
    }
  };
}
