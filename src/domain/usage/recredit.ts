import type { CompanyScope } from "../../db/company-scope.js";
import { programVersions } from "../contracts/rating-context-cache.js";
import { type InvoiceStatus, may } from "../invoices/invoice-states.js";
import { invoicesEndingFrom } from "../invoices/lifecycle/draft-invoices.js";
import type { LineBook } from "../invoices/line-book.js";
import type { Clock } from "../kernel/clock.js";
import type { Recredit, Recrediting } from "../credits/credit-service.js";
import { pricedWith } from "./rerate.js";
import { rerateDrafts, type RepricedContract } from "./reprice.js";

/**
 * Credits by service date (docs/api.md, "Credits"): a grant pays for the usage of the days it is valid on,
 * whenever the events or the grant arrived. In the grant's transaction, every open draft of the contract whose
 * period meets the grant's validity is priced again with the versions its events were priced with (their charges
 * do not change), its credits given back and burned again, in period order; an issued, paid or void month is left
 * as it is, and said so.
 */
export function createRecrediting({ book, clock }: { book: LineBook; clock: Clock }): Recredit {
  return async function recredit(
    tx: CompanyScope,
    contract: RepricedContract,
    validity: { startsOn: string; expiresOn: string | null },
  ): Promise<Recrediting> {
    const invoices = (await invoicesEndingFrom(tx, contract.id, validity.startsOn)).filter(
      (i) => validity.expiresOn === null || i.periodStart <= validity.expiresOn,
    );
    const open = invoices.filter((i) => may(i.status as InvoiceStatus, "change"));
    if (open.length > 0) {
      const versions = await programVersions(tx, contract.id);
      await rerateDrafts({ tx, book, clock }, contract, open, { programOf: pricedWith(versions, contract.id) });
    }
    return {
      recredited: open.map((i) => i.number),
      unchanged: invoices
        .filter((i) => !may(i.status as InvoiceStatus, "change"))
        .map((i) => ({ number: i.number, status: i.status, periodStart: i.periodStart, periodEnd: i.periodEnd })),
    };
  };
}
