import type { Database } from "../../../db/database.js";
import type { Clock } from "../../kernel/clock.js";
import { type CompanyData, companyData } from "../../kernel/tenancy.js";
import { lastDuePeriodEnd } from "./invoice-lifecycle.js";
import * as repo from "../invoice-repository.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";

/**
 * The invoice worker's round: issues up to `limit` drafts, of every company, whose billing period ended more
 * than `graceMs` ago. Each is finalized in its own transaction, exactly as by hand; a draft another process
 * issued meanwhile is left as it is; one that fails stays a draft for the next round, and the others go on.
 * Returns how many drafts it found due, how many it issued, and those that failed.
 */
export function createIssueDueDrafts({
  db,
  clock,
  finalize,
}: {
  db: Database;
  clock: Clock;
  finalize: (company: CompanyData, number: string) => Promise<{ invoice: InvoiceWithLines; applied: boolean }>;
}) {
  return async function issueDue(
    graceMs: number,
    limit: number,
  ): Promise<{ found: number; issued: number; failed: { number: string; error: unknown }[] }> {
    const due = await repo.findDraftsDue(db, lastDuePeriodEnd(clock.now(), graceMs), limit);
    let issued = 0;
    const failed: { number: string; error: unknown }[] = [];
    // One draft that cannot be issued (its transaction rolled back) must not hold up the others.
    for (const draft of due) {
      try {
        if ((await finalize(companyData(db, draft.company_id), draft.number)).applied) issued += 1;
      } catch (error) {
        failed.push({ number: draft.number, error });
      }
    }
    return { found: due.length, issued, failed };
  };
}
