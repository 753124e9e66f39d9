import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { invoiceProjectionSchema, invoiceSchema, invoiceListFilters, invoiceWithLinesSchema, projectInvoiceInput } from "../../../domain/invoices/invoice-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { errorSchema, listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";

export function invoiceRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/billing/invoices",
      {
        schema: {
          tags: ["Invoices"],
          summary: "List invoices, newest first (without line items)",
          querystring: invoiceListFilters.extend({
            ...pageQuery,
            starting_after: pageQuery.starting_after.describe("Cursor: the number of the last invoice of the previous page"),
          }),
          response: { 200: listSchema(invoiceSchema) },
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
          tags: ["Invoices"],
          summary: "Create or update the draft invoice of a contract and month",
          description: "Adds subscription lines, attaches usage, and tops up to the monthly minimum. Idempotent.",
          body: projectInvoiceInput,
          response: { 200: invoiceProjectionSchema, 400: errorSchema, 404: errorSchema },
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
          tags: ["Invoices"],
          summary: "Get an invoice with its line items",
          params: z.object({ number: z.string().min(1).max(64) }),
          response: { 200: invoiceWithLinesSchema, 404: errorSchema },
        },
      },
      async (request) => services.invoices.get(actorOf(request), request.params.number),
    );
  };
}
