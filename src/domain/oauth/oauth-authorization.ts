import type { Database } from "../../db/database.js";
import type { AccessService } from "../access/access-service.js";
import type { Clock } from "../kernel/clock.js";
import {
  checkResource,
  hashSecret,
  newSecret,
  OAUTH_SCOPES,
  OAuthProtocolError,
  storable,
  type OAuthScope,
} from "./oauth-protocol.js";
import * as repo from "./oauth-repository.js";

const REQUEST_TTL_MS = 10 * 60_000;
const CODE_TTL_MS = 5 * 60_000;

/**
 * A PKCE code challenge as RFC 7636 (4.2) allows it: BASE64URL(SHA256(verifier)) is 43 characters; up to
 * 128 characters of the base64url alphabet are taken, the length limits of the verifier itself (4.1).
 */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;

/**
 * The authorization step: a pending authorization remembered until the user has signed in and consented,
 * then a code (PKCE S256, single use, bound to its redirect_uri and resource) or access_denied.
 */
export function createOAuthAuthorization({
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
  async function pendingRequest(requestId: string): Promise<repo.OAuthRequestRow | undefined> {
    storable("request_id", requestId);
    const request = await repo.findRequest(db, requestId);
    return request && request.expires_at.getTime() > clock.now().getTime() ? request : undefined;
  }

  return {
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
      const requestId = newSecret();
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
            resource: checkResource(resource, params.resource),
          },
          user_id: null,
          company_id: null,
          expires_at: new Date(now.getTime() + REQUEST_TTL_MS),
        },
        now,
      );
      return { requestId, scopes };
    },

    pendingRequest,

    /** The login step: the user's company is the token's company. */
    async login(
      requestId: string,
      email: string,
      password: string,
    ): Promise<repo.OAuthRequestRow | "bad_credentials" | undefined> {
      storable("email", email);
      const request = await pendingRequest(requestId);
      if (!request) return undefined;
      const user = await access.verifyUserPassword(email, password);
      if (!user) return "bad_credentials";
      // A new id for the consent step: only the browser that logged in learns it, so a request id planted
      // in someone else's login form cannot be used to answer their consent.
      const consentId = newSecret();
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
      const code = newSecret();
      const now = clock.now();
      await repo.insertCode(
        db,
        {
          code_hash: hashSecret(code),
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
  };
}
