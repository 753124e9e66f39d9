import { withLineFacts } from "../documents/line-facts.js";
import { programOn } from "../../contracts/program-timeline.js";
import type { CompanyScope } from "../../../db/company-scope.js";
import type { CompanyData } from "../../kernel/tenancy.js";
import { toDateString } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import type { DraftInvoice, DraftInvoices } from "./draft-invoices.js";
import { freezeBill } from "../invoice-figures.js";
import { dueDateOf } from "./invoice-lifecycle.js";
import { lineFromRecord } from "../invoice-lines.js";
import { freezeInvoiceParties } from "../documents/invoice-parties.js";
import { issueInvoice, type InvoiceForChange } from "./invoice-change-repository.js";
import { startDelivery } from "../delivery/invoice-delivery.js";
import { findLinesOfInvoices } from "../invoice-repository.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";
import { changeInvoice } from "./change-invoice.js";
import { bringUpToDate } from "../project-invoice.js";
import { termsFromRecord } from "../../contracts/minimum-terms.js";

/**
 * The locked draft with its lines, read in a statement after the lock: one that waited for the lock (an
 * ingest writing to this draft) would still read the lines with its old snapshot.
 */
async function draftOf(tx: CompanyScope, invoice: InvoiceForChange): Promise<DraftInvoice> {
  const draft: DraftInvoice = {
    number: invoice.number,
    contractId: invoice.contract_id,
    periodStart: invoice.period_start,
    currency: invoice.currency,
    status: invoice.status,
    minimum: termsFromRecord(invoice),
    projectedAt: null,
    lines: new Map(),
    original: new Map(),
  };
  for (const line of await findLinesOfInvoices(tx, [invoice.number])) {
    draft.lines.set(line.key, lineFromRecord(line));
    draft.original.set(line.key, line);
  }
  return draft;
}

/**
 * Issues a draft (docs/decisions.md, "Invoices", lifecycle): locked and read once, brought up to date as
 * projection does, then frozen with its figures and dates. An issued or paid invoice answers unchanged, a void
 * one is refused. The API's finalize and the invoice worker (issue-due-drafts.ts) both issue through here.
 */
export function createFinalizeInvoice({
  clock,
  drafts,
  publicUrl,
}: {
  clock: Clock;
  drafts: DraftInvoices;
  publicUrl: string;
}) {
  return async function finalize(
    company: CompanyData,
    number: string,
  ): Promise<{ invoice: InvoiceWithLines; applied: boolean }> {
    return changeInvoice(company, clock, number, "finalize", async (tx, invoice) => {
      if (invoice.programs === null) throw new Error(`contract ${invoice.contract_id} has no pricing program`);
      const { rules } = programOn(invoice.programs, invoice.period_end);
      const draft = await draftOf(tx, invoice);
      // Frozen with what explains each usage line (its events, its uncapped amount): a void invoice's events move
      // to its reissue, and its lines must still read as they were sent.
      const current = await bringUpToDate({ tx, clock, drafts }, rules, draft);
      const billed = freezeBill(await withLineFacts(tx, invoice, current, rules));
      const now = clock.now();
      const issuedDate = toDateString(now);
      const dueDate = dueDateOf(issuedDate, invoice.payment_terms_days);
      await issueInvoice(tx, { number, at: now, issuedDate, dueDate, billed });
      await freezeInvoiceParties(tx, number);
      const delivery = await startDelivery(tx, { number, at: now, publicUrl });
      return { billed, issued_date: issuedDate, due_date: dueDate, updated_at: now, ...delivery };
    });
  };
}
