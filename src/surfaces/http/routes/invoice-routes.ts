import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import {
  invoiceListFilters,
  invoiceNumberParams,
  invoiceProjectionSchema,
  invoiceSchema,
  invoiceWithLinesSchema,
  payInvoiceInput,
  projectInvoiceInput,
  receivablesQuery,
  receivablesReportSchema,
} from "../../../domain/invoices/invoice-schemas.js";
import {
  createCreditNoteInput,
  creditNoteNumberParams,
  creditNoteSchema,
  recordPaymentInput,
} from "../../../domain/invoices/collections/collection-schemas.js";
import { invoiceMessageSchema } from "../../../domain/invoices/delivery/invoice-message-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { sendPdf, sendUsageStatement } from "../send-documents.js";
import { listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";
import { errorResponses, TOO_MANY_DOCUMENTS } from "../openapi-errors.js";

const invoiceList = listSchema(invoiceSchema, "InvoiceList");
const creditNoteList = listSchema(creditNoteSchema, "CreditNoteList");
const messageList = listSchema(invoiceMessageSchema, "InvoiceMessageList");
const notFound = { not_found: "no invoice with this number for this company" };

export function invoiceRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/billing/invoices",
      {
        schema: {
          operationId: "listInvoices",
          tags: ["Invoices"],
          summary: "List invoices, newest first (without line items)",
          querystring: invoiceListFilters.extend({
            ...pageQuery,
            starting_after: pageQuery.starting_after.describe(
              "Cursor: the number of the last invoice of the previous page",
            ),
          }),
          response: {
            200: invoiceList,
            ...errorResponses({ 400: { invalid_cursor: "`starting_after` names no invoice of this company" } }),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const page = await services.invoices.list(
          actorOf(request),
          { contractId: q.contract, status: q.status, from: q.from, to: q.to },
          toPageRequest(q),
        );
        return listEnvelope(page);
      },
    );

    app.get(
      "/v1/billing/reports/receivables",
      {
        schema: {
          operationId: "getReceivablesReport",
          tags: ["Reports"],
          summary: "Receivables: what issued invoices still owe, per customer and currency, aged",
          description:
            "Every issued invoice's amount due (its total less what was paid and credited against it), summed exactly per customer and currency into buckets by whole days past its due date at today (UTC): `current` (due today or later), `1_30`, `31_60`, `61_90`, `over_90`; and the same per currency in `totals`. Draft, paid and void invoices owe nothing here, nor does an issued invoice whose amount due is zero. Scope `invoices:read`.",
          querystring: receivablesQuery,
          response: { 200: receivablesReportSchema },
        },
      },
      async (request) => services.invoices.receivables(actorOf(request), { currency: request.query.currency }),
    );

    app.post(
      "/v1/billing/invoices/project",
      {
        schema: {
          operationId: "projectInvoice",
          tags: ["Invoices"],
          summary: "Create or update the draft invoice of a contract and month",
          description: "Adds subscription lines, attaches usage, and tops up to the monthly minimum. Idempotent.",
          body: projectInvoiceInput,
          response: {
            200: invoiceProjectionSchema,
            ...errorResponses({
              400: {
                invalid_billing_period: "the period is not exactly one calendar month",
                outside_contract_term: "the period lies wholly outside the contract's term",
              },
              404: { not_found: "no contract with this id for this company" },
              409: {
                invoice_is_issued: "the month's invoice has been issued",
                invoice_is_paid: "the month's invoice has been paid",
                invoice_is_void: "the month's invoice has been voided",
              },
            }),
          },
        },
      },
      async (request) =>
        services.invoices.project(actorOf(request), {
          contractId: request.body.external_contract_id,
          periodStart: request.body.billing_period_start,
          periodEnd: request.body.billing_period_end,
        }),
    );

    app.get(
      "/v1/billing/invoices/:number",
      {
        schema: {
          operationId: "getInvoice",
          tags: ["Invoices"],
          summary: "Get an invoice with its line items",
          params: invoiceNumberParams,
          response: { 200: invoiceWithLinesSchema, ...errorResponses({ 404: notFound }) },
        },
      },
      async (request) => services.invoices.get(actorOf(request), request.params.number),
    );

    app.get(
      "/v1/billing/invoices/:number/pdf",
      {
        schema: {
          operationId: "getInvoicePdf",
          tags: ["Invoices"],
          summary: "Download the invoice as a PDF",
          description:
            "On the account's paper size (Letter or A4): the seller (name, address, tax id, logo), the customer (name, address, country, email, tax id) and its memo or PO number, number, period, issue and due dates, lines worded by their rule (a monthly cap explained, a rate as a percentage, fees as count and total), subtotal, tax and total, payment instructions and footer, money formatted per currency. A draft is marked DRAFT; a void invoice VOID, with nothing due. An issued invoice shows the seller and customer as they were when it was issued, and every download is the same file.",
          params: invoiceNumberParams,
          response: errorResponses({ 404: notFound, 429: TOO_MANY_DOCUMENTS }),
        },
      },
      async (request, reply) => {
        return sendPdf(reply, await services.invoices.pdf(actorOf(request), request.params.number), "inline");
      },
    );

    app.get(
      "/v1/billing/invoices/:number/usage.csv",
      {
        schema: {
          operationId: "getInvoiceUsageStatement",
          tags: ["Invoices"],
          summary: "Download the invoice's usage statement (CSV)",
          description:
            "The whole invoice, told apart by the first column, row_type: one `event` row per event billed on it (event_id, timestamp, metric, counterparty, counterparty_side, pair, quantity, fee_amount, applied_rate, rated_amount, rule_id, pricing_version; decimals as stored), one `line` row per line of the invoice (line_kind, description, quantity, unit_price, amount), then its `tax` and its `total` (amount), which equals the invoice's total. The Content-Digest header carries the SHA-256 of the file (RFC 9530).",
          params: invoiceNumberParams,
          response: errorResponses({ 404: notFound }),
        },
      },
      async (request, reply) => {
        return sendUsageStatement(
          reply,
          await services.invoices.usageStatement(actorOf(request), request.params.number),
        );
      },
    );

    // The lifecycle (docs/decisions.md, "Invoices"): each answers the invoice with its lines; repeating an
    // action that happened answers it unchanged; a transition its status forbids is 409 `invoice_is_<status>`.
    const transitionResponses = (refused: Record<string, string>) => ({
      200: invoiceWithLinesSchema,
      ...errorResponses({ 404: notFound, 409: refused }),
    });
    app.post(
      "/v1/billing/invoices/:number/finalize",
      {
        schema: {
          operationId: "finalizeInvoice",
          tags: ["Invoices"],
          summary: "Issue a draft invoice",
          description:
            "Brings the draft up to date as projection does, freezes its lines and figures, sets issued_date to today and due_date from the customer's payment terms. Finalizing an issued or paid invoice answers it unchanged. Emits `invoice.issued` when it issues the draft (so does the worker's automatic issue).",
          params: invoiceNumberParams,
          response: transitionResponses({ invoice_is_void: "the invoice is void" }),
        },
      },
      async (request) => services.invoices.finalize(actorOf(request), request.params.number),
    );

    app.post(
      "/v1/billing/invoices/:number/pay",
      {
        schema: {
          operationId: "payInvoice",
          tags: ["Invoices"],
          summary: "Mark an issued invoice paid in full",
          description:
            "Records what is left due as one payment (method `other`) and sets paid_date (default today). Paying a paid invoice again answers it unchanged, unless another paid_date is given (409). To record a payment with its amount, method and reference, use POST …/payments. Emits `invoice.paid` when it marks the invoice paid.",
          params: invoiceNumberParams,
          body: payInvoiceInput.nullish(),
          response: {
            ...transitionResponses({
              invoice_is_draft: "the invoice is a draft: finalize it first",
              invoice_is_void: "the invoice is void",
              invoice_is_paid: "the invoice was paid on another day than `paid_date`",
            }),
            ...errorResponses({
              400: {
                paid_date_before_issue: "`paid_date` is before the invoice's `issued_date`",
                paid_date_in_future: "`paid_date` is after today",
              },
            }),
          },
        },
      },
      async (request) => services.invoices.pay(actorOf(request), request.params.number, request.body?.paid_date),
    );

    app.post(
      "/v1/billing/invoices/:number/void",
      {
        schema: {
          operationId: "voidInvoice",
          tags: ["Invoices"],
          summary: "Void an issued invoice",
          description:
            "An issued invoice that is not owed: it keeps its number, lines and figures, and is reissued: a new draft for the same contract and period (`reissue_of`; named by the void invoice's `reissued_as`) takes over its lines and usage, so the month can be corrected and billed again. The reissued draft is not issued by the worker: finalize it when it is right. Voiding a void invoice answers it unchanged. Emits `invoice.voided` when it voids the invoice.",
          params: invoiceNumberParams,
          response: transitionResponses({
            invoice_is_draft: "the invoice is a draft: it is not owed yet",
            invoice_is_paid: "the invoice is paid",
            invoice_has_payments: "the invoice has payments or credit notes: correct it with a credit note instead",
          }),
        },
      },
      async (request) => services.invoices.void(actorOf(request), request.params.number),
    );

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

    // Delivery (docs/api.md, "Delivery"): the invoice's messages, sending it again, its hosted link.
    app.get(
      "/v1/billing/invoices/:number/messages",
      {
        schema: {
          operationId: "listInvoiceMessages",
          tags: ["Invoices"],
          summary: "List the invoice's messages (emails), newest first",
          description:
            "Every email about the invoice: when it was issued, reminders around its due date, and those sent again by hand, each with its recipient, status (queued, sent, failed), attempts and the last error. The newest 100.",
          params: invoiceNumberParams,
          response: { 200: messageList, ...errorResponses({ 404: notFound }) },
        },
      },
      async (request) => {
        const items = await services.invoices.messages(actorOf(request), request.params.number);
        return listEnvelope({ items, hasMore: false });
      },
    );

    app.post(
      "/v1/billing/invoices/:number/send",
      {
        schema: {
          operationId: "sendInvoice",
          tags: ["Invoices"],
          summary: "Email the invoice to its customer now",
          description:
            "Queues a message (kind `manual`) to the customer's email address, whatever its `invoice_delivery`, with the PDF attached and the hosted link; the mail worker sends it and retries it if the SMTP server fails. Answers the message, queued (or failed at once when the customer has no email address).",
          params: invoiceNumberParams,
          response: {
            202: invoiceMessageSchema,
            ...errorResponses({
              404: notFound,
              409: {
                invoice_is_draft: "the invoice is a draft: finalize it first",
                invoice_is_void: "the invoice is void",
              },
            }),
          },
        },
      },
      async (request, reply) => {
        return reply.code(202).send(await services.invoices.send(actorOf(request), request.params.number));
      },
    );

    app.post(
      "/v1/billing/invoices/:number/hosted-link/revoke",
      {
        schema: {
          operationId: "revokeInvoiceHostedLink",
          tags: ["Invoices"],
          summary: "Replace the invoice's hosted link",
          description:
            "The old `hosted_url` answers 404 from now on; the invoice answered carries the new one. Emails sent before hold the old link.",
          params: invoiceNumberParams,
          response: {
            200: invoiceWithLinesSchema,
            ...errorResponses({
              404: notFound,
              409: { invoice_is_draft: "the invoice is a draft: it has no hosted link until it is issued" },
            }),
          },
        },
      },
      async (request) => services.invoices.revokeHostedLink(actorOf(request), request.params.number),
    );
  };
}
