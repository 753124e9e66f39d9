// What credits do when an invoice is voided and reissued (invoices/lifecycle/void-invoice.ts): the credit burned
// on the void invoice and a prepaid grant billed on it move to the draft that reissues it. credit_ledger and
// credit_grants are this module's tables; the invoices module asks here rather than writing them.
import type { CompanyScope } from "../../db/company-scope.js";
import { moveCreditsToInvoice } from "./credit-repository.js";

/** Moves the credit rows of invoice `from` to invoice `to`, in the voiding transaction. */
export const moveCreditsToReissue = (tx: CompanyScope, from: string, to: string): Promise<void> =>
  moveCreditsToInvoice(tx, from, to);
