import type { Database } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { unstorableReason } from "../kernel/storable-text.js";
import {
  checkResource,
  hashSecret,
  newSecret,
  OAuthProtocolError,
  storable,
  type OAuthScope,
} from "./oauth-protocol.js";
import * as repo from "./oauth-repository.js";

const ACCESS_TTL_MS = 60 * 60_000;
const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;

export interface TokenSet {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface AccessGrant {
  clientId: string;
  companyId: string;
  userId: string;
  scopes: OAuthScope[];
  resource: string | null;
  expiresAt: Date;
  /** Time left by this service's clock: what the SDK's wall-clock expiry check must be told. */
  expiresInMs: number;
}

/**
 * The token endpoint's side: a code exchanged once for tokens, rotating refresh tokens (a reused one revokes
 * its family), hashed access tokens verified on each MCP call, and revocation (RFC 7009).
 */
export function createOAuthTokens({ db, clock, resource }: { db: Database; clock: Clock; resource: string }) {
  async function issueTokens(base: {
    client_id: string;
    company_id: string;
    user_id: string;
    scopes: string[];
    resource: string | null;
    family: Buffer;
  }): Promise<TokenSet> {
    const now = clock.now();
    const accessToken = newSecret("mcp_at_");
    const refreshToken = newSecret("mcp_rt_");
    await db.transaction(async (tx) => {
      await repo.insertToken(
        tx,
        {
          ...base,
          token_hash: hashSecret(accessToken),
          kind: "access",
          expires_at: new Date(now.getTime() + ACCESS_TTL_MS),
          revoked_at: null,
        },
        now,
      );
      await repo.insertToken(
        tx,
        {
          ...base,
          token_hash: hashSecret(refreshToken),
          kind: "refresh",
          expires_at: new Date(now.getTime() + REFRESH_TTL_MS),
          revoked_at: null,
        },
        now,
      );
    });
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_MS / 1000,
      refresh_token: refreshToken,
      scope: base.scopes.join(" "),
    };
  }

  return {
    async challengeFor(clientId: string, code: string): Promise<string> {
      storable("code", code);
      const row = await repo.findCode(db, hashSecret(code));
      if (!row || row.client_id !== clientId)
        throw new OAuthProtocolError("invalid_grant", "Unknown authorization code");
      return row.code_challenge;
    },

    /** Code → tokens, once. A second use revokes every token issued from the code (OAuth 2.1, 4.1.3). */
    async exchangeCode(
      clientId: string,
      code: string,
      redirectUri: string | undefined,
      requestedResource: string | undefined,
    ): Promise<TokenSet> {
      storable("code", code);
      const codeHash = hashSecret(code);
      const row = await repo.findCode(db, codeHash);
      if (!row || row.client_id !== clientId)
        throw new OAuthProtocolError("invalid_grant", "Unknown authorization code");
      const now = clock.now();
      if (row.used_at || !(await repo.useCode(db, codeHash, now))) {
        await repo.revokeFamily(db, codeHash, now);
        throw new OAuthProtocolError(
          "invalid_grant",
          "Authorization code already used; the tokens issued from it are revoked",
        );
      }
      if (row.expires_at.getTime() <= now.getTime())
        throw new OAuthProtocolError("invalid_grant", "Authorization code expired");
      if (redirectUri !== row.redirect_uri)
        throw new OAuthProtocolError("invalid_grant", "redirect_uri does not match the authorization request");
      const resourceNow = requestedResource === undefined ? null : checkResource(resource, requestedResource);
      if (row.resource !== null && resourceNow !== null && resourceNow !== row.resource) {
        throw new OAuthProtocolError("invalid_grant", "resource does not match the authorization request");
      }
      if (row.resource === null && resourceNow !== null)
        throw new OAuthProtocolError("invalid_grant", "resource was not part of the authorization request");
      return issueTokens({
        client_id: clientId,
        company_id: row.company_id,
        user_id: row.user_id,
        scopes: row.scopes,
        resource: row.resource ?? resourceNow,
        family: codeHash,
      });
    },

    /** Refresh tokens rotate: each is good once; a reused one revokes its whole family. */
    async refresh(
      clientId: string,
      refreshToken: string,
      scopes: string[] | undefined,
      requestedResource: string | undefined,
    ): Promise<TokenSet> {
      storable("refresh_token", refreshToken);
      const row = await repo.findTokenAnyState(db, hashSecret(refreshToken));
      const now = clock.now();
      if (!row || row.kind !== "refresh" || row.client_id !== clientId)
        throw new OAuthProtocolError("invalid_grant", "Unknown refresh token");
      if (row.revoked_at) {
        await repo.revokeFamily(db, row.family, now);
        throw new OAuthProtocolError("invalid_grant", "Refresh token already used or revoked; its family is revoked");
      }
      if (row.expires_at.getTime() <= now.getTime())
        throw new OAuthProtocolError("invalid_grant", "Refresh token expired");
      if (!(await repo.findLiveToken(db, row.token_hash, "refresh", now)))
        throw new OAuthProtocolError("invalid_grant", "The user no longer exists");
      const narrowed = scopes && scopes.length > 0 ? scopes : row.scopes;
      if (narrowed.some((s) => !row.scopes.includes(s)))
        throw new OAuthProtocolError("invalid_scope", "A refresh cannot widen the scopes");
      if (requestedResource !== undefined && checkResource(resource, requestedResource) !== row.resource) {
        throw new OAuthProtocolError("invalid_grant", "resource does not match the grant");
      }
      if (!(await repo.revokeToken(db, row.token_hash, now))) {
        await repo.revokeFamily(db, row.family, now);
        throw new OAuthProtocolError("invalid_grant", "Refresh token already used");
      }
      return issueTokens({
        client_id: clientId,
        company_id: row.company_id,
        user_id: row.user_id,
        scopes: narrowed,
        resource: row.resource,
        family: row.family,
      });
    },

    /** A live access token whose user still exists, or undefined. */
    async verifyAccessToken(token: string): Promise<AccessGrant | undefined> {
      if (unstorableReason(token)) return undefined; // never issued: base64url only
      const now = clock.now();
      const row = await repo.findLiveToken(db, hashSecret(token), "access", now);
      if (!row) return undefined;
      return {
        clientId: row.client_id,
        companyId: row.company_id,
        userId: row.user_id,
        scopes: row.scopes as OAuthScope[],
        resource: row.resource,
        expiresAt: row.expires_at,
        expiresInMs: row.expires_at.getTime() - now.getTime(),
      };
    },

    /** RFC 7009: unknown tokens are ignored; revoking a refresh token revokes its family's access tokens too. */
    async revoke(clientId: string, token: string): Promise<void> {
      storable("token", token);
      const row = await repo.findTokenAnyState(db, hashSecret(token));
      if (!row || row.client_id !== clientId) return;
      const now = clock.now();
      if (row.kind === "refresh") await repo.revokeFamily(db, row.family, now);
      else await repo.revokeToken(db, row.token_hash, now);
    },
  };
}
