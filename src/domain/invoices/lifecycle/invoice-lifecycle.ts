import { addDays } from "../../kernel/billing-period.js";
import { ConflictError, ValidationError } from "../../kernel/errors.js";

/**
 * The invoice lifecycle (docs/decisions.md, "Invoices", lifecycle): `draft` → `issued` → `paid`, and `issued` →
 * `void`. Only a draft changes; issuing freezes it. Pure: the service applies what these decide, under the
 * invoice's row lock.
 */
export const INVOICE_STATUSES = ["draft", "issued", "paid", "void"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export type InvoiceAction = "finalize" | "pay" | "void";

/**
 * What an action does to an invoice in a status: `apply` (the transition), `unchanged` (it happened already:
 * the invoice is answered as it is), or a 409 naming the status that forbids it (`invoice_is_<status>`).
 */
export type TransitionVerdict =
  | { kind: "apply"; to: InvoiceStatus }
  | { kind: "unchanged" }
  | { kind: "refused"; error: ConflictError };

const refusal = (status: InvoiceStatus, action: InvoiceAction, why: string): TransitionVerdict => ({
  kind: "refused",
  error: new ConflictError(`The invoice is ${status}: it cannot be ${PAST[action]}. ${why}`, `invoice_is_${status}`),
});

const PAST: Record<InvoiceAction, string> = { finalize: "finalized", pay: "marked paid", void: "voided" };

export function transition(status: InvoiceStatus, action: InvoiceAction): TransitionVerdict {
  switch (action) {
    case "finalize":
      if (status === "draft") return { kind: "apply", to: "issued" };
      if (status === "void") return refusal(status, action, "A void invoice stays void.");
      return { kind: "unchanged" }; // issued or paid: it was finalized
    case "pay":
      if (status === "issued") return { kind: "apply", to: "paid" };
      if (status === "paid") return { kind: "unchanged" };
      if (status === "draft") return refusal(status, action, "Finalize it first.");
      return refusal(status, action, "A void invoice stays void.");
    case "void":
      if (status === "issued") return { kind: "apply", to: "void" };
      if (status === "void") return { kind: "unchanged" };
      if (status === "draft")
        return refusal(status, action, "A draft is not owed yet: it changes until it is finalized.");
      return refusal(status, action, "A paid invoice cannot be voided.");
  }
}

/** The due date of an invoice issued on `issuedDate` under payment terms of `days` (billing_payment_terms_days). */
export const dueDateOf = (issuedDate: string, days: number): string => addDays(issuedDate, days);

/**
 * The paid date of a payment recorded `today`: the date given, or today. It may not precede the issue date,
 * nor lie after today.
 */
export function paidDateOf(given: string | undefined, issuedDate: string, today: string): string {
  const paid = given ?? today;
  if (paid < issuedDate) {
    throw new ValidationError(
      `paid_date ${paid} is before the invoice's issued_date ${issuedDate}`,
      "paid_date_before_issue",
      [{ path: "paid_date", message: `must be on or after ${issuedDate}` }],
    );
  }
  if (paid > today) {
    throw new ValidationError(`paid_date ${paid} is in the future`, "paid_date_in_future", [
      { path: "paid_date", message: `must be on or before ${today}` },
    ]);
  }
  return paid;
}

/**
 * The latest period end whose drafts are due to be issued at `now`, `graceMs` after their period ended (its
 * last day's midnight, UTC): every draft of a period ending on or before it is due.
 */
export function lastDuePeriodEnd(now: Date, graceMs: number): string {
  // The period ending on day D is due at D+1 00:00 + grace; so D <= (now - grace) - 1 day, by UTC date.
  const cutoff = new Date(now.getTime() - graceMs);
  const day = new Date(Date.UTC(cutoff.getUTCFullYear(), cutoff.getUTCMonth(), cutoff.getUTCDate()));
  return addDays(day.toISOString().slice(0, 10), -1);
}
