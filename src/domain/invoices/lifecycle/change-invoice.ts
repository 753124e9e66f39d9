import { invoiceLineFacts } from "../documents/line-facts.js";
import type { CompanyScope } from "../../../db/company-scope.js";
import type { CompanyData } from "../../kernel/tenancy.js";
import type { Clock } from "../../kernel/clock.js";
import { recordEvent, type EventType } from "../../webhooks/outbox.js";
import { NotFoundError } from "../../kernel/errors.js";
import { thawBill } from "../invoice-figures.js";
import { decide, type InvoiceStatus, refusalError } from "../invoice-states.js";
import { presentWithLines } from "../invoice-presenter.js";
import * as repo from "./invoice-change-repository.js";
import type { InvoiceRow } from "../invoice-repository.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";

/** The columns an applied change wrote on the invoice (its status is the transition's). */
export type InvoiceChange = Pick<InvoiceRow, "updated_at"> &
  Partial<Pick<InvoiceRow, "billed" | "issued_date" | "due_date" | "paid_date" | "hosted_url">>;

/**
 * The webhook event each applied change records (docs/webhooks.md, "Event types"); an action answered unchanged
 * records none. Only the endpoints that name the type receive it: invoice events are opt-in.
 */
type Transition = "finalize" | "pay" | "void";
const EVENT_OF: Record<Transition, EventType> = {
  finalize: "invoice.issued",
  pay: "invoice.paid",
  void: "invoice.voided",
};

/**
 * One change of status, under the invoice's row lock (`lockInvoiceForChange`, the one statement that locks and
 * reads it): what the state table (invoice-states.ts) allows, applied by `apply`, which returns the columns it wrote; an action that
 * happened already answers the invoice unchanged (`unchanged` may refuse that, e.g. a payment on another date).
 * Concurrent calls on one invoice queue on the lock: one applies, the rest see its result. The answer is the
 * invoice as the change left it: no change leaves a draft, so it presents the figures as issued. An
 * applied change records its event (EVENT_OF) in the same transaction, with that answer as `data.object`: every
 * path that issues, pays or voids an invoice (the API, the dashboard, the MCP tools, the invoice worker's
 * automatic issue) goes through here, so each transition is announced once, and only when it happened.
 */
export async function changeInvoice(
  company: CompanyData,
  clock: Clock,
  number: string,
  action: Transition,
  apply: (tx: CompanyScope, invoice: repo.InvoiceForChange) => Promise<InvoiceChange>,
  unchanged?: (invoice: repo.InvoiceForChange) => void,
): Promise<{ invoice: InvoiceWithLines; applied: boolean }> {
  return company.transaction(async (tx) => {
    const invoice = await repo.lockInvoiceForChange(tx, number);
    if (!invoice) throw new NotFoundError("invoice");
    const status = invoice.status as InvoiceStatus;
    const verdict = decide(status, action);
    if (verdict.kind === "refused") throw refusalError(status, action, verdict.why);
    let after: repo.InvoiceForChange = invoice;
    if (verdict.kind === "apply") {
      await apply(tx, invoice);
      // Read again: a change may write more than the invoice's own row (a payment, a reissued draft).
      after = (await repo.lockInvoiceForChange(tx, number))!;
    } else unchanged?.(invoice);
    // Only a draft has no frozen figures, and every action either leaves a draft (finalize) or refuses it.
    if (after.billed === null) throw new Error(`invoice ${number} is answered as a draft after ${action}`);
    const billed = thawBill(after.billed);
    const answer = presentWithLines(after, billed, null, await invoiceLineFacts(tx, after, billed));
    if (verdict.kind === "apply") await recordEvent(tx, clock, EVENT_OF[action], answer);
    return { invoice: answer, applied: verdict.kind === "apply" };
  });
}
