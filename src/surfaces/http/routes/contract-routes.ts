// The API's contracts (docs/api.md, "Contracts"): listed, read, a sample created, one created from its signed
// agreement (a multipart upload) or the agreement only read for its terms, and the agreement PDF, by API key or
// behind its `pdf_url`. A contract's pricing program and credit grants are contract-pricing-routes.ts.
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  CONTRACT_STATUSES,
  contractExtractionSchema,
  contractSchema,
  createSampleContractInput,
} from "../../../domain/contracts/contract-schemas.js";
import type { UploadedFile } from "../../../domain/contracts/agreement-upload.js";
import type { Tenancy } from "../../../domain/kernel/tenancy.js";
import type { Services } from "../../../domain/services.js";
import { requireScope } from "../../../domain/kernel/actor.js";
import { ValidationError } from "../../../domain/kernel/errors.js";
import { actorOf } from "../authenticate.js";
import { exactJsonReader } from "../json-body.js";
import { sendPdf } from "../send-documents.js";
import { acceptMultipart, readMultipartForm, UPLOAD_LIMITS } from "../multipart-form.js";
import { listSchema } from "../list-envelope.js";
import { errorResponses, errorSchema, TOO_MANY_DOCUMENTS } from "../openapi-errors.js";
import { customerExists } from "./customer-routes.js";

/** A contract's path parameter, shared with contract-pricing-routes.ts. */
export const contractParams = z.object({ ext_id: z.string().min(1).max(255) });
const contractList = listSchema(contractSchema, "ContractList");
/** A 409 `contract_exists` always carries the existing contract (contract-uploads.ts). */
const contractExists = errorSchema
  .extend({ code: z.literal("contract_exists"), contract: contractSchema.describe("The contract that has this id") })
  .meta({ id: "ContractExistsError" });
// An upload's 409 is one or the other, each with the resource it names.
const uploadConflict = z.union([customerExists, contractExists]);
/** The 404 of an operation on what `what` names, shared with contract-pricing-routes.ts. */
export const notFound = (what: string) => ({ not_found: `no ${what} with this id for this company` });

/**
 * How an operation that takes an agreement PDF refuses its file (the upload and the extraction alike):
 * agreement-upload.ts's checks, and the multipart form's (multipart-form.ts).
 */
const agreementFileErrors = {
  400: {
    invalid_multipart: "the multipart body cannot be read",
    file_missing: "no part `file`",
    file_empty: "the file has no bytes",
    file_encrypted: "the PDF is encrypted (a user or an owner password)",
    file_unreadable: "it starts like a PDF but cannot be parsed",
    file_too_complex:
      "reading the PDF (every page's content) takes more memory or time than one upload may: a small file that unpacks into gigabytes",
    unexpected_file: "a file in a part other than `file`",
    file_too_many_pages: "the PDF has more than 500 pages; `details` name `file`",
  },
  413: {
    file_too_large: "the file is larger than 10 MiB (10,485,760 bytes)",
    too_many_files: "more than one file part, whatever its name or the parts' order",
  },
  415: {
    unsupported_media_type: "the body is not `multipart/form-data`",
    file_not_pdf: "the file does not start with `%PDF-`, whatever its name or declared type",
  },
  429: {
    too_many_uploads:
      "the company already has 2 uploaded PDFs being checked or waiting (each company's are checked in turn with the others'), or the service holds as many waiting as it may; `Retry-After` says when to try again",
  },
} as const;

/**
 * An agreement's multipart form, as the upload and the extraction read it: the key's scope and the company's
 * room for one more file are checked before the body is read (a key that may not upload does not get 10 MB
 * buffered), then the one file in `file` is required, beside only the text parts named in `textParts`.
 */
async function readAgreementForm(
  services: Services,
  request: FastifyRequest,
  textParts: readonly string[],
): Promise<{ actor: Tenancy; file: UploadedFile; fields: URLSearchParams }> {
  const actor = actorOf(request);
  requireScope(actor, "contracts:write");
  services.contracts.requireUploadRoom(actor);
  const form = await readMultipartForm(request, UPLOAD_LIMITS);
  const unknown = [...new Set(form.fields.keys())].filter((name) => !textParts.includes(name));
  if (unknown.length > 0) {
    const expected = ["file", ...textParts].map((name) => `\`${name}\``).join(" and ");
    throw new ValidationError(
      `Unknown part: ${unknown.join(", ")}; send ${textParts.length === 0 ? `only ${expected}` : expected}`,
      "invalid_request",
    );
  }
  if (!form.file) throw new ValidationError("Attach the signed agreement as a PDF in the part `file`", "file_missing");
  return { actor, file: form.file, fields: form.fields };
}

export function contractRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/billing/contracts",
      {
        schema: {
          operationId: "listContracts",
          tags: ["Contracts"],
          summary: "List contracts, newest first (not paginated)",
          description:
            "Every contract of the company, newest first, each with its customer, term, currency, status and metrics. The list is not paginated: `has_more` is always `false`. Scope `contracts:read`.",
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
          operationId: "createSampleContract",
          tags: ["Contracts"],
          summary: "Create a sample test contract for a customer",
          description:
            "Id `{slug}-test` from the customer's name, metrics domestic_wire (20) and international_wire (30), a 1000 USD monthly minimum, a sample agreement PDF. Emits `contract.created`.",
          body: createSampleContractInput,
          response: {
            201: contractSchema,
            ...errorResponses({
              404: notFound("customer"),
              409: { contract_id_taken: "no free contract id was found for the customer's name; try again" },
            }),
          },
        },
      },
      async (request, reply) => {
        return reply.code(201).send(await services.contracts.createSample(actorOf(request), request.body.customer_id));
      },
    );

    // The upload and the extraction read their multipart bodies themselves; only their scope takes multipart at all.
    await app.register(async (scope) => {
      acceptMultipart(scope);
      const readJson = exactJsonReader(scope);
      scope.post(
        "/v1/billing/contracts/upload",
        {
          schema: {
            operationId: "uploadContract",
            tags: ["Contracts"],
            summary: "Create a contract from its signed agreement (PDF) and its terms",
            description:
              '`multipart/form-data` with two parts: `file`, the signed agreement as a PDF (at most 10 MiB, not encrypted), and `terms`, a JSON text: `customer` (`{"id"}` of an existing customer, or `{"name", "external_id"?, "email"?, "address"?}` for a new one), `contract_id`, `start_date`, `end_date` (optional; open-ended without), `currency`, `payment_terms_days` (optional), and `rules` (pricing rules shaped as for addPricingRule; a monthly minimum is a rule of type `minimum`). The `terms` extractContract proposes are in this shape. Creates the customer when new (`customer.created`), then the contract (`sample: false`, `pdf_url` serving the uploaded file to this company only; `contract.created`), in one transaction.',
            response: {
              201: contractSchema,
              ...errorResponses({
                400: {
                  ...agreementFileErrors[400],
                  terms_missing: "no part `terms`",
                  invalid_json: "the part `terms` (or a body sent as JSON) is not JSON",
                  invalid_terms: "`terms` fail validation; `details` name each field",
                  invalid_pricing_rule: "a rule is not a valid rule; `details` name `rules.{i}.{field}`",
                },
                404: notFound("customer (`customer.id`)"),
                409: {
                  schema: uploadConflict,
                  codes: {
                    customer_exists: "the new customer's `external_id` is taken; `customer` is the existing customer",
                    contract_exists: "`contract_id` is taken; `contract` is the existing contract",
                  },
                },
                413: {
                  ...agreementFileErrors[413],
                  field_too_large: "`terms` is larger than 1 MiB",
                  too_many_fields: "a part other than `file` and `terms`, or `terms` twice",
                },
                415: agreementFileErrors[415],
                429: agreementFileErrors[429],
              }),
            },
          },
        },
        async (request, reply) => {
          const { actor, file, fields } = await readAgreementForm(services, request, ["terms"]);
          const termsText = fields.get("terms");
          if (termsText === null || termsText.trim() === "")
            throw new ValidationError("Send the contract's terms as a JSON text in the part `terms`", "terms_missing");
          if (fields.getAll("terms").length > 1)
            throw new ValidationError("Send the part `terms` once", "invalid_request");
          let terms: unknown;
          try {
            terms = readJson(request, termsText);
          } catch (error) {
            if (error instanceof ValidationError) throw error;
            throw new ValidationError("The part `terms` is not valid JSON", "invalid_json");
          }
          return reply.code(201).send(await services.contracts.upload(actor, file, terms));
        },
      );

      scope.post(
        "/v1/billing/contracts/extract",
        {
          schema: {
            operationId: "extractContract",
            tags: ["Contracts"],
            summary: "Read an agreement (PDF) and propose its terms, each with its source; nothing is stored",
            description:
              "`multipart/form-data` with one part, `file`: an agreement as a PDF in any layout (at most 10 MiB, not encrypted; checked and refused as uploadContract's file is). The text layer of its first 30 pages is read; pages without text are read by OCR (at most 5 pages; two files at once across the service, one per company, companies taking turns page by page; a file is given turns until 60 s after it was queued, and a page being read is never cut short: the pages it had no turn for are left unread, and the warning `ocr_busy` says which, and in how many seconds to send the file again). The answer proposes the `terms` uploadContract takes, each only when it was found, and for every value in `fields` the page, the exact text it was read from and a confidence (1 for exact text; lower for OCR and for loose wording). A value without a source is never proposed, and a missing one is never guessed. Nothing is stored: not the file, not the terms; the document is read on the service's own machine and sent nowhere. Scope `contracts:write`.",
            response: {
              200: contractExtractionSchema,
              ...errorResponses({
                400: agreementFileErrors[400],
                413: {
                  ...agreementFileErrors[413],
                  field_too_large: "a part other than `file` is larger than 1 MiB",
                  too_many_fields: "more than one part other than `file`",
                },
                415: agreementFileErrors[415],
                // The terms are read in the document processes, in the company's turn (documents/document-pool.ts).
                429: { ...agreementFileErrors[429], ...TOO_MANY_DOCUMENTS },
              }),
            },
          },
        },
        async (request) => {
          const { actor, file } = await readAgreementForm(services, request, []);
          return services.contracts.extract(actor, file);
        },
      );
    });

    app.get(
      "/v1/billing/contracts/:ext_id/agreement.pdf",
      {
        schema: {
          operationId: "getContractAgreement",
          tags: ["Contracts"],
          summary: "The contract's agreement: the uploaded PDF as it was sent, or the generated one",
          description:
            "The agreement PDF of the contract: the file as it was uploaded (`POST …/contracts/upload`), byte for byte, or for a sample contract the agreement the service generates from its terms. Scope `contracts:read`.",
          params: contractParams,
          response: errorResponses({ 404: notFound("contract"), 429: TOO_MANY_DOCUMENTS }),
        },
      },
      async (request, reply) => {
        return sendPdf(
          reply,
          await services.contracts.agreementFile(actorOf(request), request.params.ext_id),
          "inline",
        );
      },
    );

    app.get(
      "/v1/billing/contracts/:ext_id",
      {
        schema: {
          operationId: "getContract",
          tags: ["Contracts"],
          summary: "Get a contract",
          description:
            "The contract with its customer, term, currency, status, metrics and `pdf_url`; 404 when no contract of the company has this external id. Scope `contracts:read`.",
          params: contractParams,
          response: { 200: contractSchema, ...errorResponses({ 404: notFound("contract") }) },
        },
      },
      async (request) => services.contracts.get(actorOf(request), request.params.ext_id),
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
        return reply
          .type("application/pdf")
          .header("content-disposition", 'inline; filename="agreement.pdf"')
          .send(pdf);
      },
    );
  };
}
