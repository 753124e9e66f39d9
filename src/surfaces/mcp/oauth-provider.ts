import type { Response } from "express";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import {
  AccessDeniedError,
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
  OAuthError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { OAuthProtocolError } from "../../domain/oauth/oauth-protocol.js";
import type { OAuthService } from "../../domain/oauth/oauth-service.js";
import { loginPage, PAGE_HEADERS } from "./oauth-pages.js";

/** RFC 7591, 3.2.2: the SDK has no class for it. */
class InvalidRedirectUriError extends OAuthError {
  static override errorCode = "invalid_redirect_uri";
}

const SDK_ERRORS: Record<OAuthProtocolError["code"], new (message: string) => OAuthError> = {
  invalid_request: InvalidRequestError,
  invalid_client: InvalidClientError,
  invalid_grant: InvalidGrantError,
  invalid_scope: InvalidScopeError,
  invalid_target: InvalidTargetError,
  invalid_client_metadata: InvalidClientMetadataError,
  invalid_redirect_uri: InvalidRedirectUriError,
  access_denied: AccessDeniedError,
};

/**
 * Domain protocol errors become the SDK's, which its handlers answer with RFC 6749 bodies; anything else
 * thrown into them is a 500 server_error.
 */
async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OAuthProtocolError) throw new SDK_ERRORS[error.code](error.message);
    throw error;
  }
}

export const clientName = (client: { client_name?: string | undefined; client_id: string }) =>
  client.client_name || client.client_id;

/**
 * Our database-backed provider for the SDK's OAuth router (which does the protocol plumbing: metadata,
 * registration, PKCE S256 check, redirect URI matching, token and revocation endpoints).
 * `canonicalResource` maps a resource indicator to the one the OAuth service binds grants to (on a loopback
 * URL, the MCP URL under another loopback host is the same resource: mcp-origins.ts).
 */
export function createOAuthProvider(
  oauth: OAuthService,
  canonicalResource: (resource: string) => string,
): OAuthServerProvider {
  const resourceOf = (resource: URL | undefined) => (resource ? canonicalResource(resource.href) : undefined);
  const clientsStore: OAuthRegisteredClientsStore = {
    async getClient(clientId) {
      return (await mapped(() => oauth.getClient(clientId))) as OAuthClientInformationFull | undefined;
    },
    async registerClient(client) {
      const full = client as OAuthClientInformationFull;
      if (full.client_secret) {
        throw new InvalidClientMetadataError(
          'Only public clients are supported: register with token_endpoint_auth_method "none"',
        );
      }
      await mapped(() => oauth.registerClient(full as unknown as Record<string, unknown> & { client_id: string }));
      return full;
    },
  };

  return {
    get clientsStore() {
      return clientsStore;
    },

    async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
      try {
        const { requestId } = await oauth.beginAuthorization(client.client_id, {
          redirectUri: params.redirectUri,
          codeChallenge: params.codeChallenge,
          state: params.state,
          scopes: params.scopes,
          resource: resourceOf(params.resource),
        });
        res
          .status(200)
          .type("html")
          .set(PAGE_HEADERS)
          .send(loginPage({ requestId, clientName: clientName(client) }));
      } catch (error) {
        if (!(error instanceof OAuthProtocolError)) throw error;
        // Errors after the redirect URI is known go back to the client (RFC 6749, 4.1.2.1).
        const target = new URL(params.redirectUri);
        target.searchParams.set("error", error.code);
        target.searchParams.set("error_description", error.message);
        if (params.state !== undefined) target.searchParams.set("state", params.state);
        res.redirect(302, target.toString());
      }
    },

    challengeForAuthorizationCode: (client, code) => mapped(() => oauth.challengeFor(client.client_id, code)),

    async exchangeAuthorizationCode(client, code, _verifier, redirectUri, resource): Promise<OAuthTokens> {
      return mapped(() => oauth.exchangeCode(client.client_id, code, redirectUri, resourceOf(resource)));
    },

    async exchangeRefreshToken(client, refreshToken, scopes, resource): Promise<OAuthTokens> {
      return mapped(() => oauth.refresh(client.client_id, refreshToken, scopes, resourceOf(resource)));
    },

    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const grant = await oauth.verifyAccessToken(token);
      if (!grant) throw new InvalidTokenError("Invalid or expired token");
      return {
        token,
        clientId: grant.clientId,
        scopes: grant.scopes,
        // The SDK's bearer middleware refuses a token whose expiresAt is before Date.now(); expiry is this
        // service's decision (its clock, already applied above), so it gets the time left, on the wall clock.
        expiresAt: Math.ceil((Date.now() + grant.expiresInMs) / 1000),
        ...(grant.resource ? { resource: new URL(grant.resource) } : {}),
        extra: { companyId: grant.companyId, userId: grant.userId },
      };
    },

    async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
      await mapped(() => oauth.revoke(client.client_id, request.token));
    },
  };
}
