import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  addPricingRuleInput,
  CONTRACT_STATUSES,
  contractSchema,
  createSampleContractInput,
  pricingProgramSchema,
  pricingRuleResponseSchema,
  updatePricingRuleInput,
} from "../../../domain/contracts/contract-schemas.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { errorSchema } from "../list-envelope.js";

const contractParams = z.object({ ext_id: z.string().min(1).max(255) });
const ruleParams = contractParams.extend({ rule_id: z.string().min(1).max(64) });
const contractList = z.object({
  object: z.literal("list"),
  data: z.array(contractSchema),
  has_more: z.boolean(),
  total_count: z.number().int(),
});

export function contractRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/billing/contracts",
      {
        schema: {
          tags: ["Contracts"],
          summary: "List contracts, newest first (not paginated)",
          querystring: z.object({ status: z.enum(CONTRACT_STATUSES).optional() }),
          response: { 200: contractList },
        },
      },
      async (request) => {
        const data = await services.contracts.list(actorOf(request), request.query.status);
        return { object: "list" as const, data, has_more: false, total_count: data.length };
      },
    );

    app.post(
      "/v1/billing/contracts",
      {
        schema: {
          tags: ["Contracts"],
          summary: "Create a sample test contract for a customer",
          description:
            "Id `{slug}-test` from the customer's name, metrics domestic_wire (20) and international_wire (30), a 1000 USD monthly minimum, a sample agreement PDF. Emits `contract.created`.",
          body: createSampleContractInput,
          response: { 201: contractSchema, 404: errorSchema },
        },
      },
      async (request, reply) => {
        return reply.code(201).send(await services.contracts.createSample(actorOf(request), request.body.customer_id));
      },
    );

    app.get(
      "/v1/billing/contracts/:ext_id",
      { schema: { tags: ["Contracts"], summary: "Get a contract", params: contractParams, response: { 200: contractSchema, 404: errorSchema } } },
      async (request) => services.contracts.get(actorOf(request), request.params.ext_id),
    );

    app.get(
      "/v1/billing/contracts/:ext_id/pricing",
      {
        schema: {
          tags: ["Pricing"],
          summary: "The active pricing program version",
          params: contractParams,
          response: { 200: pricingProgramSchema, 404: errorSchema },
        },
      },
      async (request) => services.contracts.getPricing(actorOf(request), request.params.ext_id),
    );

    app.post(
      "/v1/billing/contracts/:ext_id/pricing-rules",
      {
        schema: {
          tags: ["Pricing"],
          summary: "Add a pricing rule (new program version)",
          params: contractParams,
          body: addPricingRuleInput,
          response: { 201: pricingRuleResponseSchema, 404: errorSchema, 409: errorSchema },
        },
      },
      async (request, reply) => {
        return reply.code(201).send(await services.contracts.addRule(actorOf(request), request.params.ext_id, request.body));
      },
    );

    app.put(
      "/v1/billing/contracts/:ext_id/pricing-rules/:rule_id",
      {
        schema: {
          tags: ["Pricing"],
          summary: "Update a pricing rule: fields merged, new program version",
          params: ruleParams,
          body: updatePricingRuleInput,
          response: { 200: pricingRuleResponseSchema, 404: errorSchema },
        },
      },
      async (request) => services.contracts.updateRule(actorOf(request), request.params.ext_id, request.params.rule_id, request.body),
    );
  };
}

/** The agreement PDF behind `pdf_url`: no API key, the unguessable token is the capability. */
export function agreementRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/agreements/:file",
      { schema: { hide: true, params: z.object({ file: z.string().max(100) }) } },
      async (request, reply) => {
        const token = request.params.file.replace(/\.pdf$/, "");
        const pdf = await services.contracts.agreementPdf(token);
        return reply.type("application/pdf").header("content-disposition", "inline; filename=\"agreement.pdf\"").send(pdf);
      },
    );
  };
}
