import type { Tenancy } from "../../kernel/tenancy.js";
import { requireScope } from "../../kernel/actor.js";
import { toDateString } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import { ConflictError } from "../../kernel/errors.js";
import { paidDateOf } from "../lifecycle/invoice-lifecycle.js";
import * as repo from "../lifecycle/invoice-change-repository.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";
import { changeInvoice } from "../lifecycle/change-invoice.js";
import { dueOn, recordPaymentOn } from "./collect-invoice.js";

/**
 * POST …/pay: issued → paid in full on `paidDate` (default: today, by the service's clock): what is left due is
 * recorded as one payment (method `other`). A paid invoice answers unchanged, unless the date given is another
 * one (409).
 */
export function createPayInvoice({ clock }: { clock: Clock }) {
  return async function pay(tenant: Tenancy, number: string, paidDate?: string): Promise<InvoiceWithLines> {
    requireScope(tenant, "invoices:write");
    const { invoice } = await changeInvoice(
      tenant,
      clock,
      number,
      "pay",
      async (scope, invoice) => {
        const now = clock.now();
        const paid = paidDateOf(paidDate, invoice.issued_date, toDateString(now));
        // Paid in full: what is left due is recorded as one payment, so that amount_paid is always its payments' sum.
        const due = dueOn(invoice);
        if (due.gt(0)) {
          await recordPaymentOn(scope, invoice, clock, {
            amount: due,
            paidOn: paid,
            method: "other",
            reference: null,
            now,
          });
        } else {
          await repo.payInvoice(scope, number, paid, now);
        }
        return { paid_date: paid, updated_at: now };
      },
      (invoice) => {
        if (paidDate !== undefined && invoice.paid_date !== paidDate) {
          throw new ConflictError(`Invoice ${number} was paid on ${invoice.paid_date}`, "invoice_is_paid");
        }
      },
    );
    return invoice;
  };
}
