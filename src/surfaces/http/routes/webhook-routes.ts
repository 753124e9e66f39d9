import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Services } from "../../../domain/services.js";
import {
  createEndpointInput,
  deletedEndpointSchema,
  deliverySchema,
  endpointSchema,
  testEventInput,
  testResultSchema,
  updateEndpointInput,
} from "../../../domain/webhooks/webhook-schemas.js";
import { noBody } from "../action-body.js";
import { actorOf } from "../authenticate.js";
import { listSchema } from "../list-envelope.js";
import { errorResponses } from "../openapi-errors.js";

const idParams = z.object({ id: z.string().min(1).max(100) });
const endpointList = listSchema(endpointSchema, "WebhookEndpointList");
const deliveryList = listSchema(deliverySchema, "WebhookDeliveryList");
const tags = ["Webhook endpoints"];
const notFound = (what: string) => errorResponses({ 404: { not_found: `no ${what} with this id for this company` } });
const invalidUrl = {
  invalid_url: "`url` is not `https://`, carries credentials, or its host does not resolve to public addresses only",
};
const disabled = { endpoint_disabled: "the endpoint is disabled; enable it first" };

export function webhookRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    const { webhooks } = services;

    app.post(
      "/v1/webhook-endpoints",
      {
        schema: {
          operationId: "createWebhookEndpoint",
          tags,
          summary: "Create a webhook endpoint (the secret is shown here)",
          description:
            "Registers an HTTPS URL and the event types it receives. The answer carries the signing `secret`, shown only here and after a rotation: keep it to verify signatures. Scope `webhooks:write`.",
          body: createEndpointInput,
          response: { 201: endpointSchema, ...errorResponses({ 400: invalidUrl }) },
        },
      },
      async (request, reply) => reply.code(201).send(await webhooks.create(actorOf(request), request.body)),
    );

    app.get(
      "/v1/webhook-endpoints",
      {
        schema: {
          operationId: "listWebhookEndpoints",
          tags,
          summary: "List webhook endpoints",
          description:
            "Every webhook endpoint of the company, with its URL, event types and whether it is enabled; never the secret. Scope `webhooks:read` or `webhooks:write`.",
          response: { 200: endpointList },
        },
      },
      async (request) => {
        const data = await webhooks.list(actorOf(request));
        return { object: "list" as const, data, has_more: false, total_count: data.length };
      },
    );

    app.get(
      "/v1/webhook-endpoints/:id",
      {
        schema: {
          operationId: "getWebhookEndpoint",
          tags,
          summary: "Get a webhook endpoint",
          description:
            "One webhook endpoint, with its URL, event types and whether it is enabled; never the secret. Scope `webhooks:read` or `webhooks:write`.",
          params: idParams,
          response: { 200: endpointSchema, ...notFound("webhook endpoint") },
        },
      },
      async (request) => webhooks.get(actorOf(request), request.params.id),
    );

    app.patch(
      "/v1/webhook-endpoints/:id",
      {
        schema: {
          operationId: "updateWebhookEndpoint",
          tags,
          summary: "Update url, events, description, or enable/disable",
          description:
            "Changes the fields sent: `url`, `events`, `description`, or `enabled` (a disabled endpoint is sent nothing). Scope `webhooks:write`.",
          params: idParams,
          body: updateEndpointInput,
          response: { 200: endpointSchema, ...errorResponses({ 400: invalidUrl }), ...notFound("webhook endpoint") },
        },
      },
      async (request) => webhooks.update(actorOf(request), request.params.id, request.body),
    );

    app.post(
      "/v1/webhook-endpoints/:id/rotate-secret",
      {
        schema: {
          operationId: "rotateWebhookEndpointSecret",
          tags,
          summary: "Replace the signing secret, effective at once",
          description:
            "A new signing secret, answered once here; deliveries from now on are signed with it, and the old one stops verifying at once. Scope `webhooks:write`.",
          params: idParams,
          body: noBody(),
          response: { 200: endpointSchema, ...notFound("webhook endpoint") },
        },
      },
      async (request) => webhooks.rotateSecret(actorOf(request), request.params.id),
    );

    app.delete(
      "/v1/webhook-endpoints/:id",
      {
        schema: {
          operationId: "deleteWebhookEndpoint",
          tags,
          summary: "Delete a webhook endpoint",
          description:
            "Deletes the endpoint: nothing more is sent to it. Answers `{object, id, deleted: true}`. Scope `webhooks:write`.",
          params: idParams,
          body: noBody(),
          response: { 200: deletedEndpointSchema, ...notFound("webhook endpoint") },
        },
      },
      async (request) => webhooks.remove(actorOf(request), request.params.id),
    );

    app.post(
      "/v1/webhook-endpoints/:id/test",
      {
        schema: {
          operationId: "testWebhookEndpoint",
          tags,
          summary: "Send a signed test event now",
          description:
            "Signs and POSTs a test event of the given type to the endpoint now, and answers whether it was received (`status`, the endpoint's `status_code`, or the `error`). Scope `webhooks:write`.",
          params: idParams,
          body: testEventInput,
          response: {
            200: testResultSchema,
            ...errorResponses({
              404: { not_found: "no webhook endpoint with this id for this company" },
              409: disabled,
            }),
          },
        },
      },
      async (request) => webhooks.sendTest(actorOf(request), request.params.id, request.body.type),
    );

    app.get(
      "/v1/webhook-endpoints/:id/deliveries",
      {
        schema: {
          operationId: "listWebhookDeliveries",
          tags,
          summary: "The 50 most recent deliveries, with payloads",
          description:
            "The endpoint's 50 most recent deliveries, each with its event's payload, status and attempts. Scope `webhooks:read` or `webhooks:write`.",
          params: idParams,
          response: { 200: deliveryList, ...notFound("webhook endpoint") },
        },
      },
      async (request) => {
        const data = await webhooks.recentDeliveries(actorOf(request), request.params.id);
        return { object: "list" as const, data, has_more: false, total_count: data.length };
      },
    );

    app.post(
      "/v1/webhook-endpoints/deliveries/:id/resend",
      {
        schema: {
          operationId: "resendWebhookDelivery",
          tags,
          summary: "Send a delivery's event again (same event id), now",
          description:
            "Sends the delivery's event again, now, with the same event id (receivers dedupe on it); 409 when the endpoint is disabled. Scope `webhooks:write`.",
          params: idParams,
          body: noBody(),
          response: {
            200: deliverySchema,
            ...errorResponses({ 404: { not_found: "no delivery with this id for this company" }, 409: disabled }),
          },
        },
      },
      async (request) => webhooks.resend(actorOf(request), request.params.id),
    );
  };
}
