import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Services } from "../../../domain/services.js";
import {
  createEndpointInput,
  deliverySchema,
  endpointSchema,
  testEventInput,
  testResultSchema,
  updateEndpointInput,
} from "../../../domain/webhooks/webhook-schemas.js";
import { actorOf } from "../authenticate.js";
import { errorSchema } from "../list-envelope.js";

const idParams = z.object({ id: z.string().min(1).max(100) });
const list = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean(), total_count: z.number().int() });
const tags = ["Webhook endpoints"];

export function webhookRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    const { webhooks } = services;

    app.post(
      "/v1/webhook-endpoints",
      { schema: { tags, summary: "Create a webhook endpoint (the secret is shown here)", body: createEndpointInput, response: { 201: endpointSchema, 400: errorSchema } } },
      async (request, reply) => reply.code(201).send(await webhooks.create(actorOf(request), request.body)),
    );

    app.get("/v1/webhook-endpoints", { schema: { tags, summary: "List webhook endpoints", response: { 200: list(endpointSchema) } } }, async (request) => {
      const data = await webhooks.list(actorOf(request));
      return { object: "list" as const, data, has_more: false, total_count: data.length };
    });

    app.get(
      "/v1/webhook-endpoints/:id",
      { schema: { tags, summary: "Get a webhook endpoint", params: idParams, response: { 200: endpointSchema, 404: errorSchema } } },
      async (request) => webhooks.get(actorOf(request), request.params.id),
    );

    app.patch(
      "/v1/webhook-endpoints/:id",
      {
        schema: {
          tags,
          summary: "Update url, events, description, or enable/disable",
          params: idParams,
          body: updateEndpointInput,
          response: { 200: endpointSchema, 400: errorSchema, 404: errorSchema },
        },
      },
      async (request) => webhooks.update(actorOf(request), request.params.id, request.body),
    );

    app.post(
      "/v1/webhook-endpoints/:id/rotate-secret",
      { schema: { tags, summary: "Replace the signing secret, effective at once", params: idParams, response: { 200: endpointSchema, 404: errorSchema } } },
      async (request) => webhooks.rotateSecret(actorOf(request), request.params.id),
    );

    app.delete(
      "/v1/webhook-endpoints/:id",
      {
        schema: {
          tags,
          summary: "Delete a webhook endpoint",
          params: idParams,
          response: { 200: z.object({ object: z.literal("webhook_endpoint"), id: z.string(), deleted: z.literal(true) }), 404: errorSchema },
        },
      },
      async (request) => webhooks.remove(actorOf(request), request.params.id),
    );

    app.post(
      "/v1/webhook-endpoints/:id/test",
      {
        schema: {
          tags,
          summary: "Send a signed test event now",
          params: idParams,
          body: testEventInput,
          response: { 200: testResultSchema, 404: errorSchema, 409: errorSchema },
        },
      },
      async (request) => webhooks.sendTest(actorOf(request), request.params.id, request.body.type),
    );

    app.get(
      "/v1/webhook-endpoints/:id/deliveries",
      { schema: { tags, summary: "The 50 most recent deliveries, with payloads", params: idParams, response: { 200: list(deliverySchema), 404: errorSchema } } },
      async (request) => {
        const data = await webhooks.recentDeliveries(actorOf(request), request.params.id);
        return { object: "list" as const, data, has_more: false, total_count: data.length };
      },
    );

    app.post(
      "/v1/webhook-endpoints/deliveries/:id/resend",
      {
        schema: {
          tags,
          summary: "Send a delivery's event again (same event id), now",
          params: idParams,
          response: { 200: deliverySchema, 404: errorSchema, 409: errorSchema },
        },
      },
      async (request) => webhooks.resend(actorOf(request), request.params.id),
    );
  };
}
