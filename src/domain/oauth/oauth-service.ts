import type { Database } from "../../db/database.js";
import type { AccessService } from "../access/access-service.js";
import type { Clock } from "../kernel/clock.js";
import { openTenancy, type Tenancy } from "../kernel/tenancy.js";
import { createOAuthAuthorization } from "./oauth-authorization.js";
import { createOAuthClients } from "./oauth-clients.js";
import { actorForGrant } from "./oauth-protocol.js";
import { createOAuthTokens } from "./oauth-tokens.js";

/**
 * The authorization server's state (`services.oauth`), one job per file: clients (RFC 7591; oauth-clients),
 * pending authorizations and codes (PKCE S256, single use, bound to redirect_uri and resource;
 * oauth-authorization), rotating refresh tokens and hashed access tokens (oauth-tokens). What they share, the
 * scopes and the protocol's errors, is oauth-protocol.ts.
 */
export function createOAuthService(deps: { db: Database; clock: Clock; access: AccessService; resource: string }) {
  return {
    resource: deps.resource,
    ...createOAuthClients(deps),
    ...createOAuthAuthorization(deps),
    ...createOAuthTokens(deps),
    /** An MCP call's company, chosen once: the token's, with the API scopes its OAuth scopes stand for. */
    tenancyForGrant(grant: { companyId: string; scopes: readonly string[]; credential: string }): Tenancy {
      return openTenancy(deps.db, actorForGrant(grant));
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
