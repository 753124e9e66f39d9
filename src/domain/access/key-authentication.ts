import type { Database } from "../../db/database.js";
import { ALL_SCOPES, type Scope } from "../kernel/actor.js";
import { openTenancy, type Tenancy } from "../kernel/tenancy.js";
import type { Clock } from "../kernel/clock.js";
import { UnauthenticatedError } from "../kernel/errors.js";
import * as repo from "./access-repository.js";
import { hashApiKey } from "./api-key-secret.js";

// last_used_at is written at most once a minute per key and process: a dashboard hint, not a hot-path write.
const LAST_USED_RESOLUTION_MS = 60_000;

/** At most this many API keys are remembered when `rememberKeys` is on (see `knownKeys`). */
const KNOWN_KEYS_LIMIT = 10_000;

/** The caller behind an API key, on every request: the key looked up by its hash (or remembered), its use noted. */
export function createKeyAuthentication({
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

  return {
    /** The caller behind a presented API key, or 401 `Invalid API key`. */
    async authenticate(presentedKey: string): Promise<Tenancy> {
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
      return openTenancy(db, {
        companyId: row.company_id,
        scopes: new Set((row.scopes ?? ALL_SCOPES) as Scope[]),
        credentialId: row.id,
      });
    },

    /** Forgets every remembered key: called on each revocation. */
    forgetKeys(): void {
      knownKeys?.clear();
    },
  };
}
