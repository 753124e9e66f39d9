import { addDays } from "../../kernel/billing-period.js";
import { ValidationError } from "../../kernel/errors.js";

// The invoice lifecycle's dates: when an issued invoice is due, the date a payment may carry, which drafts are
// due to be issued. What an invoice may do in each status is invoice-states.ts's. Pure.

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
