// What usage does when an invoice is voided and reissued (invoices/lifecycle/void-invoice.ts): the events billed
// on the void invoice move to the draft that reissues it. usage_events is this module's table; the invoices
// module asks here rather than writing it.
import type { CompanyScope } from "../../db/company-scope.js";
import { moveEventsToInvoice } from "./rerating-repository.js";

/** Moves the events of invoice `from` to invoice `to`, in the voiding transaction. */
export const moveEventsToReissue = (tx: CompanyScope, from: string, to: string): Promise<void> =>
  moveEventsToInvoice(tx, from, to);
