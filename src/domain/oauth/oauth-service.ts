import { createHash, randomBytes } from "node:crypto";
import type { Database } from "../../db/database.js";
import type { AccessService } from "../access/access-service.js";
import type { Actor, Scope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { unstorableReason } from "../kernel/storable-text.js";
import { clientMetadataProblem } from "./client-metadata.js";
import * as repo from "./oauth-repository.js";

/** The scopes this service serves over MCP (the API description lists more; docs/mcp.md, "Scopes" maps them). */
export const OAUTH_SCOPES = ["read:invoices", "write:invoices"] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** What each OAuth scope lets the MCP tools do, in the API's own scopes. */
const INTERNAL_SCOPES: Record<OAuthScope, Scope[]> = {
  "read:invoices": ["contracts:read", "usage:read", "invoices:read", "customers:read"],
  "write:invoices": ["contracts:write", "usage:write", "invoices:write", "customers:write"],
};

const REQUEST_TTL_MS = 10 * 60_000;
const CODE_TTL_MS = 5 * 60_000;
const ACCESS_TTL_MS = 60 * 60_000;
const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;

/**
 * A PKCE code challenge as RFC 7636 (4.2) allows it: BASE64URL(SHA256(verifier)) is 43 characters; up to
 * 128 characters of the base64url alphabet are taken, the length limits of the verifier itself (4.1).
 */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;

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
function storable(name: string, value: string | undefined): void {
  const reason = value === undefined ? undefined : unstorableReason(value);
  if (reason) throw new OAuthProtocolError("invalid_request", `${name} ${reason}`);
}

const hash = (secret: string) => createHash("sha256").update(secret, "utf8").digest();
const secret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`;

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

/** The actor an MCP call acts as: the token's company, with the API scopes its OAuth scopes stand for. */
export function actorForGrant(grant: { companyId: string; scopes: readonly string[]; credential: string }): Actor {
  const scopes = new Set<Scope>();
  for (const s of grant.scopes) for (const internal of INTERNAL_SCOPES[s as OAuthScope] ?? []) scopes.add(internal);
  return { companyId: grant.companyId, scopes, credentialId: grant.credential };
}

/**
 * The authorization server's state: clients (RFC 7591), pending authorizations, codes (PKCE S256, single
 * use, bound to redirect_uri and resource), rotating refresh tokens and hashed access tokens.
 */
export function createOAuthService({
  db,
  clock,
  access,
  resource,
}: {
  db: Database;
  clock: Clock;
  access: AccessService;
  resource: string;
}) {
  async function issueTokens(base: {
    client_id: string;
    company_id: string;
    user_id: string;
    scopes: string[];
    resource: string | null;
    family: Buffer;
  }): Promise<TokenSet> {
    const now = clock.now();
    const accessToken = secret("mcp_at_");
    const refreshToken = secret("mcp_rt_");
    await db.transaction(async (tx) => {
      await repo.insertToken(
        tx,
        {
          ...base,
          token_hash: hash(accessToken),
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
          token_hash: hash(refreshToken),
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

  function checkResource(requested: string | null | undefined): string | null {
    if (requested === undefined || requested === null) return null;
    if (requested.replace(/\/+$/, "") !== resource.replace(/\/+$/, "")) {
      throw new OAuthProtocolError("invalid_target", `This server issues tokens for ${resource} only`);
    }
    return resource;
  }

  return {
    resource,

    /** Public clients only, within the limits of client-metadata.ts. */
    async registerClient(metadata: Record<string, unknown> & { client_id: string }): Promise<void> {
      const problem = clientMetadataProblem(metadata);
      if (problem) throw new OAuthProtocolError(problem.code, problem.message);
      storable("client_id", metadata.client_id);
      await repo.insertClient(db, { client_id: metadata.client_id, metadata, created_at: clock.now() });
    },

    async getClient(clientId: string): Promise<Record<string, unknown> | undefined> {
      storable("client_id", clientId);
      return (await repo.findClient(db, clientId))?.metadata;
    },

    /** Starts an authorization: remembers its parameters until the user has logged in and consented. */
    async beginAuthorization(
      clientId: string,
      params: {
        redirectUri: string;
        codeChallenge: string;
        state?: string | undefined;
        scopes?: string[] | undefined;
        resource?: string | undefined;
      },
    ): Promise<{ requestId: string; scopes: OAuthScope[] }> {
      storable("client_id", clientId);
      storable("redirect_uri", params.redirectUri);
      storable("code_challenge", params.codeChallenge);
      // Checked before the sign-in page: a challenge no verifier can match is a flow that cannot finish.
      if (!CODE_CHALLENGE.test(params.codeChallenge)) {
        throw new OAuthProtocolError(
          "invalid_request",
          "code_challenge must be the S256 challenge of the code verifier: 43 to 128 characters of the base64url alphabet (RFC 7636, 4.2)",
        );
      }
      storable("state", params.state);
      storable("resource", params.resource);
      const requested = params.scopes && params.scopes.length > 0 ? params.scopes : [...OAUTH_SCOPES];
      const unknown = requested.filter((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0)
        throw new OAuthProtocolError(
          "invalid_scope",
          `Unknown scope: ${unknown.join(", ")}. This server serves ${OAUTH_SCOPES.join(", ")}`,
        );
      const scopes = [...new Set(requested)] as OAuthScope[];
      const requestId = randomBytes(32).toString("base64url");
      const now = clock.now();
      await repo.insertRequest(
        db,
        {
          id: requestId,
          client_id: clientId,
          params: {
            redirectUri: params.redirectUri,
            codeChallenge: params.codeChallenge,
            state: params.state ?? null,
            scopes,
            resource: checkResource(params.resource),
          },
          user_id: null,
          company_id: null,
          expires_at: new Date(now.getTime() + REQUEST_TTL_MS),
        },
        now,
      );
      return { requestId, scopes };
    },

    async pendingRequest(requestId: string): Promise<repo.OAuthRequestRow | undefined> {
      storable("request_id", requestId);
      const request = await repo.findRequest(db, requestId);
      return request && request.expires_at.getTime() > clock.now().getTime() ? request : undefined;
    },

    /** The login step: the user's company is the token's company. */
    async login(
      requestId: string,
      email: string,
      password: string,
    ): Promise<repo.OAuthRequestRow | "bad_credentials" | undefined> {
      storable("email", email);
      const request = await this.pendingRequest(requestId);
      if (!request) return undefined;
      const user = await access.verifyUserPassword(email, password);
      if (!user) return "bad_credentials";
      // A new id for the consent step: only the browser that logged in learns it, so a request id planted
      // in someone else's login form cannot be used to answer their consent.
      const consentId = randomBytes(32).toString("base64url");
      await repo.setRequestUser(db, requestId, consentId, user.id, user.company_id);
      return { ...request, id: consentId, user_id: user.id, company_id: user.company_id };
    },

    /** The consent step: a code on Allow, access_denied on Deny; either way the request is used up. Returns the redirect. */
    async decide(requestId: string, allow: boolean): Promise<string | undefined> {
      storable("request_id", requestId);
      const request = await repo.deleteRequest(db, requestId);
      if (!request || request.expires_at.getTime() <= clock.now().getTime() || !request.user_id || !request.company_id)
        return undefined;
      const target = new URL(request.params.redirectUri);
      if (request.params.state !== null) target.searchParams.set("state", request.params.state);
      if (!allow) {
        target.searchParams.set("error", "access_denied");
        target.searchParams.set("error_description", "The user did not allow access");
        return target.toString();
      }
      const code = randomBytes(32).toString("base64url");
      const now = clock.now();
      await repo.insertCode(
        db,
        {
          code_hash: hash(code),
          client_id: request.client_id,
          company_id: request.company_id,
          user_id: request.user_id,
          scopes: request.params.scopes,
          code_challenge: request.params.codeChallenge,
          redirect_uri: request.params.redirectUri,
          resource: request.params.resource,
          expires_at: new Date(now.getTime() + CODE_TTL_MS),
          used_at: null,
        },
        now,
      );
      target.searchParams.set("code", code);
      return target.toString();
    },

    async challengeFor(clientId: string, code: string): Promise<string> {
      storable("code", code);
      const row = await repo.findCode(db, hash(code));
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
      const codeHash = hash(code);
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
      const resourceNow = requestedResource === undefined ? null : checkResource(requestedResource);
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
      const row = await repo.findTokenAnyState(db, hash(refreshToken));
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
      if (requestedResource !== undefined && checkResource(requestedResource) !== row.resource) {
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
      const row = await repo.findLiveToken(db, hash(token), "access", now);
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
      const row = await repo.findTokenAnyState(db, hash(token));
      if (!row || row.client_id !== clientId) return;
      const now = clock.now();
      if (row.kind === "refresh") await repo.revokeFamily(db, row.family, now);
      else await repo.revokeToken(db, row.token_hash, now);
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
