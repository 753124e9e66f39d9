import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import {
  invoiceListFilters,
  invoiceNumberParams,
  invoiceProjectionSchema,
  invoiceSchema,
  invoiceWithLinesSchema,
  payInvoiceInput,
  projectInvoiceInput,
} from "../../../domain/invoices/invoice-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { sendPdf, sendUsageStatement } from "../send-documents.js";
import { listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";
import { errorResponses } from "../openapi-errors.js";

const invoiceList = listSchema(invoiceSchema, "InvoiceList");
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
          response: errorResponses({ 404: notFound }),
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
            "Brings the draft up to date as projection does, freezes its lines and figures, sets issued_date to today and due_date from the customer's payment terms. Finalizing an issued or paid invoice answers it unchanged.",
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
          summary: "Mark an issued invoice paid",
          description:
            "Sets paid_date (default today). Paying a paid invoice again answers it unchanged, unless another paid_date is given (409).",
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
            "An issued invoice that is not owed: it keeps its number, lines and figures. Voiding a void invoice answers it unchanged.",
          params: invoiceNumberParams,
          response: transitionResponses({
            invoice_is_draft: "the invoice is a draft: it is not owed yet",
            invoice_is_paid: "the invoice is paid",
          }),
        },
      },
      async (request) => services.invoices.void(actorOf(request), request.params.number),
    );
  };
}
