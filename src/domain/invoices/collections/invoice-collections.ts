import { invoiceLineFacts } from "../documents/line-facts.js";
import type { CompanyScope } from "../../../db/company-scope.js";
import { nextNumbers } from "../../counters/counters.js";
import { requireScope } from "../../kernel/actor.js";
import { toDateString } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError } from "../../kernel/errors.js";
import { Big, toJsonMoney, toMoneyString } from "../../kernel/money.js";
import type { Tenancy } from "../../kernel/tenancy.js";
import { recordEvent } from "../../webhooks/outbox.js";
import { dueOn, issuedTotal, lockForCollection, recordPaymentOn, requireMoney } from "./collect-invoice.js";
import * as collections from "./collection-repository.js";
import type { CreateCreditNoteInput, CreditNote, RecordPaymentInput } from "./collection-schemas.js";
import { thawBill } from "../invoice-figures.js";
import { type InvoiceStatus, paidBy, requireMay } from "../invoice-states.js";
import { presentWithLines } from "../invoice-presenter.js";
import { findInvoiceSeq } from "../invoice-read-repository.js";
import * as repo from "../lifecycle/invoice-change-repository.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";

const formatCreditNoteNumber = (seq: number) => `CN-${String(seq).padStart(6, "0")}`;

function presentCreditNote(row: collections.CreditNoteRow): CreditNote {
  const money = (amount: string) => toJsonMoney(amount, row.currency);
  return {
    object: "credit_note",
    number: row.number,
    invoice: row.invoice_number,
    customer: row.customer_id,
    currency: row.currency,
    amount: money(row.amount),
    applied_to_due: money(row.applied_to_due),
    to_balance: money(row.to_balance),
    reason: row.reason,
    lines: row.lines.map((l) => ({ line: l.line, description: l.description, amount: money(l.amount) })),
    issued_date: row.issued_date,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The invoice as it stands after a payment or a credit note in this transaction, with its lines and payments;
 * `invoice.paid` is recorded when the change paid it.
 */
async function presentAfter(tx: CompanyScope, clock: Clock, before: repo.InvoiceForChange): Promise<InvoiceWithLines> {
  const after = await lockForCollection(tx, before.number);
  const billed = thawBill(after.billed!);
  const answer = presentWithLines(after, billed, null, await invoiceLineFacts(tx, after, billed));
  if (before.status !== "paid" && after.status === "paid") await recordEvent(tx, clock, "invoice.paid", answer);
  return answer;
}

/**
 * The lines a credit note credits, each within what is left of its invoice line (lines already credited by
 * earlier notes count), or one amount off the whole invoice. Pure but for the earlier notes it is given.
 */
function creditedLines(
  invoice: repo.InvoiceForChange,
  input: CreateCreditNoteInput,
  earlier: collections.CreditNoteRow[],
): collections.CreditNoteRow["lines"] {
  const currency = invoice.currency;
  if (input.amount !== undefined) {
    requireMoney(input.amount, currency, "amount");
    return [{ line: null, description: "Credit on the invoice", amount: input.amount.toFixed() }];
  }
  const billedLines = thawBill(invoice.billed!).lines;
  const seen = new Set<number>();
  return input.lines!.map(({ line, amount }, i) => {
    const path = `lines.${i}`;
    const billed = billedLines[line];
    if (!billed) {
      throw new ValidationError(`The invoice has no line ${line}`, "unknown_line", [
        { path: `${path}.line`, message: `must be 0 to ${billedLines.length - 1}` },
      ]);
    }
    if (seen.has(line)) {
      throw new ValidationError(`Line ${line} is credited twice`, "invalid_request", [
        { path: `${path}.line`, message: "is sent twice: send it once with the whole amount" },
      ]);
    }
    seen.add(line);
    requireMoney(amount, currency, `${path}.amount`);
    const credited = earlier
      .flatMap((note) => note.lines)
      .filter((l) => l.line === line)
      .reduce((sum, l) => sum.plus(l.amount), new Big(0));
    const left = billed.amount.minus(credited);
    if (amount.gt(left)) {
      throw new ConflictError(
        `Line ${line} (${billed.description}) has ${toMoneyString(left.gt(0) ? left : new Big(0), currency)} left to credit, less than ${toMoneyString(amount, currency)}`,
        "credit_exceeds_line",
      );
    }
    return { line, description: billed.description, amount: amount.toFixed() };
  });
}

/** Payments and credit notes on issued invoices (docs/api.md, "Payments" and "Credit notes"). */
export function createInvoiceCollections({ clock }: { clock: Clock }) {
  return {
    /** POST …/payments: one payment, at most what is due; the invoice is paid when nothing is left due. */
    async recordPayment(tenant: Tenancy, number: string, input: RecordPaymentInput): Promise<InvoiceWithLines> {
      requireScope(tenant, "invoices:write");
      return tenant.transaction(async (tx) => {
        const invoice = await lockForCollection(tx, number);
        await recordPaymentOn(tx, invoice, clock, {
          amount: input.amount,
          paidOn: input.paid_on,
          method: input.method,
          reference: input.reference ?? null,
          now: clock.now(),
        });
        return presentAfter(tx, clock, invoice);
      });
    },

    /**
     * POST …/credit-notes on an issued or paid invoice: never more than is left to credit, of a line or of
     * the whole. It takes what it can off the amount due (the invoice is paid when nothing is left due); the
     * rest goes to the customer's credit balance.
     */
    async createCreditNote(tenant: Tenancy, number: string, input: CreateCreditNoteInput): Promise<CreditNote> {
      requireScope(tenant, "invoices:write");
      return tenant.transaction(async (tx) => {
        const invoice = await lockForCollection(tx, number);
        const status = invoice.status as InvoiceStatus;
        requireMay(status, "credit");
        const earlier = await collections.listCreditNotesOf(tx, number);
        const lines = creditedLines(invoice, input, earlier);
        const amount = lines.reduce((sum, l) => sum.plus(l.amount), new Big(0));
        const left = issuedTotal(invoice).minus(invoice.amount_credited);
        if (amount.gt(left)) {
          throw new ConflictError(
            `Invoice ${number} has ${toMoneyString(left.gt(0) ? left : new Big(0), invoice.currency)} left to credit, less than ${toMoneyString(amount, invoice.currency)}`,
            "credit_exceeds_invoice",
          );
        }
        const due = dueOn(invoice);
        const applied = amount.lt(due) ? amount : due;
        const now = clock.now();
        const seq = await nextNumbers(tx, "credit_note_number", 1);
        const row: collections.CreditNoteRow = {
          number: formatCreditNoteNumber(seq),
          seq,
          invoice_number: number,
          customer_id: await collections.findInvoiceCustomer(tx, invoice.contract_id),
          currency: invoice.currency,
          amount: amount.toFixed(),
          applied_to_due: applied.toFixed(),
          to_balance: amount.minus(applied).toFixed(),
          reason: input.reason,
          lines,
          issued_date: toDateString(now),
          created_at: now,
        };
        await collections.insertCreditNote(tx, row);
        if (paidBy(status, due, due.minus(applied))) {
          await repo.payInvoice(tx, number, row.issued_date, now);
        }
        const note = presentCreditNote(row);
        await recordEvent(tx, clock, "credit_note.created", note);
        await presentAfter(tx, clock, invoice);
        return note;
      });
    },

    async listCreditNotes(tenant: Tenancy, number: string): Promise<CreditNote[]> {
      requireScope(tenant, "invoices:read");
      const rows = await collections.listCreditNotesOf(tenant.data, number);
      if (rows.length === 0 && (await findInvoiceSeq(tenant.data, number)) === undefined) {
        throw new NotFoundError("invoice");
      }
      return rows.map(presentCreditNote);
    },

    async getCreditNote(tenant: Tenancy, number: string): Promise<CreditNote> {
      requireScope(tenant, "invoices:read");
      const row = await collections.findCreditNote(tenant.data, number);
      if (!row) throw new NotFoundError("credit_note");
      return presentCreditNote(row);
    },
  };
}
