// What an invoice may do in each of its states: the one home of that rule (docs/decisions.md, "Invoices",
// lifecycle). `draft` → `issued` → `paid`, and `issued` → `void`; only a draft changes, issuing freezes it.
// Every caller asks here: the lifecycle's transitions (change-invoice.ts), payments and credit notes
// (collections/), sending and reminding (delivery/), the drafts' line book, and the SQL that picks invoices by
// what they may do (reminders due, drafts due, the hosted link) takes its statuses from `statusesThat`. Pure.
import { ConflictError } from "../kernel/errors.js";
import type { Big } from "../kernel/money.js";

export const INVOICE_STATUSES = ["draft", "issued", "paid", "void"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/**
 * What can be asked of an invoice. `finalize`, `pay` and `void` move it to another status; the others are done to
 * it in the status it has: `change` (its lines: usage, re-pricing, credits, a purchase billed), `record_payment`,
 * `credit` (a credit note), `send` (its email, now or by the mail worker), `remind` (a payment reminder), `link`
 * (its hosted page and PDF by link).
 */
export const INVOICE_ACTIONS = [
  "change",
  "finalize",
  "pay",
  "void",
  "record_payment",
  "credit",
  "send",
  "remind",
  "link",
] as const;
export type InvoiceAction = (typeof INVOICE_ACTIONS)[number];

/**
 * What an action does to an invoice in a status: `apply` (a transition, to `to`), `allowed` (done in the status
 * it has), `unchanged` (a transition that happened already: the invoice is answered as it is), or refused with a
 * 409 naming the status (`invoice_is_<status>`) and why.
 */
export type Verdict =
  | { kind: "apply"; to: InvoiceStatus }
  | { kind: "allowed" }
  | { kind: "unchanged" }
  | { kind: "refused"; why: string };

const apply = (to: InvoiceStatus): Verdict => ({ kind: "apply", to });
const allowed: Verdict = { kind: "allowed" };
const unchanged: Verdict = { kind: "unchanged" };
const refused = (why: string): Verdict => ({ kind: "refused", why });

const STAYS_VOID = "A void invoice stays void: nothing is owed on it.";
const FINALIZE_FIRST = "A draft is not owed yet: finalize it first.";
const FROZEN = "Only a draft changes: issuing froze it.";

/** The table: every status, every action. A new action or status is a new row or column here and nowhere else. */
const INVOICE_STATE_TABLE: Record<InvoiceStatus, Record<InvoiceAction, Verdict>> = {
  draft: {
    change: allowed,
    finalize: apply("issued"),
    pay: refused(FINALIZE_FIRST),
    void: refused("A draft is not owed yet: it changes until it is finalized."),
    record_payment: refused(FINALIZE_FIRST),
    credit: refused(FINALIZE_FIRST),
    send: refused(FINALIZE_FIRST),
    remind: refused(FINALIZE_FIRST),
    link: refused(FINALIZE_FIRST),
  },
  issued: {
    change: refused(FROZEN),
    finalize: unchanged,
    pay: apply("paid"),
    void: apply("void"),
    record_payment: allowed,
    credit: allowed,
    send: allowed,
    remind: allowed,
    link: allowed,
  },
  paid: {
    change: refused(FROZEN),
    finalize: unchanged,
    pay: unchanged,
    void: refused("A paid invoice cannot be voided: credit it instead."),
    record_payment: refused("Nothing is due on it: it takes no payment."),
    credit: allowed,
    send: allowed,
    remind: refused("Nothing is due on it: there is nothing to remind of."),
    link: allowed,
  },
  void: {
    change: refused(FROZEN),
    finalize: refused(STAYS_VOID),
    pay: refused(STAYS_VOID),
    void: unchanged,
    record_payment: refused(STAYS_VOID),
    credit: refused(STAYS_VOID),
    send: refused(STAYS_VOID),
    remind: refused(STAYS_VOID),
    link: allowed,
  },
};

/** What `action` does to an invoice in `status`. */
export function decide(status: InvoiceStatus, action: InvoiceAction): Verdict {
  return INVOICE_STATE_TABLE[status][action];
}

const DOING: Record<InvoiceAction, string> = {
  change: "changed",
  finalize: "finalized",
  pay: "marked paid",
  void: "voided",
  record_payment: "given a payment",
  credit: "credited",
  send: "sent",
  remind: "reminded of",
  link: "shown by link",
};

/** The 409 for an action refused in a status: `invoice_is_<status>`, with why. */
export function refusalError(status: InvoiceStatus, action: InvoiceAction, why: string): ConflictError {
  return new ConflictError(`The invoice is ${status}: it cannot be ${DOING[action]}. ${why}`, `invoice_is_${status}`);
}

/** Whether `action` may be done in `status` (applied, allowed, or already done). */
export function may(status: InvoiceStatus, action: InvoiceAction): boolean {
  return decide(status, action).kind !== "refused";
}

/** Throws the 409 when `action` is refused in `status`. */
export function requireMay(status: InvoiceStatus, action: InvoiceAction): void {
  const verdict = decide(status, action);
  if (verdict.kind === "refused") throw refusalError(status, action, verdict.why);
}

/**
 * The statuses in which `action` does something: applies (for a transition) or is allowed. For SQL that picks
 * invoices by what they may do: `status = ANY($n)` with this list.
 */
export function statusesThat(action: InvoiceAction): InvoiceStatus[] {
  return INVOICE_STATUSES.filter((status) => {
    const kind = decide(status, action).kind;
    return kind === "apply" || kind === "allowed";
  });
}

/**
 * `statusesThat(action)` as a list of SQL literals, for the repositories' statements: `status IN (…)` with the
 * statuses written out (they are this file's constants, never input), so that the planner still matches a
 * partial index on a status (`invoices_open_drafts_idx`, `WHERE status = 'draft'`).
 */
export const sqlStatusesThat = (action: InvoiceAction): string =>
  statusesThat(action)
    .map((status) => `'${status}'`)
    .join(", ");

/** Whether an invoice in `status` is owed, paid or not (a claim on its customer): a draft is not yet, a void one no more. */
const OWED: Record<InvoiceStatus, boolean> = { draft: false, issued: true, paid: true, void: false };
export const isOwed = (status: InvoiceStatus): boolean => OWED[status];

/**
 * Whether a payment or a credit note that leaves `dueAfter` of `dueBefore` on an invoice in `status` pays it: an
 * issued invoice is paid once nothing is left due. The one home of "paid when nothing is due", for payments and
 * credit notes alike.
 */
export function paidBy(status: InvoiceStatus, dueBefore: Big, dueAfter: Big): boolean {
  return decide(status, "pay").kind === "apply" && dueBefore.gt(0) && dueAfter.eq(0);
}
