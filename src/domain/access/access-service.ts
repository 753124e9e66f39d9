import { forCompany } from "../../db/company-scope.js";
import { createHmac, randomBytes } from "node:crypto";
import { hash as argonHash, verify as argonVerify } from "@node-rs/argon2";
import { z } from "zod";
import type { Database } from "../../db/database.js";
import { ALL_SCOPES, isScope, type Actor, type Scope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, UnauthenticatedError, ValidationError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import * as repo from "./access-repository.js";
import { displayPrefix, generateApiKey, hashApiKey, secretsEqual } from "./api-key-secret.js";

export interface Company {
  object: "company";
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  object: "api_key";
  id: string;
  name: string | null;
  prefix: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
}

/** A key as Settings → API keys lists it: never its secret, with its state and last use. */
export interface ApiKeyListing extends ApiKey {
  revoked_at: string | null;
  last_used_at: string | null;
  /** By the service's clock: revoked wins over expired. */
  state: "active" | "revoked" | "expired";
}

/** A signed-in dashboard user, resumed from the session cookie. */
export interface DashboardSession {
  actor: Actor;
  user: User;
  companyName: string;
  /** Must come back with every state-changing request (a hidden form field). */
  csrfToken: string;
}

/** Dashboard sessions last 12 hours from sign-in; signing out ends them at once. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
// last_used_at is written at most once a minute per key and process: a dashboard hint, not a hot-path write.
const LAST_USED_RESOLUTION_MS = 60_000;

const csrfTokenOf = (sessionToken: string) =>
  createHmac("sha256", sessionToken).update("billing-dashboard-csrf").digest("base64url");

export interface User {
  object: "user";
  id: string;
  email: string;
  company_id: string;
}

const presentCompany = (row: repo.CompanyRow): Company => ({
  object: "company",
  id: row.id,
  name: row.name,
  created_at: row.created_at.toISOString(),
});

const presentApiKey = (row: repo.ApiKeyRow): ApiKey => ({
  object: "api_key",
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scopes: (row.scopes ?? [...ALL_SCOPES]) as Scope[],
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at ? row.expires_at.toISOString() : null,
});

function presentListing(row: repo.ApiKeyRow, nowMs: number): ApiKeyListing {
  const state = row.revoked_at ? "revoked" : row.expires_at && row.expires_at.getTime() <= nowMs ? "expired" : "active";
  return {
    ...presentApiKey(row),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
    last_used_at: row.last_used_at ? row.last_used_at.toISOString() : null,
    state,
  };
}

function checkScopes(scopes: readonly string[] | undefined): Scope[] | null {
  if (scopes === undefined) return null;
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown scope: ${unknown.join(", ")}. Known scopes: ${ALL_SCOPES.join(", ")}`,
      "invalid_scope",
    );
  }
  if (scopes.length === 0)
    throw new ValidationError("scopes must name at least one scope, or be left out for full access", "invalid_scope");
  return [...new Set(scopes)] as Scope[];
}

// The admin API validates these in its schemas; the CLI calls the service directly, so the service checks
// them too (a blank company name, an invalid date or a one-letter password must not get in by the CLI).
/** Each refusal names its field in `details` (`name`, `company`, `email`, `password`, `expires_at`), for forms. */
function checkName(field: string, name: string, path = field): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200 || trimmed.includes("\u0000")) {
    const message =
      trimmed.length < 1
        ? "is required"
        : trimmed.length > 200
          ? "Too big: expected string to have <=200 characters"
          : "must not contain NUL characters";
    throw new ValidationError(`${field} must be 1 to 200 characters`, "invalid_request", [{ path, message }]);
  }
  return trimmed;
}

function checkExpiry(expiresAt: Date | null | undefined, now: Date): void {
  if (!expiresAt) return;
  if (Number.isNaN(expiresAt.getTime())) {
    throw new ValidationError("expires_at is not a valid date", "invalid_expires_at", [
      { path: "expires_at", message: "Invalid date" },
    ]);
  }
  if (expiresAt.getTime() <= now.getTime()) {
    throw new ValidationError("expires_at must be in the future", "invalid_expires_at", [
      { path: "expires_at", message: "must be in the future" },
    ]);
  }
}

const emailSchema = z.string().trim().max(254).pipe(z.email());

function checkUser(email: string, password: string): string {
  const parsed = emailSchema.safeParse(email);
  if (!parsed.success) {
    throw new ValidationError("email must be a valid email address", "invalid_request", [
      { path: "email", message: email.trim() === "" ? "is required" : "Invalid email address" },
    ]);
  }
  if (password.length < 8 || password.length > 1024) {
    throw new ValidationError("password must be 8 to 1024 characters", "invalid_request", [
      {
        path: "password",
        message: password.length < 8 ? "Too short: use at least 8 characters." : "Too long: at most 1024 characters.",
      },
    ]);
  }
  return parsed.data.toLowerCase();
}

// argon2id with OWASP's second recommended profile (19 MiB, 2 passes): memory-hard, ~30 ms here.
const ARGON_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** At most this many API keys are remembered when `rememberKeys` is on (see `knownKeys`). */
const KNOWN_KEYS_LIMIT = 10_000;

export function createAccessService({
  db,
  clock,
  rememberKeys,
}: {
  db: Database;
  clock: Clock;
  rememberKeys: boolean;
}) {
  const lastUsedWritten = new Map<string, number>();
  /**
   * API keys by hash, remembered between requests when the composition says every revocation goes through
   * this service (the embedded database, whose folder is locked to this one process): this service clears
   * the map on each, so nothing can be stale. Where a database is shared by several processes, a key revoked
   * by one must stop working at once in all, so there every request reads its key. The lookup is a round
   * trip to PGlite's single thread per request (~0.5 ms; docs/performance.md, step 15). Unknown keys are
   * never remembered, so random keys cannot grow the map; expiry is checked on every use, as for a key read.
   */
  const knownKeys = rememberKeys ? new Map<string, repo.ApiKeyRow>() : null;

  function noteKeyUse(keyId: string): void {
    const now = clock.now();
    const last = lastUsedWritten.get(keyId);
    if (last !== undefined && now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
    if (lastUsedWritten.size > 10_000) lastUsedWritten.clear();
    lastUsedWritten.set(keyId, now.getTime());
    // Not awaited: a request must not wait for (or fail on) this hint.
    repo.touchApiKey(db, keyId, now).catch(() => lastUsedWritten.delete(keyId));
  }

  async function createApiKeyRow(
    q: Parameters<typeof repo.insertApiKey>[0],
    companyId: string,
    key: string,
    input: {
      name?: string | null | undefined;
      scopes?: readonly string[] | undefined;
      expiresAt?: Date | null | undefined;
    },
  ): Promise<repo.ApiKeyRow> {
    const row: repo.ApiKeyRow = {
      id: newId(),
      company_id: companyId,
      name: input.name == null ? null : checkName("name", input.name),
      prefix: displayPrefix(key),
      key_hash: hashApiKey(key),
      scopes: checkScopes(input.scopes),
      created_at: clock.now(),
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
    };
    await repo.insertApiKey(q, row);
    return row;
  }

  return {
    async createCompany(name: string): Promise<Company> {
      const row = { id: newId(), name: checkName("name", name), created_at: clock.now() };
      await repo.insertCompany(db, row);
      return presentCompany(row);
    },

    async createApiKey(
      companyId: string,
      input: {
        name?: string | null | undefined;
        scopes?: readonly string[] | undefined;
        expiresAt?: Date | null | undefined;
      },
    ): Promise<ApiKey & { key: string }> {
      if (!isUuid(companyId) || !(await repo.findCompanyById(db, companyId))) throw new NotFoundError("company");
      checkExpiry(input.expiresAt, clock.now());
      const key = generateApiKey();
      const row = await createApiKeyRow(db, companyId, key, input);
      return { ...presentApiKey(row), key };
    },

    async revokeApiKey(id: string): Promise<ApiKey & { revoked_at: string }> {
      const row = isUuid(id) ? await repo.revokeApiKey(db, id, clock.now()) : undefined;
      knownKeys?.clear();
      if (!row) throw new NotFoundError("api_key");
      return { ...presentApiKey(row), revoked_at: row.revoked_at!.toISOString() };
    },

    /** The caller behind a presented API key, or 401 `Invalid API key`. */
    async authenticate(presentedKey: string): Promise<Actor> {
      const hash = hashApiKey(presentedKey);
      let row = knownKeys?.get(hash.toString("base64"));
      if (!row) {
        row = await repo.findApiKeyByHash(db, hash);
        if (knownKeys && row && !row.revoked_at) {
          if (knownKeys.size >= KNOWN_KEYS_LIMIT) knownKeys.clear();
          knownKeys.set(hash.toString("base64"), row);
        }
      }
      const now = clock.now().getTime();
      if (!row || row.revoked_at || (row.expires_at && row.expires_at.getTime() <= now)) {
        throw UnauthenticatedError.invalid();
      }
      noteKeyUse(row.id);
      return {
        companyId: row.company_id,
        scopes: new Set((row.scopes ?? ALL_SCOPES) as Scope[]),
        credentialId: row.id,
      };
    },

    /** Settings → API keys: the actor's own company's keys, newest first. */
    async listApiKeys(actor: Actor): Promise<ApiKeyListing[]> {
      const rows = await repo.listApiKeysOfCompany(forCompany(db, actor.companyId));
      const now = clock.now().getTime();
      return rows.map((row) => presentListing(row, now));
    },

    /** One of the actor's company's keys; another company's key id is a 404, like a missing one. */
    async getOwnApiKey(actor: Actor, id: string): Promise<ApiKeyListing> {
      const row = isUuid(id) ? await repo.findApiKeyOfCompany(forCompany(db, actor.companyId), id) : undefined;
      if (!row) throw new NotFoundError("api_key");
      return presentListing(row, clock.now().getTime());
    },

    /** A new key for the actor's own company (dashboard Settings → API keys); the key is in this answer only. */
    async createOwnApiKey(
      actor: Actor,
      input: {
        name?: string | null | undefined;
        scopes?: readonly string[] | undefined;
        expiresAt?: Date | null | undefined;
      },
    ): Promise<ApiKey & { key: string }> {
      checkExpiry(input.expiresAt, clock.now());
      const key = generateApiKey();
      const row = await createApiKeyRow(db, actor.companyId, key, input);
      return { ...presentApiKey(row), key };
    },

    /** Revokes one of the actor's company's keys; another company's key id is a 404, like a missing one. */
    async revokeOwnApiKey(actor: Actor, id: string): Promise<ApiKey & { revoked_at: string }> {
      const row = isUuid(id)
        ? await repo.revokeApiKeyOfCompany(forCompany(db, actor.companyId), id, clock.now())
        : undefined;
      knownKeys?.clear();
      if (!row) throw new NotFoundError("api_key");
      return { ...presentApiKey(row), revoked_at: row.revoked_at!.toISOString() };
    },

    /**
     * Dashboard sign-up: a new company and its owner, in one transaction (an email already taken leaves no
     * company behind).
     */
    async signUp(input: { companyName: string; email: string; password: string }): Promise<User> {
      const companyName = checkName("company name", input.companyName, "company");
      const email = checkUser(input.email, input.password);
      const passwordHash = await argonHash(input.password, ARGON_OPTIONS);
      return db.transaction(async (tx) => {
        const company = { id: newId(), name: companyName, created_at: clock.now() };
        await repo.insertCompany(tx, company);
        const user: repo.UserRow = {
          id: newId(),
          company_id: company.id,
          email,
          password_hash: passwordHash,
          created_at: clock.now(),
        };
        if (!(await repo.insertUser(tx, user)))
          throw new ConflictError("A user with this email already exists", "email_taken");
        return { object: "user" as const, id: user.id, email: user.email, company_id: company.id };
      });
    },

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
      if (token.length < 16 || token.length > 128) return undefined;
      const row = await repo.findSessionByHash(db, hashApiKey(token));
      if (!row || row.ended_at || row.expires_at.getTime() <= clock.now().getTime()) return undefined;
      return {
        actor: { companyId: row.company_id, scopes: new Set(ALL_SCOPES), credentialId: row.id },
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
      if (token.length >= 16 && token.length <= 128) await repo.endSession(db, hashApiKey(token), clock.now());
    },

    async createUser(companyId: string, email: string, password: string): Promise<User> {
      const normalizedEmail = checkUser(email, password);
      if (!isUuid(companyId) || !(await repo.findCompanyById(db, companyId))) throw new NotFoundError("company");
      const row: repo.UserRow = {
        id: newId(),
        company_id: companyId,
        email: normalizedEmail,
        password_hash: await argonHash(password, ARGON_OPTIONS),
        created_at: clock.now(),
      };
      if (!(await repo.insertUser(db, row)))
        throw new ConflictError("A user with this email already exists", "email_taken");
      return { object: "user", id: row.id, email: row.email, company_id: row.company_id };
    },

    /** The user whose email and password match, or undefined. Runs the hash even for unknown emails (no timing oracle). */
    async verifyUserPassword(email: string, password: string): Promise<User | undefined> {
      const row = await repo.findUserByEmail(db, email.trim().toLowerCase());
      const hashToCheck = row?.password_hash ?? (await dummyHash());
      const ok = await argonVerify(hashToCheck, password).catch(() => false);
      if (!row || !ok) return undefined;
      return { object: "user", id: row.id, email: row.email, company_id: row.company_id };
    },

    /**
     * Bootstrap (docs/operations.md, "Operators and bootstrap"): a company with this name exists and this
     * exact key is one of its full-access keys. Idempotent, and safe when several processes start together.
     */
    async bootstrap(
      companyName: string,
      key: string,
      user?: { email: string; password: string },
    ): Promise<{ company: Company; createdKey: boolean; user?: { email: string; created: boolean } }> {
      // Checked and hashed before the lock is taken: argon2 costs ~30 ms, and a bad email must not get in.
      const email = user ? checkUser(user.email, user.password) : undefined;
      return db.transaction(async (tx) => {
        await repo.lockBootstrap(tx);
        let company = await repo.findOldestCompanyByName(tx, companyName);
        if (!company) {
          company = { id: newId(), name: companyName, created_at: clock.now() };
          await repo.insertCompany(tx, company);
        }
        const existing = await repo.findApiKeyByHash(tx, hashApiKey(key));
        if (existing && existing.company_id !== company.id) {
          throw new ConflictError("BILLING_BOOTSTRAP_API_KEY already belongs to another company", "bootstrap_conflict");
        }
        if (!existing) await createApiKeyRow(tx, company.id, key, { name: "bootstrap" });
        const result = { company: presentCompany(company), createdKey: !existing };
        if (!user || email === undefined) return result;
        // The user signs in to this company with this password: created once, its password set back to the
        // configured one when it differs (the environment is what the operator means).
        const found = await repo.findUserByEmail(tx, email);
        if (found && found.company_id !== company.id) {
          throw new ConflictError("BILLING_BOOTSTRAP_EMAIL already signs in to another company", "bootstrap_conflict");
        }
        if (!found) {
          const row: repo.UserRow = {
            id: newId(),
            company_id: company.id,
            email,
            password_hash: await argonHash(user.password, ARGON_OPTIONS),
            created_at: clock.now(),
          };
          await repo.insertUser(tx, row);
          return { ...result, user: { email, created: true } };
        }
        if (!(await argonVerify(found.password_hash, user.password).catch(() => false))) {
          await repo.setUserPassword(tx, found.id, await argonHash(user.password, ARGON_OPTIONS), clock.now());
        }
        return { ...result, user: { email, created: false } };
      });
    },
  };
}

// A real argon2id hash of a random string, verified against when the email is unknown, so that an
// unknown email costs as much as a wrong password.
let dummyHashPromise: Promise<string> | undefined;
const dummyHash = () => (dummyHashPromise ??= argonHash(randomBytes(16).toString("hex"), ARGON_OPTIONS));

export type AccessService = ReturnType<typeof createAccessService>;
