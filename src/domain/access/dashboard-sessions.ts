import { createHmac, randomBytes } from "node:crypto";
import type { Database } from "../../db/database.js";
import { ALL_SCOPES } from "../kernel/actor.js";
import { openTenancy, type Tenancy } from "../kernel/tenancy.js";
import type { Clock } from "../kernel/clock.js";
import { newId } from "../kernel/ids.js";
import * as repo from "./access-repository.js";
import { hashApiKey, secretsEqual } from "./api-key-secret.js";
import type { User } from "./users.js";

/** A signed-in dashboard user, resumed from the session cookie. */
export interface DashboardSession {
  actor: Tenancy;
  user: User;
  companyName: string;
  /** Must come back with every state-changing request (a hidden form field). */
  csrfToken: string;
}

/** Dashboard sessions last 12 hours from sign-in; signing out ends them at once. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

const csrfTokenOf = (sessionToken: string) =>
  createHmac("sha256", sessionToken).update("billing-dashboard-csrf").digest("base64url");

/** A token of a length no session was ever given is refused before it is hashed or looked up. */
const plausibleToken = (token: string) => token.length >= 16 && token.length <= 128;

/** Dashboard sessions: a cookie's token (stored hashed) and the CSRF token derived from it. */
export function createDashboardSessions({ db, clock }: { db: Database; clock: Clock }) {
  return {
    /** Starts a dashboard session for a user who has just proven their password; returns the cookie's token. */
    async startSession(user: User): Promise<{ token: string; expiresAt: Date }> {
      const token = randomBytes(32).toString("base64url");
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
      await repo.deleteStaleSessions(db, user.id, now);
      await repo.insertSession(db, {
        id: newId(),
        token_hash: hashApiKey(token),
        company_id: user.company_id,
        user_id: user.id,
        created_at: now,
        expires_at: expiresAt,
        ended_at: null,
      });
      return { token, expiresAt };
    },

    /** The session behind a cookie's token, or undefined when it is unknown, ended or expired. */
    async resumeSession(token: string): Promise<DashboardSession | undefined> {
      if (!plausibleToken(token)) return undefined;
      const row = await repo.findSessionByHash(db, hashApiKey(token));
      if (!row || row.ended_at || row.expires_at.getTime() <= clock.now().getTime()) return undefined;
      return {
        actor: openTenancy(db, { companyId: row.company_id, scopes: new Set(ALL_SCOPES), credentialId: row.id }),
        user: { object: "user", id: row.user_id, email: row.email, company_id: row.company_id },
        companyName: row.company_name,
        csrfToken: csrfTokenOf(token),
      };
    },

    /** Whether `presented` is the CSRF token of the session `token` (constant-time). */
    csrfTokenMatches(token: string, presented: string | undefined): boolean {
      return typeof presented === "string" && presented.length > 0 && secretsEqual(csrfTokenOf(token), presented);
    },

    async endSession(token: string): Promise<void> {
      if (plausibleToken(token)) await repo.endSession(db, hashApiKey(token), clock.now());
    },
  };
}
