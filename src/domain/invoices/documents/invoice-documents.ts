import type { Tenancy } from "../../kernel/tenancy.js";
import type { PricingRule } from "../../contracts/pricing-rule.js";
import { createHash } from "node:crypto";
import type { CompanyScope } from "../../../db/company-scope.js";
import { requireScope } from "../../kernel/actor.js";
import { creditNotePdf, invoicePdf } from "../../documents/document-pool.js";
import { NotFoundError } from "../../kernel/errors.js";
import { Big, toDecimalString, toMoneyString } from "../../kernel/money.js";
import { type CreditNoteRow, findCreditNote, listCreditNotesOf } from "../collections/collection-repository.js";
import { amountDue } from "../invoice-amounts.js";
import type { CreditNotePdfInput } from "./credit-note-pdf.js";
import type { BilledInvoice } from "../invoice-figures.js";
import { documentParties, type DocumentParties } from "./invoice-parties.js";
import { invoiceLineFacts, type LineFacts, rulesOfInvoice } from "./line-facts.js";
import type { DocumentBalance, InvoicePdfInput } from "./invoice-words.js";
import { billStored } from "../invoice-presenter.js";
import * as repo from "../invoice-read-repository.js";
import { findLastStatementSeq, listStatementRows } from "./statement-repository.js";
import { STATEMENT_HEADER, statementLine, statementSummary } from "./usage-statement.js";

/** Events per page of a usage statement: a page is one query and one chunk of the response. */
const STATEMENT_PAGE = 5000;

/**
 * What the PDF shows, from the domain's values: the invoice as stored, its figures (`billInvoice`'s, or as
 * issued), its parties (as issued, or a draft's as they are now), the rules its lines were priced by, and the
 * document's date. Decimals as text: quantities and unit prices with every digit they have, money with exactly
 * the currency's minor unit. Pure.
 */
export function invoicePdfInput(
  row: repo.InvoiceDocumentRow,
  billed: BilledInvoice,
  { parties, logo }: DocumentParties,
  rules: ReadonlyMap<string, PricingRule>,
  creditNotes: readonly Pick<CreditNoteRow, "number" | "issued_date" | "amount">[] = [],
  facts: ReadonlyMap<number, LineFacts> = new Map(),
): InvoicePdfInput {
  const money = (amount: BilledInvoice["total"]) => toMoneyString(amount, row.currency);
  return {
    ...pdfParties({ parties, logo }),
    memo: parties.memo,
    ...(parties.seller.locale ? { locale: parties.seller.locale } : {}),
    ...(row.status === "issued" || row.status === "paid" ? { balance: balanceOf(row, billed, creditNotes) } : {}),
    invoice: {
      reissueOf: row.reissue_of,
      reissuedAs: row.reissued_as,
      number: row.number,
      status: row.status,
      currency: row.currency,
      period: { start: row.period_start, end: row.period_end },
      issuedDate: row.issued_date,
      dueDate: row.due_date,
      paidDate: row.paid_date,
      contract: row.contract_id,
      lines: billed.lines.map((l, index) => ({
        kind: l.kind,
        ...lineFactWords(facts.get(index), row.currency),
        description: l.description,
        quantity: toDecimalString(l.quantity),
        unitPrice: toDecimalString(l.unitPrice),
        amount: money(l.amount),
        ...(l.tiers
          ? {
              tiers: l.tiers.map((t) => ({
                upTo: t.upTo === null ? null : toDecimalString(t.upTo),
                unitPrice: toDecimalString(t.unit),
                flat: t.flat === null ? null : toDecimalString(t.flat),
                quantity: toDecimalString(t.quantity),
                amount: toDecimalString(t.amount),
              })),
            }
          : {}),
        ...(l.capAdjustment ? { capAdjustment: toDecimalString(l.capAdjustment) } : {}),
        rule: l.ruleId === null ? null : (rules.get(l.ruleId) ?? null),
      })),
      subtotal: money(billed.subtotal),
      tax: money(billed.tax),
      total: money(billed.total),
    },
    // The same invoice, the same document: an issued one is dated when it was issued, a draft by its last change.
    generatedAt: row.issued_at ?? row.updated_at,
  };
}

/** A line's event count and uncapped amount as the PDF takes them (decimal text). */
const lineFactWords = (facts: LineFacts | undefined, currency: string) =>
  facts === undefined
    ? {}
    : { events: facts.events, ...(facts.uncapped ? { uncapped: toMoneyString(facts.uncapped, currency) } : {}) };

/**
 * What was paid and credited on an issued or paid invoice, and what is still due (amountDue: the API's
 * `amount_due`), as the records stand now: the frozen figures at issue are not touched, the balance is added under
 * them whenever a document is made (docs/decisions.md, "Invoice documents").
 */
function balanceOf(
  row: repo.InvoiceDocumentRow,
  billed: BilledInvoice,
  creditNotes: readonly Pick<CreditNoteRow, "number" | "issued_date" | "amount">[],
): DocumentBalance {
  const money = (amount: string) => toMoneyString(new Big(amount), row.currency);
  return {
    payments: row.payments.map((p) => ({
      paidOn: p.paid_on,
      method: p.method,
      reference: p.reference,
      amount: money(p.amount),
    })),
    creditNotes: creditNotes.map((n) => ({ number: n.number, issuedDate: n.issued_date, amount: money(n.amount) })),
    amountDue: toMoneyString(amountDue({ ...row, total: billed.total }), row.currency),
  };
}

/** The seller, the customer and the paper a document of an invoice shows (its own PDF, its credit notes'). */
function pdfParties({ parties, logo }: DocumentParties): Pick<CreditNotePdfInput, "seller" | "customer" | "paperSize"> {
  return {
    seller: {
      name: parties.seller.name,
      address: parties.seller.address,
      taxId: parties.seller.tax_id,
      logo,
      paymentInstructions: parties.seller.payment_instructions,
      footer: parties.seller.footer,
    },
    customer: {
      name: parties.customer.name,
      address: parties.customer.address,
      country: parties.customer.country,
      email: parties.customer.email,
      taxId: parties.customer.tax_id,
    },
    paperSize: parties.paper_size,
  };
}

/**
 * A credit note as a PDF: its invoice's parties (as the invoice was issued), what it credits, and where it went
 * (off the amount due, to the customer's balance). Dated by its creation, so every download is the same file.
 */
async function creditNotePdfOf(scope: CompanyScope, number: string): Promise<{ filename: string; pdf: Buffer }> {
  const note = await findCreditNote(scope, number);
  if (!note) throw new NotFoundError("credit_note");
  const row = await repo.findInvoiceDocument(scope, note.invoice_number);
  if (!row) throw new NotFoundError("credit_note");
  const money = (amount: string) => toMoneyString(new Big(amount), note.currency);
  const parties = await documentParties(scope, row);
  const input: CreditNotePdfInput = {
    ...pdfParties(parties),
    ...(parties.parties.seller.locale ? { locale: parties.parties.seller.locale } : {}),
    creditNote: {
      number: note.number,
      invoiceNumber: note.invoice_number,
      issuedDate: note.issued_date,
      currency: note.currency,
      reason: note.reason,
      lines: note.lines.map((l) => ({ description: l.description, amount: money(l.amount) })),
      amount: money(note.amount),
      appliedToDue: money(note.applied_to_due),
      toBalance: money(note.to_balance),
    },
    generatedAt: note.created_at,
  };
  return { filename: `${number}.pdf`, pdf: await creditNotePdf(scope.companyId, input) };
}

/** An invoice's documents: the PDF for the customer and the usage statement (CSV). */
export function createInvoiceDocuments() {
  return {
    /**
     * GET …/pdf: the invoice as a PDF for the customer, with the figures GET answers (an issued invoice's
     * frozen figures, a draft's as they are now, marked DRAFT), the seller's and the customer's details.
     */
    async pdf(tenant: Tenancy, number: string): Promise<{ filename: string; pdf: Buffer }> {
      requireScope(tenant, "invoices:read");
      return invoicePdfOf(tenant.data, number);
    },

    /**
     * GET …/usage.csv: the invoice's usage statement, streamed a page of events at a time, then the invoice's
     * lines, tax and total, with the SHA-256 of its content. The events are those stored on the invoice when the
     * call began (up to their highest sequence number then) and the lines those read then, so the digest, taken
     * in a first pass, is that of exactly what the second sends.
     */
    /** GET /v1/billing/credit-notes/{number}/pdf: the credit note as a PDF for the customer. */
    async creditNotePdf(tenant: Tenancy, number: string): Promise<{ filename: string; pdf: Buffer }> {
      requireScope(tenant, "invoices:read");
      return creditNotePdfOf(tenant.data, number);
    },

    async usageStatement(
      tenant: Tenancy,
      number: string,
    ): Promise<{ filename: string; sha256: string; chunks: () => AsyncGenerator<string> }> {
      requireScope(tenant, "invoices:read");
      return usageStatementOf(tenant.data, number);
    },
  };
}

/**
 * An invoice's PDF as its company sees it (the API's, the dashboard's, the email's attachment and the hosted
 * page's download are the same bytes at the same instant).
 */
export async function invoicePdfOf(scope: CompanyScope, number: string): Promise<{ filename: string; pdf: Buffer }> {
  const row = await repo.findInvoiceDocument(scope, number);
  if (!row) throw new NotFoundError("invoice");
  return invoiceDocumentPdf(scope, row);
}

/**
 * The PDF of an invoice its caller has read already (`findInvoiceDocument`, and `invoiceDocumentInput` when it
 * has): the mail worker reads the invoice once for the email and its attachment.
 */
export async function invoiceDocumentPdf(
  scope: CompanyScope,
  row: repo.InvoiceDocumentRow,
  read?: InvoicePdfInput,
): Promise<{ filename: string; pdf: Buffer }> {
  const input = read ?? (await invoiceDocumentInput(scope, row));
  // Rendered in the document processes, in the company's turn (documents/document-pool.ts): never on this thread.
  return { filename: `${row.number}.pdf`, pdf: await invoicePdf(scope.companyId, input) };
}

/**
 * What an invoice's documents show, as they stand now (the PDF, the hosted page and the email read it): the
 * invoice as stored, its parties, the rules of its lines, and its payments and credit notes.
 */
export async function invoiceDocumentInput(
  scope: CompanyScope,
  row: repo.InvoiceDocumentRow,
): Promise<InvoicePdfInput> {
  const parties = await documentParties(scope, row);
  const notes = row.status === "issued" || row.status === "paid" ? await listCreditNotesOf(scope, row.number) : [];
  const billed = billStored(row);
  const rules = rulesOfInvoice(row);
  const facts = await invoiceLineFacts(scope, row, billed);
  return invoicePdfInput(row, billed, parties, rules, notes, facts);
}

/** An invoice's usage statement as its company sees it (the API's, the dashboard's and the hosted page's). */
export async function usageStatementOf(
  scope: CompanyScope,
  number: string,
): Promise<{ filename: string; sha256: string; chunks: () => AsyncGenerator<string> }> {
  const invoice = await repo.findInvoice(scope, number);
  if (!invoice) throw new NotFoundError("invoice");
  const summary = statementSummary(billStored(invoice), invoice.currency);
  const which = { contractId: invoice.contract_id, periodStart: invoice.period_start, number };
  const lastSeq = await findLastStatementSeq(scope, which);
  async function* chunks(): AsyncGenerator<string> {
    yield STATEMENT_HEADER;
    for (let after: string | null = null; lastSeq !== null; ) {
      const rows = await listStatementRows(scope, which, after, lastSeq, STATEMENT_PAGE);
      if (rows.length === 0) break;
      yield rows.map(statementLine).join("");
      after = rows[rows.length - 1]!.seq;
    }
    yield summary;
  }
  const hash = createHash("sha256");
  for await (const chunk of chunks()) hash.update(chunk);
  return { filename: `${number}-usage.csv`, sha256: hash.digest("base64"), chunks };
}
