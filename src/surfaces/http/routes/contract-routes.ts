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
import { customerSchema } from "../../../domain/customers/customer-schemas.js";
import type { Services } from "../../../domain/services.js";
import { ValidationError } from "../../../domain/kernel/errors.js";
import { actorOf } from "../authenticate.js";
import { exactJsonReader } from "../json-body.js";
import { sendPdf } from "../send-documents.js";
import { acceptMultipart, readMultipartForm, UPLOAD_LIMITS } from "../multipart-form.js";
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

    // The upload reads its multipart body itself; only its scope takes multipart at all.
    await app.register(async (scope) => {
      acceptMultipart(scope);
      const readJson = exactJsonReader(scope);
      scope.post(
        "/v1/billing/contracts/upload",
        {
          schema: {
            tags: ["Contracts"],
            summary: "Create a contract from its signed agreement (PDF) and its terms",
            description:
              "`multipart/form-data` with two parts: `file`, the signed agreement as a PDF (at most 10 MB, not encrypted), and `terms`, a JSON text: `customer` (`{\"id\"}` of an existing customer, or `{\"name\", \"external_id\"?, \"email\"?}` for a new one), `contract_id`, `start_date`, `end_date` (optional; open-ended without), `currency`, and `rules` (pricing rules shaped as for addPricingRule; a monthly minimum is a rule of type `minimum`). Creates the customer when new (`customer.created`), then the contract (`sample: false`, `pdf_url` serving the uploaded file to this company only; `contract.created`), in one transaction.",
            response: {
              201: contractSchema,
              400: errorSchema,
              404: errorSchema,
              409: errorSchema
                .extend({ customer: customerSchema.optional(), contract: contractSchema.optional() })
                .describe("customer_exists (with the existing customer) or contract_exists (with the existing contract)"),
              413: errorSchema,
              415: errorSchema,
            },
          },
        },
        async (request, reply) => {
          const actor = actorOf(request);
          const form = await readMultipartForm(request, UPLOAD_LIMITS);
          const unknown = [...new Set(form.fields.keys())].filter((name) => name !== "terms");
          if (unknown.length > 0) throw new ValidationError(`Unknown part: ${unknown.join(", ")}; send \`file\` and \`terms\``, "invalid_request");
          if (!form.file) throw new ValidationError("Attach the signed agreement as a PDF in the part `file`", "file_missing");
          const termsText = form.fields.get("terms");
          if (termsText === null || termsText.trim() === "") throw new ValidationError("Send the contract's terms as a JSON text in the part `terms`", "terms_missing");
          if (form.fields.getAll("terms").length > 1) throw new ValidationError("Send the part `terms` once", "invalid_request");
          let terms: unknown;
          try {
            terms = readJson(request, termsText);
          } catch (error) {
            if (error instanceof ValidationError) throw error;
            throw new ValidationError("The part `terms` is not valid JSON", "invalid_json");
          }
          return reply.code(201).send(await services.contracts.upload(actor, form.file, terms));
        },
      );
    });

    app.get(
      "/v1/billing/contracts/:ext_id/agreement.pdf",
      {
        schema: {
          tags: ["Contracts"],
          summary: "The contract's agreement: the uploaded PDF as it was sent, or the generated one",
          params: contractParams,
          response: { 404: errorSchema },
        },
      },
      async (request, reply) => {
        // A Buffer is sent as it is (the declared schemas type JSON answers only).
        return sendPdf(reply as never, await services.contracts.agreementFile(actorOf(request), request.params.ext_id), "inline");
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
