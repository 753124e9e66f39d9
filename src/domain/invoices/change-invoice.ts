import type { CompanyScope } from "../../db/company-scope.js";
import type { CompanyData } from "../kernel/tenancy.js";
import { NotFoundError } from "../kernel/errors.js";
import { thawBill } from "./invoice-figures.js";
import { transition, type InvoiceAction, type InvoiceStatus } from "./invoice-lifecycle.js";
import { presentWithLines } from "./invoice-presenter.js";
import * as repo from "./invoice-change-repository.js";
import type { InvoiceRow } from "./invoice-repository.js";
import type { InvoiceWithLines } from "./invoice-schemas.js";

/** The columns an applied change wrote on the invoice (its status is the transition's). */
export type InvoiceChange = Pick<InvoiceRow, "updated_at"> &
  Partial<Pick<InvoiceRow, "billed" | "issued_date" | "due_date" | "paid_date" | "hosted_url">>;

/**
 * One change of status, under the invoice's row lock (`lockInvoiceForChange`, the one statement that locks and
 * reads it): what `transition` allows, applied by `apply`, which returns the columns it wrote; an action that
 * happened already answers the invoice unchanged (`unchanged` may refuse that, e.g. a payment on another date).
 * Concurrent calls on one invoice queue on the lock: one applies, the rest see its result. The answer is the
 * locked invoice with the change applied: no change leaves a draft, so it presents the figures as issued.
 */
export async function changeInvoice(
  company: CompanyData,
  number: string,
  action: InvoiceAction,
  apply: (tx: CompanyScope, invoice: repo.InvoiceForChange) => Promise<InvoiceChange>,
  unchanged?: (invoice: repo.InvoiceForChange) => void,
): Promise<{ invoice: InvoiceWithLines; applied: boolean }> {
  return company.transaction(async (tx) => {
    const invoice = await repo.lockInvoiceForChange(tx, number);
    if (!invoice) throw new NotFoundError("invoice");
    const verdict = transition(invoice.status as InvoiceStatus, action);
    if (verdict.kind === "refused") throw verdict.error;
    let after: repo.InvoiceForChange = invoice;
    if (verdict.kind === "apply") after = { ...invoice, ...(await apply(tx, invoice)), status: verdict.to };
    else unchanged?.(invoice);
    // Only a draft has no frozen figures, and every action either leaves a draft (finalize) or refuses it.
    if (after.billed === null) throw new Error(`invoice ${number} is answered as a draft after ${action}`);
    return { invoice: presentWithLines(after, thawBill(after.billed)), applied: verdict.kind === "apply" };
  });
}
