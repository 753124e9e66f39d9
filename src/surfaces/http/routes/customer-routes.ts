import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { createCustomerInput, customerSchema, noNul } from "../../../domain/customers/customer-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { errorSchema, listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";

export function customerRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {

    app.post(
      "/v1/billing/customers",
      {
        schema: {
          tags: ["Customers"],
          summary: "Create a customer",
          description: "Emits `customer.created`. Scope `customers:write` or `usage:write`.",
          body: createCustomerInput,
          response: {
            201: customerSchema,
            409: errorSchema.extend({ customer: customerSchema.optional() }).describe("external_id already exists"),
          },
        },
      },
      async (request, reply) => {
        const customer = await services.customers.create(actorOf(request), request.body);
        return reply.code(201).send(customer);
      },
    );

    app.get(
      "/v1/billing/customers",
      {
        schema: {
          tags: ["Customers"],
          summary: "List customers, newest first",
          description: "Scope `customers:read` or `usage:write`.",
          querystring: z.object({ external_id: noNul(z.string().min(1).max(255)).optional(), ...pageQuery }),
          response: { 200: listSchema(customerSchema) },
        },
      },
      async (request) => {
        const page = await services.customers.list(
          actorOf(request),
          { externalId: request.query.external_id },
          toPageRequest(request.query),
        );
        return listEnvelope(page);
      },
    );
  };
}
