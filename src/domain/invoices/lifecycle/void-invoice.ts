import type { Tenancy } from "../../kernel/tenancy.js";
import { nextNumbers } from "../../counters/counters.js";
import { requireScope } from "../../kernel/actor.js";
import { addDays } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import { ConflictError } from "../../kernel/errors.js";
import { Big } from "../../kernel/money.js";
import * as repo from "./invoice-change-repository.js";
import { dueDateOf } from "./invoice-lifecycle.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";
import { changeInvoice } from "./change-invoice.js";
import { formatInvoiceNumber } from "./draft-invoices.js";
import { moveEventsToReissue } from "../../usage/reissued-invoices.js";
import { moveCreditsToReissue } from "../../credits/reissued-invoices.js";

/**
 * POST …/void: issued → void, and reissued: a new draft for the same contract and period takes over its lines
 * and usage (`reissueInvoice`), so the month can be corrected and billed again; it waits to be finalized by
 * hand. An invoice with payments or credit notes is not voided (409 `invoice_has_payments`): credit it instead.
 * A void invoice answers unchanged.
 */
export function createVoidInvoice({ clock }: { clock: Clock }) {
  return async function voidInvoice(tenant: Tenancy, number: string): Promise<InvoiceWithLines> {
    requireScope(tenant, "invoices:write");
    const { invoice } = await changeInvoice(tenant, clock, number, "void", async (scope, invoice) => {
      if (new Big(invoice.amount_paid).gt(0) || new Big(invoice.amount_credited).gt(0)) {
        throw new ConflictError(
          `Invoice ${number} has payments or credit notes: correct it with a credit note instead of voiding it`,
          "invoice_has_payments",
        );
      }
      const now = clock.now();
      await repo.voidInvoice(scope, number, now);
      const seq = await nextNumbers(scope, "invoice_number", 1);
      const issuedDate = addDays(invoice.period_end, 1);
      const reissued = formatInvoiceNumber(seq);
      await repo.reissueInvoice(scope, {
        from: number,
        number: reissued,
        seq,
        issuedDate,
        dueDate: dueDateOf(issuedDate, invoice.payment_terms_days),
        at: now,
      });
      // Their rows follow the reissue, each module moving its own.
      await moveEventsToReissue(scope, number, reissued);
      await moveCreditsToReissue(scope, number, reissued);
      return { updated_at: now };
    });
    return invoice;
  };
}
