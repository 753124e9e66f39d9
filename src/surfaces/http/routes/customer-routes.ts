import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  createCustomerInput,
  customerSchema,
  noNul,
  updateCustomerInput,
} from "../../../domain/customers/customer-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";
import { errorResponses, errorSchema } from "../openapi-errors.js";

const customerList = listSchema(customerSchema, "CustomerList");
/** A 409 `customer_exists` always carries the existing customer (customer-service.ts). */
export const customerExists = errorSchema
  .extend({
    code: z.literal("customer_exists"),
    customer: customerSchema.describe("The customer that has this external_id"),
  })
  .meta({ id: "CustomerExistsError" });

export function customerRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      "/v1/billing/customers",
      {
        schema: {
          operationId: "createCustomer",
          tags: ["Customers"],
          summary: "Create a customer",
          description: "Emits `customer.created`. Scope `customers:write` or `usage:write`.",
          body: createCustomerInput,
          response: {
            201: customerSchema,
            ...errorResponses({
              409: {
                schema: customerExists,
                codes: {
                  customer_exists:
                    "the company already has a customer with this `external_id`; `customer` is that customer",
                },
              },
            }),
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
          operationId: "listCustomers",
          tags: ["Customers"],
          summary: "List customers, newest first",
          description: "Scope `customers:read` or `usage:write`.",
          querystring: z.object({
            external_id: noNul(z.string().min(1).max(255)).optional(),
            search: noNul(z.string().trim().min(1).max(200))
              .optional()
              .describe("Customers whose name contains this (any case) or whose external_id is exactly this"),
            ...pageQuery,
          }),
          response: {
            200: customerList,
            ...errorResponses({ 400: { invalid_cursor: "`starting_after` names no customer of this list" } }),
          },
        },
      },
      async (request) => {
        const page = await services.customers.list(
          actorOf(request),
          { externalId: request.query.external_id, search: request.query.search },
          toPageRequest(request.query),
        );
        return listEnvelope(page);
      },
    );

    const params = z.object({ id: z.string().min(1).max(100) });
    const notFound = { not_found: "no customer with this id for this company" };

    app.get(
      "/v1/billing/customers/:id",
      {
        schema: {
          operationId: "getCustomer",
          tags: ["Customers"],
          summary: "Get a customer",
          description: "Scope `customers:read` or `usage:write`.",
          params,
          response: { 200: customerSchema, ...errorResponses({ 404: notFound }) },
        },
      },
      async (request) => services.customers.get(actorOf(request), request.params.id),
    );

    app.patch(
      "/v1/billing/customers/:id",
      {
        schema: {
          operationId: "updateCustomer",
          tags: ["Customers"],
          summary: "Change a customer",
          description:
            "Changes the fields sent; `null` clears an optional one. Issued invoices keep the terms, addresses and memo they were issued with. Scope `customers:write`.",
          params,
          body: updateCustomerInput,
          response: {
            200: customerSchema,
            ...errorResponses({
              400: { email_required: "`invoice_delivery` is `email` and the customer would have no `email`" },
              404: notFound,
              409: { customer_exists: "another customer of the company has this `external_id`" },
            }),
          },
        },
      },
      async (request) => services.customers.update(actorOf(request), request.params.id, request.body),
    );
  };
}
