// An issued invoice's delivery (docs/api.md, "Delivery"): the emails about it, sending it again, and replacing
// its hosted link. Registered after invoice-collection-routes.ts (the OpenAPI document's order).
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { invoiceMessageSchema } from "../../../domain/invoices/delivery/invoice-message-schemas.js";
import { invoiceNumberParams, invoiceWithLinesSchema } from "../../../domain/invoices/invoice-schemas.js";
import type { Services } from "../../../domain/services.js";
import { noBody } from "../action-body.js";
import { actorOf } from "../authenticate.js";
import { listEnvelope, listSchema } from "../list-envelope.js";
import { errorResponses } from "../openapi-errors.js";
import { notFound } from "./invoice-routes.js";

const messageList = listSchema(invoiceMessageSchema, "InvoiceMessageList");

export function invoiceDeliveryRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
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
          body: noBody(),
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
          body: noBody(),
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
