import type { Database } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { createApiKeys } from "./api-keys.js";
import { createBootstrap } from "./bootstrap.js";
import { createCompanies } from "./companies.js";
import { createDashboardSessions } from "./dashboard-sessions.js";
import { createKeyAuthentication } from "./key-authentication.js";
import { createUsers } from "./users.js";

/**
 * Who may call (`services.access`), one job per file: companies, API keys (the admin API's and a company's
 * own), authenticating a request's key, dashboard users and their sessions, and the operator's bootstrap.
 */
export function createAccessService(deps: { db: Database; clock: Clock; rememberKeys: boolean }) {
  const keys = createKeyAuthentication(deps);
  return {
    ...createCompanies(deps),
    ...createApiKeys({ ...deps, forgetKeys: keys.forgetKeys }),
    authenticate: keys.authenticate,
    ...createUsers(deps),
    ...createDashboardSessions(deps),
    ...createBootstrap(deps),
  };
}

export type AccessService = ReturnType<typeof createAccessService>;
