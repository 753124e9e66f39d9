// The OpenAPI document served at GET /v1/openapi.json (docs/api.md, "The OpenAPI document"): generated from
// the routes' zod schemas, then completed here, in this order: named schemas (`components.schemas`, from the
// zod schemas that carry an id), the operations that carry files (openapi-files.ts), the errors every
// operation shares (openapi-errors.ts), the bodies that may be left out, the webhooks the service sends, and
// no component that nothing uses.
import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import { createJsonSchemaTransformObject, jsonSchemaTransform } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  contractCreatedEventSchema,
  customerCreatedEventSchema,
  invoiceIssuedEventSchema,
  invoicePaidEventSchema,
  invoiceVoidedEventSchema,
  paymentRecordedEventSchema,
  creditNoteCreatedEventSchema,
} from "../../domain/webhooks/webhook-schemas.js";
import { describeCommonErrors, withRouteErrorCodes } from "./openapi-errors.js";
import { describeFileOperations } from "./openapi-files.js";

const TAGS = [
  {
    name: "Account",
    description:
      "The seller's profile that invoices print: legal name, address, tax id, payment instructions, logo, paper, default terms.",
  },
  { name: "Customers", description: "The companies you bill. Emits `customer.created`." },
  { name: "Contracts", description: "Contracts and their agreements. Emits `contract.created`." },
  { name: "Pricing", description: "A contract's pricing program: versioned rules that price its usage and fees." },
  { name: "Credits", description: "Prepaid and promotional credit on a contract, burned by its usage as it is rated." },
  { name: "Usage", description: "Usage events: rated as they arrive, onto the month's draft invoice." },
  {
    name: "Invoices",
    description:
      "Draft invoices kept up to date by usage; finalize, pay and void; the PDF and the usage statement. Payments, credit notes, void and reissue, email delivery and the hosted page. Emits `invoice.issued`, `invoice.paid`, `invoice.voided`, `invoice.payment_recorded` and `credit_note.created` to the endpoints that name them.",
  },
  { name: "Reports", description: "Figures over the company's invoices: receivables aged by days past due." },
  { name: "Webhook endpoints", description: "Where the service sends its signed events (see `webhooks`)." },
  { name: "Webhooks", description: "What the service POSTs to your endpoints, signed with the endpoint's secret." },
];

/** The options of @fastify/swagger: the document's head, and how the routes' zod schemas become it. */
export function openapiOptions(publicUrl: string): FastifyDynamicSwaggerOptions {
  const namedSchemas = createJsonSchemaTransformObject({}); // the ids of zod's global registry (`.meta({ id })`)
  return {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Usage-based billing API",
        version: "1.0",
        description:
          "Usage events, contracts, pricing programs, invoices, customers and webhook endpoints. Every operation needs an API key; every error is `Error` (`{ error, code, details? }`), and each response lists the codes it can carry (its `code` enum). A method a path does not take answers 405 `method_not_allowed` with an `Allow` header; a path the API does not have, 404 `not_found`. Decimals (`format: decimal`) are JSON numbers whose digits are exact: read them with a decimal-aware parser.",
        license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
        // Whoever runs this service: its reference page, at its own public URL.
        contact: { name: "Billing API reference", url: `${publicUrl.replace(/\/+$/, "")}/docs` },
      },
      servers: [{ url: publicUrl, description: "This service (BILLING_PUBLIC_URL)" }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer", description: "API key as a bearer token" },
          apiKeyHeader: {
            type: "apiKey",
            in: "header",
            name: "X-Api-Key",
            description: "API key in a header of its own",
          },
        },
      },
      security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    },
    transform: withRouteErrorCodes(jsonSchemaTransform),
    transformObject: (documents) => {
      const document = namedSchemas(documents);
      describeFileOperations(document);
      describeCommonErrors(document);
      describeOptionalBodies(document);
      Object.assign(document, { webhooks: WEBHOOKS });
      return withoutUnusedSchemas(document);
    },
  };
}

type JsonSchema = { type?: unknown; anyOf?: JsonSchema[] };
type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> } };

/**
 * A body that may be left out (a route's `.nullish()` body: payInvoice's) is documented as not required, with
 * its object schema; @fastify/swagger marks every body required and shows it as "object or null".
 */
function describeOptionalBodies(document: object): void {
  for (const item of Object.values((document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {})) {
    for (const operation of Object.values(item)) {
      const media = operation.requestBody?.content?.["application/json"];
      const branches = media?.schema?.anyOf;
      const object = branches?.filter((branch) => branch.type !== "null");
      if (!media || !branches || object?.length !== 1 || branches.length !== 2) continue;
      media.schema = object[0];
      operation.requestBody!.required = false;
    }
  }
}

const schemaRef = (schema: z.ZodType) => ({ $ref: `#/components/schemas/${z.globalRegistry.get(schema)!.id}` });

/** The headers of every delivery (sign-payload.ts; docs/webhooks.md, "What arrives"). */
const DELIVERY_HEADERS = [
  {
    name: "Service-Signature",
    description:
      "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">`, keyed with the endpoint's secret as text (Stripe's scheme)",
    pattern: "^t=\\d+,v1=[0-9a-f]{64}$",
  },
  {
    name: "Service-Event-Id",
    description: "The event's id, as `id` in the body: the idempotency key",
    pattern: "^evt_[0-9a-f]{32}$",
  },
  { name: "Service-Event-Type", description: "The event's type, as `type` in the body" },
  { name: "Webhook-Id", description: "Standard Webhooks: the event's id" },
  {
    name: "Webhook-Timestamp",
    description: "Standard Webhooks: the time of signing, in Unix seconds",
    pattern: "^\\d+$",
  },
  {
    name: "Webhook-Signature",
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, keyed with the base64-decoded bytes after `whsec_`',
    pattern: "^v1,[A-Za-z0-9+/]+=*$",
  },
].map(({ name, description, pattern }) => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string", ...(pattern ? { pattern } : {}) },
}));

const webhook = (operationId: string, summary: string, schema: z.ZodType) => ({
  post: {
    operationId,
    summary,
    description:
      "Sent to every enabled endpoint subscribed to the event's type, at least once and perhaps out of order (dedupe on the event id). Verify the signature on the raw body before parsing it.",
    tags: ["Webhooks"],
    security: [], // the receiver checks the signature headers, not an API key
    parameters: DELIVERY_HEADERS,
    requestBody: { required: true, content: { "application/json": { schema: schemaRef(schema) } } },
    responses: {
      "2XX": { description: "Received: answer any 2xx within 10 seconds; the body is ignored" },
      "4XX": {
        description:
          "Not received: retried after 1 min, 5 min, 30 min, 2 h, 6 h, 12 h and 24 h, then the delivery is failed",
      },
      "5XX": { description: "Not received: retried as a 4xx is (so is a timeout, a redirect or a refused connection)" },
    },
  },
});

/** The document's `webhooks` (OpenAPI 3.1): what the service POSTs to the endpoints (docs/webhooks.md). */
const WEBHOOKS = {
  "customer.created": webhook("receiveCustomerCreatedEvent", "A customer was created", customerCreatedEventSchema),
  "contract.created": webhook("receiveContractCreatedEvent", "A contract was created", contractCreatedEventSchema),
  "invoice.issued": webhook("receiveInvoiceIssuedEvent", "An invoice was issued (opt-in)", invoiceIssuedEventSchema),
  "invoice.paid": webhook("receiveInvoicePaidEvent", "An invoice was paid (opt-in)", invoicePaidEventSchema),
  "invoice.voided": webhook("receiveInvoiceVoidedEvent", "An invoice was voided (opt-in)", invoiceVoidedEventSchema),
  "invoice.payment_recorded": webhook(
    "receiveInvoicePaymentRecordedEvent",
    "A payment was recorded on an invoice (opt-in)",
    paymentRecordedEventSchema,
  ),
  "credit_note.created": webhook(
    "receiveCreditNoteCreatedEvent",
    "A credit note was issued on an invoice (opt-in)",
    creditNoteCreatedEventSchema,
  ),
};

/**
 * Keeps the named schemas that the operations and webhooks reach. The zod registry names every schema twice,
 * once as the service reads it (`ContractInput`) and once as it answers it (`Contract`), and holds whatever
 * else has an id; the document lists only what it uses.
 */
function withoutUnusedSchemas<T extends object>(document: T): T {
  const doc = document as { components?: { schemas?: Record<string, unknown> } };
  const schemas = doc.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      const name =
        key === "$ref" && typeof value === "string" ? /^#\/components\/schemas\/(.+)$/.exec(value)?.[1] : undefined;
      if (name !== undefined && !used.has(name)) {
        used.add(name);
        visit(schemas[name]);
      } else {
        visit(value);
      }
    }
  };
  const { components, ...rest } = doc;
  visit(rest);
  visit({ ...components, schemas: undefined });
  if (doc.components) {
    doc.components.schemas = Object.fromEntries(
      Object.entries(schemas)
        .filter(([name]) => used.has(name))
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  }
  return document;
}
