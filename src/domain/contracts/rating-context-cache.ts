import type { CompanyScope } from "../../db/company-scope.js";
import {
  findRatingContexts,
  listProgramVersions,
  setHasCredits,
  type ProgramVersionRow,
  type RatingContextRow,
} from "./contract-repository.js";

/** What ingestion reads of a contract to rate against it (one row per contract: its status, term and rules). */
export type { RatingContextRow } from "./contract-repository.js";

/** Entries kept per process; the oldest go first. */
const MAX_ENTRIES = 20_000;

/**
 * Contracts with their active pricing program, as ingestion rates against them, kept in memory so that a
 * batch need not load them again (issue: performance). An entry may be stale; it is never trusted blindly:
 * the write checks that each contract is still active at the version the events were rated with (and
 * ingestion starts over with fresh entries if not), and refusals are confirmed against fresh rows.
 */
export function createRatingContextCache() {
  const entries = new Map<string, RatingContextRow>();
  const key = (companyId: string, contractId: string) => `${companyId}|${contractId}`;

  return {
    /** The contexts of these contracts: cached ones unless `fresh`, the rest loaded in one query. */
    async get(scope: CompanyScope, ids: readonly string[], fresh = false): Promise<Map<string, RatingContextRow>> {
      const { companyId } = scope;
      const found = new Map<string, RatingContextRow>();
      const missing: string[] = [];
      for (const id of ids) {
        const cached = fresh ? undefined : entries.get(key(companyId, id));
        if (cached) found.set(id, cached);
        else missing.push(id);
      }
      if (missing.length > 0) {
        for (const row of await findRatingContexts(scope, missing)) {
          found.set(row.id, row);
          const k = key(companyId, row.id);
          entries.delete(k);
          entries.set(k, row);
        }
        while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      }
      return found;
    },

    invalidate(companyId: string, ids: Iterable<string>): void {
      for (const id of ids) entries.delete(key(companyId, id));
    },
  };
}

export type RatingContextCache = ReturnType<typeof createRatingContextCache>;

/** Every version of a contract's pricing program, by version number: re-rating prices events with the one each names. */
export async function programVersions(
  scope: CompanyScope,
  contractId: string,
): Promise<Map<number, ProgramVersionRow>> {
  return new Map((await listProgramVersions(scope, contractId)).map((v) => [v.version, v]));
}

/** From now on the contract's usage is rated on the locking path, where its credits burn (credits/credit-service.ts). */
export async function markHasCredits(scope: CompanyScope, contractId: string): Promise<void> {
  await setHasCredits(scope, contractId);
}
