// Collecting and correcting an issued invoice from its page (docs/dashboard.md, "Invoices"): its payments and
// a form to record one, its credit notes and a form to issue one, and the links between a void invoice and its
// reissue. The API's operations (POST …/payments, …/credit-notes), through the API's own schemas.
import type { FastifyInstance } from "fastify";
import {
  type CreditNote,
  createCreditNoteInput,
  PAYMENT_METHODS,
  recordPaymentInput,
} from "../../../domain/invoices/collections/collection-schemas.js";
import type { InvoiceWithLines } from "../../../domain/invoices/invoice-schemas.js";
import { ValidationError } from "../../../domain/kernel/errors.js";
import { sendPdf } from "../../http/send-documents.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, dataTable, fieldError, inputField, invalidAttributes, money, when, type Flash } from "../layout.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  parseWith,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { invoicePath } from "./invoice-page-parts.js";

const METHOD_WORDS: Record<(typeof PAYMENT_METHODS)[number], string> = {
  bank_transfer: "Bank transfer",
  ach: "ACH",
  wire: "Wire",
  card: "Card",
  check: "Check",
  cash: "Cash",
  other: "Other",
};

/** A refused payment or credit note: which form, what was typed, and the errors beside their fields. */
export interface CollectionFailure {
  form: "payment" | "credit_note";
  values: Record<string, string | undefined>;
  errors: FieldErrors;
}

/** The invoice's amounts, payments, credit notes and reissue links, with the forms its status allows. */
export function collectionSections(
  viewer: Viewer,
  invoice: InvoiceWithLines,
  notes: readonly CreditNote[],
  failure?: CollectionFailure,
): SafeHtml {
  const currency = invoice.currency;
  const reissue = invoice.reissued_as
    ? html`<p class="card">This invoice was voided and reissued as <a href="${invoicePath(invoice.reissued_as)}">${invoice.reissued_as}</a>, which now holds this month's usage.</p>`
    : invoice.reissue_of
      ? html`<p class="card">This invoice reissues <a href="${invoicePath(invoice.reissue_of)}">${invoice.reissue_of}</a>, which was voided. It is not issued by itself: check it, then finalize it.</p>`
      : "";
  if (invoice.status === "draft") return html`${reissue}`;
  const amounts = html`<div class="card"><dl class="facts">
<dt>Total</dt><dd>${money(invoice.total, currency)}</dd>
<dt>Paid</dt><dd>${money(invoice.amount_paid, currency)}</dd>
<dt>Credited</dt><dd>${money(invoice.amount_credited, currency)}</dd>
<dt>Amount due</dt><dd><strong>${money(invoice.amount_due, currency)}</strong></dd>
</dl></div>`;
  const payments =
    invoice.payments.length === 0
      ? html`<p class="hint">No payment recorded yet.</p>`
      : dataTable(
          `Payments of invoice ${invoice.number}`,
          [
            { header: "Paid on", cell: (p) => p.paid_on },
            { header: "Method", cell: (p) => METHOD_WORDS[p.method] },
            { header: "Reference", cell: (p) => p.reference ?? "—" },
            { header: "Amount", cell: (p) => money(p.amount, currency), numeric: true },
            { header: "Recorded", cell: (p) => when(p.created_at) },
          ],
          invoice.payments,
        );
  const creditNotes =
    notes.length === 0
      ? html`<p class="hint">No credit note.</p>`
      : dataTable(
          `Credit notes of invoice ${invoice.number}`,
          [
            {
              header: "Number",
              cell: (n) =>
                html`<a href="/credit-notes/${encodeURIComponent(n.number)}/credit-note.pdf">${n.number}</a>`,
            },
            { header: "Date", cell: (n) => n.issued_date },
            { header: "Reason", cell: (n) => n.reason },
            { header: "Off the amount due", cell: (n) => money(n.applied_to_due, currency), numeric: true },
            { header: "To the customer's balance", cell: (n) => money(n.to_balance, currency), numeric: true },
            { header: "Amount", cell: (n) => money(n.amount, currency), numeric: true },
          ],
          notes,
        );
  const open = invoice.status === "issued" || invoice.status === "paid";
  return html`${reissue}<h2>Amounts</h2>${amounts}
<section class="card" aria-labelledby="payments-heading"><h2 id="payments-heading">Money received</h2>${payments}${
    invoice.status === "issued" ? paymentForm(viewer, invoice, failure?.form === "payment" ? failure : undefined) : ""
  }</section>
<section class="card" aria-labelledby="credit-notes-heading"><h2 id="credit-notes-heading">Credit notes</h2>${creditNotes}${
    open ? creditNoteForm(viewer, invoice, failure?.form === "credit_note" ? failure : undefined) : ""
  }</section>`;
}

function paymentForm(viewer: Viewer, invoice: InvoiceWithLines, failure?: CollectionFailure): SafeHtml {
  const values = failure?.values ?? {};
  const errors = failure?.errors ?? {};
  const method = values.method ?? "bank_transfer";
  return html`<h3>Record a payment</h3>
<form method="post" action="${invoicePath(invoice.number)}/payments" class="stack">${csrfField(viewer.ctx)}
${inputField({ id: "payment-amount", name: "amount", label: `Amount, ${invoice.currency}`, hint: `(at most ${money(invoice.amount_due, invoice.currency)}, what is due)`, inputmode: "decimal", required: true, value: values.amount ?? String(invoice.amount_due), error: errors.amount })}
${inputField({ id: "payment-paid-on", name: "paid_on", label: "Received on", hint: `(today if left empty; not before ${invoice.issued_date})`, type: "date", value: values.paid_on, error: errors.paid_on })}
<div><label for="payment-method">Method</label><select id="payment-method" name="method"${invalidAttributes("payment-method", errors.method)}>${PAYMENT_METHODS.map(
    (m) => html`<option value="${m}"${m === method ? html` selected` : ""}>${METHOD_WORDS[m]}</option>`,
  )}</select>${fieldError("payment-method", errors.method)}</div>
${inputField({ id: "payment-reference", name: "reference", label: "Reference", hint: "(optional: a transfer id, a check number)", maxlength: 200, value: values.reference, error: errors.reference })}
<div><button type="submit">Record payment</button></div></form>`;
}

function creditNoteForm(viewer: Viewer, invoice: InvoiceWithLines, failure?: CollectionFailure): SafeHtml {
  const values = failure?.values ?? {};
  const errors = failure?.errors ?? {};
  const line = values.line ?? "";
  return html`<h3>Issue a credit note</h3>
<p class="hint">A credit note lowers what is due; on a paid invoice it leaves a credit on the customer's balance. It cannot be undone.</p>
<form method="post" action="${invoicePath(invoice.number)}/credit-notes" class="stack">${csrfField(viewer.ctx)}
<div><label for="credit-line">Credit</label><select id="credit-line" name="line"${invalidAttributes("credit-line", errors.line)}>
<option value=""${line === "" ? html` selected` : ""}>An amount off the whole invoice</option>${invoice.line_items.map(
    (l, i) =>
      html`<option value="${String(i)}"${line === String(i) ? html` selected` : ""}>Line ${String(i + 1)}: ${l.description} (${money(l.amount, invoice.currency)})</option>`,
  )}</select>${fieldError("credit-line", errors.line)}</div>
${inputField({ id: "credit-amount", name: "amount", label: `Amount, ${invoice.currency}`, inputmode: "decimal", required: true, value: values.amount, error: errors.amount })}
${inputField({ id: "credit-reason", name: "reason", label: "Reason", hint: "(printed on the credit note)", required: true, maxlength: 500, value: values.reason, error: errors.reason })}
<div class="field"><input type="checkbox" id="credit-confirm" name="confirm" value="yes" required${invalidAttributes("credit-confirm", errors.confirm)}> <label for="credit-confirm">Issue this credit note (it cannot be undone)</label>${fieldError("credit-confirm", errors.confirm)}</div>
<div><button type="submit">Issue credit note</button></div></form>`;
}

/** The form field a payment's or a credit note's error path belongs beside. */
const fieldOfPath = (path: string): string | undefined => {
  if (path === "lines.0.amount" || path === "amount") return "amount";
  if (path === "lines.0.line" || path === "lines") return "line";
  return ["paid_on", "method", "reference", "reason", "confirm"].includes(path) ? path : undefined;
};

/** Which field a refused payment or credit note's conflict is about (they name no field). */
const CONFLICT_FIELD: Record<string, string> = {
  amount_exceeds_due: "amount",
  credit_exceeds_line: "amount",
  credit_exceeds_invoice: "amount",
  paid_date_before_issue: "paid_on",
  paid_date_in_future: "paid_on",
  unknown_line: "line",
};

export async function invoiceCollectionPages(
  app: FastifyInstance,
  deps: DashboardDeps,
  detailPage: (viewer: Viewer, number: string, flash?: Flash, failure?: CollectionFailure) => Promise<string>,
): Promise<void> {
  app.post<{ Params: { number: string } }>("/invoices/:number/payments", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const number = request.params.number;
    const values = {
      amount: field(form, "amount"),
      paid_on: field(form, "paid_on"),
      method: field(form, "method"),
      reference: field(form, "reference"),
    };
    try {
      const input = parseWith(recordPaymentInput, values);
      await deps.services.invoices.recordPayment(viewer.session.actor, number, input);
      return reply.redirect(`${invoicePath(number)}?done=payment_recorded`, 303);
    } catch (error) {
      return sendPage(reply, ...(await refused(viewer, number, "payment", values, error)));
    }
  });

  app.post<{ Params: { number: string } }>("/invoices/:number/credit-notes", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const number = request.params.number;
    const values = {
      line: field(form, "line"),
      amount: field(form, "amount"),
      reason: field(form, "reason"),
      confirm: field(form, "confirm"),
    };
    try {
      if (values.confirm !== "yes") {
        throw new ValidationError("Tick the box to confirm: this cannot be undone", "confirmation_required", [
          { path: "confirm", message: "Tick this box to confirm: this cannot be undone." },
        ]);
      }
      const line = values.line === undefined || values.line === "" ? undefined : Number(values.line);
      const input = parseWith(
        createCreditNoteInput,
        line === undefined
          ? { amount: values.amount, reason: values.reason }
          : { lines: [{ line, amount: values.amount }], reason: values.reason },
      );
      await deps.services.invoices.createCreditNote(viewer.session.actor, number, input);
      return reply.redirect(`${invoicePath(number)}?done=credit_note_issued`, 303);
    } catch (error) {
      return sendPage(reply, ...(await refused(viewer, number, "credit_note", values, error)));
    }
  });

  // A credit note's PDF, for the signed-in user (the API's /pdf takes an API key).
  app.get<{ Params: { number: string } }>("/credit-notes/:number/credit-note.pdf", async (request, reply) => {
    return sendPdf(
      reply,
      await deps.services.invoices.creditNotePdf(viewerOf(request).session.actor, request.params.number),
      "attachment",
    );
  });

  async function refused(
    viewer: Viewer,
    number: string,
    form: CollectionFailure["form"],
    values: Record<string, string | undefined>,
    error: unknown,
  ): Promise<[string, number]> {
    const { status, flash, fields } = formFailure(error, fieldOfPath);
    const code = (error as { code?: string }).code;
    const errors: FieldErrors = { ...fields };
    if (code && CONFLICT_FIELD[code] && Object.keys(errors).length === 0) {
      errors[CONFLICT_FIELD[code]] = flash.message;
    }
    return [await detailPage(viewer, number, flash, { form, values, errors }), status];
  }
}
