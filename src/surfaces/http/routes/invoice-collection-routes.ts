// Collecting and correcting an issued invoice (docs/api.md, "Payments", "Credit notes"): payments recorded
// against what it owes, credit notes issued on it, listed, read and downloaded as PDFs. Registered right after
// invoice-routes.ts, where the invoice itself is.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import {
  createCreditNoteInput,
  creditNoteNumberParams,
  creditNoteSchema,
  recordPaymentInput,
} from "../../../domain/invoices/collections/collection-schemas.js";
import { invoiceNumberParams, invoiceWithLinesSchema } from "../../../domain/invoices/invoice-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { sendPdf } from "../send-documents.js";
import { listEnvelope, listSchema } from "../list-envelope.js";
import { errorResponses, TOO_MANY_DOCUMENTS } from "../openapi-errors.js";
import { notFound } from "./invoice-routes.js";

const creditNoteList = listSchema(creditNoteSchema, "CreditNoteList");

export function invoiceCollectionRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      "/v1/billing/invoices/:number/payments",
      {
        schema: {
          operationId: "recordInvoicePayment",
          tags: ["Invoices"],
          summary: "Record a payment on an issued invoice",
          description:
            "Adds to `amount_paid` and lowers `amount_due`; the invoice becomes `paid` (on `paid_on`) when nothing is left due. More than is due is refused. The service moves no money: it records what you received. Emits `invoice.payment_recorded` (and `invoice.paid` when it pays the invoice). Scope `invoices:write`.",
          params: invoiceNumberParams,
          body: recordPaymentInput,
          response: {
            201: invoiceWithLinesSchema,
            ...errorResponses({
              400: {
                invalid_amount: "`amount` is 0, or has more decimals than the invoice's currency",
                paid_date_before_issue: "`paid_on` is before the invoice's `issued_date`",
                paid_date_in_future: "`paid_on` is after today",
              },
              404: notFound,
              409: {
                invoice_is_draft: "the invoice is a draft: finalize it first",
                invoice_is_void: "the invoice is void: nothing is owed on it",
                invoice_is_paid: "nothing is due on the invoice",
                amount_exceeds_due: "`amount` is more than the invoice's `amount_due`",
              },
            }),
          },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await services.invoices.recordPayment(actorOf(request), request.params.number, request.body)),
    );

    app.post(
      "/v1/billing/invoices/:number/credit-notes",
      {
        schema: {
          operationId: "createCreditNote",
          tags: ["Invoices"],
          summary: "Issue a credit note on an issued or paid invoice",
          description:
            "Credits some of the invoice's lines (`lines`, each at most what is left of that line) or an amount off the whole (`amount`), never more than is left to credit. It lowers the invoice's `amount_due` (`applied_to_due`; the invoice becomes `paid` when nothing is left due) and leaves the rest on the customer's credit balance (`to_balance`). Numbered CN-000001 per company. Emits `credit_note.created`. Scope `invoices:write`.",
          params: invoiceNumberParams,
          body: createCreditNoteInput,
          response: {
            201: creditNoteSchema,
            ...errorResponses({
              400: {
                invalid_amount: "an amount is 0, or has more decimals than the invoice's currency",
                unknown_line: "`lines.{i}.line` is not an index of the invoice's `line_items`",
              },
              404: notFound,
              409: {
                invoice_is_draft: "the invoice is a draft: finalize it first",
                invoice_is_void: "the invoice is void",
                credit_exceeds_line: "a line's amount is more than is left to credit of that line",
                credit_exceeds_invoice: "the note is more than is left to credit of the invoice",
              },
            }),
          },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await services.invoices.createCreditNote(actorOf(request), request.params.number, request.body)),
    );

    app.get(
      "/v1/billing/invoices/:number/credit-notes",
      {
        schema: {
          operationId: "listInvoiceCreditNotes",
          tags: ["Invoices"],
          summary: "List an invoice's credit notes, oldest first",
          description:
            "Every credit note issued on the invoice, oldest first, with its lines or amount and how it was applied. Scope `invoices:read`.",
          params: invoiceNumberParams,
          response: { 200: creditNoteList, ...errorResponses({ 404: notFound }) },
        },
      },
      async (request) => {
        const notes = await services.invoices.listCreditNotes(actorOf(request), request.params.number);
        return listEnvelope({ items: notes, hasMore: false });
      },
    );

    app.get(
      "/v1/billing/credit-notes/:number",
      {
        schema: {
          operationId: "getCreditNote",
          tags: ["Invoices"],
          summary: "Get a credit note",
          description:
            "One credit note by its number (CN-000001), with its lines, amount, reason and what it applied to the invoice's amount due and to the customer's balance. Scope `invoices:read`.",
          params: creditNoteNumberParams,
          response: {
            200: creditNoteSchema,
            ...errorResponses({ 404: { not_found: "no credit note with this number for this company" } }),
          },
        },
      },
      async (request) => services.invoices.getCreditNote(actorOf(request), request.params.number),
    );

    app.get(
      "/v1/billing/credit-notes/:number/pdf",
      {
        schema: {
          operationId: "getCreditNotePdf",
          tags: ["Invoices"],
          summary: "Download a credit note as a PDF",
          description:
            "The seller and the customer as its invoice was issued, the invoice it credits, its lines, its total, and what it took off the amount due and left on the customer's balance. The same credit note always gives the same bytes.",
          params: creditNoteNumberParams,
          response: errorResponses({
            404: { not_found: "no credit note with this number for this company" },
            429: TOO_MANY_DOCUMENTS,
          }),
        },
      },
      async (request, reply) =>
        sendPdf(reply, await services.invoices.creditNotePdf(actorOf(request), request.params.number), "inline"),
    );
  };
}
