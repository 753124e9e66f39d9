// The API's invoices (docs/api.md, "Invoices"): listed, projected, read with their lines, their PDF and usage
// statement, and their lifecycle (finalize, pay, void), with the receivables report over them. What follows
// issue has a plugin of its own, registered right after this one (the OpenAPI document's order): payments
// and credit notes (invoice-collection-routes.ts), emails and the hosted link (invoice-delivery-routes.ts).
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
import type { Services } from "../../../domain/services.js";
import { noBody, optionalBody } from "../action-body.js";
import { actorOf } from "../authenticate.js";
import { sendPdf, sendUsageStatement } from "../send-documents.js";
import { listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";
import { errorResponses, TOO_MANY_DOCUMENTS } from "../openapi-errors.js";

const invoiceList = listSchema(invoiceSchema, "InvoiceList");
/** The 404 of an operation on one invoice, shared with the invoice's other route plugins. */
export const notFound = { not_found: "no invoice with this number for this company" };

export function invoiceRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/billing/invoices",
      {
        schema: {
          operationId: "listInvoices",
          tags: ["Invoices"],
          summary: "List invoices, newest first (without line items)",
          description:
            "The company's invoices, newest first, cursor-paginated by number, filtered by contract, period (`from`, `to`) and status (`draft`, `issued`, `paid`, `void`, or `open` and `overdue`). Without line items: get one invoice for those. Scope `invoices:read`.",
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
          description:
            "The invoice with every line item and the figures derived from them (subtotal, tax, total, amount paid, amount due). A draft is priced as it stands; an issued invoice is frozen. Scope `invoices:read`.",
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
          body: noBody(),
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
          body: optionalBody(payInvoiceInput),
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
          body: noBody(),
          response: transitionResponses({
            invoice_is_draft: "the invoice is a draft: it is not owed yet",
            invoice_is_paid: "the invoice is paid",
            invoice_has_payments: "the invoice has payments or credit notes: correct it with a credit note instead",
          }),
        },
      },
      async (request) => services.invoices.void(actorOf(request), request.params.number),
    );
  };
}
