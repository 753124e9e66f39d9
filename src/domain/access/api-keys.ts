import type { Tenancy } from "../kernel/tenancy.js";
import type { Database, Queryable } from "../../db/database.js";
import { ALL_SCOPES, type Scope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { checkExpiry, checkName, checkScopes } from "./access-checks.js";
import * as repo from "./access-repository.js";
import { displayPrefix, generateApiKey, hashApiKey } from "./api-key-secret.js";
import { findCompany } from "./companies.js";

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

/** What a new key may say of itself; the secret is made here, or handed in by bootstrap. */
interface NewKeyInput {
  name?: string | null | undefined;
  scopes?: readonly string[] | undefined;
  expiresAt?: Date | null | undefined;
}

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

/** Stores `key` (hashed) as a key of the company, its name and scopes checked; in the caller's transaction or not. */
export async function insertApiKey(
  q: Queryable,
  clock: Clock,
  companyId: string,
  key: string,
  input: NewKeyInput,
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

/**
 * API keys: the admin API's (any company, by id) and a company's own (dashboard Settings → API keys). Every
 * revocation calls `forgetKeys`, so that no remembered key outlives it (key-authentication.ts).
 */
export function createApiKeys({ db, clock, forgetKeys }: { db: Database; clock: Clock; forgetKeys: () => void }) {
  return {
    async createApiKey(companyId: string, input: NewKeyInput): Promise<ApiKey & { key: string }> {
      if (!(await findCompany(db, companyId))) throw new NotFoundError("company");
      checkExpiry(input.expiresAt, clock.now());
      const key = generateApiKey();
      const row = await insertApiKey(db, clock, companyId, key, input);
      return { ...presentApiKey(row), key };
    },

    async revokeApiKey(id: string): Promise<ApiKey & { revoked_at: string }> {
      const row = isUuid(id) ? await repo.revokeApiKey(db, id, clock.now()) : undefined;
      forgetKeys();
      if (!row) throw new NotFoundError("api_key");
      return { ...presentApiKey(row), revoked_at: row.revoked_at!.toISOString() };
    },

    /** Settings → API keys: the tenant's own company's keys, newest first. */
    async listApiKeys(tenant: Tenancy): Promise<ApiKeyListing[]> {
      const rows = await repo.listApiKeysOfCompany(tenant.data);
      const now = clock.now().getTime();
      return rows.map((row) => presentListing(row, now));
    },

    /** One of the tenant's company's keys; another company's key id is a 404, like a missing one. */
    async getOwnApiKey(tenant: Tenancy, id: string): Promise<ApiKeyListing> {
      const row = isUuid(id) ? await repo.findApiKeyOfCompany(tenant.data, id) : undefined;
      if (!row) throw new NotFoundError("api_key");
      return presentListing(row, clock.now().getTime());
    },

    /** A new key for the tenant's own company (dashboard Settings → API keys); the key is in this answer only. */
    async createOwnApiKey(tenant: Tenancy, input: NewKeyInput): Promise<ApiKey & { key: string }> {
      checkExpiry(input.expiresAt, clock.now());
      const key = generateApiKey();
      const row = await insertApiKey(db, clock, tenant.companyId, key, input);
      return { ...presentApiKey(row), key };
    },

    /** Revokes one of the tenant's company's keys; another company's key id is a 404, like a missing one. */
    async revokeOwnApiKey(tenant: Tenancy, id: string): Promise<ApiKey & { revoked_at: string }> {
      const row = isUuid(id) ? await repo.revokeApiKeyOfCompany(tenant.data, id, clock.now()) : undefined;
      forgetKeys();
      if (!row) throw new NotFoundError("api_key");
      return { ...presentApiKey(row), revoked_at: row.revoked_at!.toISOString() };
    },
  };
}
