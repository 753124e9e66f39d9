import { z } from "zod";
import { creditNoteSchema, paymentSchema } from "../invoices/collections/collection-schemas.js";
import { contractSchema } from "../contracts/contract-schemas.js";
import { customerSchema } from "../customers/customer-schemas.js";
import { invoiceWithLinesSchema } from "../invoices/invoice-schemas.js";
import { instantText, urlText } from "../kernel/text-formats.js";
import { EVENT_TYPES, type EventType } from "./outbox.js";

const eventType = z.enum(EVENT_TYPES);

export const createEndpointInput = z
  .object({
    url: z.string().min(1).max(2048).meta({ format: "uri" }).describe("HTTPS URL resolving to a public address"),
    events: z
      .array(eventType)
      .min(1)
      .max(EVENT_TYPES.length)
      .optional()
      .describe(
        "Event types to receive. Left out: customer.created and contract.created; invoice events are opt-in (name them here)",
      ),
    description: z.string().trim().max(500).optional(),
  })
  .strict();

export const updateEndpointInput = z
  .object({
    url: z.string().min(1).max(2048).meta({ format: "uri" }).optional(),
    events: z.array(eventType).min(1).max(EVENT_TYPES.length).optional(),
    description: z.string().trim().max(500).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const testEventInput = z.object({ type: eventType }).strict();

export const endpointSchema = z
  .object({
    object: z.literal("webhook_endpoint"),
    id: z.string(),
    url: urlText(),
    description: z.string().nullable(),
    events: z.array(eventType),
    status: z.enum(["enabled", "disabled"]),
    created_at: instantText(),
    secret: z.string().optional().describe("Only on create, rotate-secret and update"),
  })
  .meta({ id: "WebhookEndpoint" });
export type Endpoint = z.infer<typeof endpointSchema>;

export const deletedEndpointSchema = z
  .object({ object: z.literal("webhook_endpoint"), id: z.string(), deleted: z.literal(true) })
  .meta({ id: "DeletedWebhookEndpoint" });

export const deliverySchema = z
  .object({
    object: z.literal("webhook_delivery"),
    id: z.string(),
    endpoint_id: z.string(),
    event_id: z.string(),
    event_type: eventType,
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: instantText().nullable(),
    delivered_at: instantText().nullable(),
    created_at: instantText(),
    test: z.boolean(),
    payload: z.record(z.string(), z.unknown()).describe("The exact event body sent"),
  })
  .meta({ id: "WebhookDelivery" });
export type Delivery = z.infer<typeof deliverySchema>;

export const testResultSchema = z
  .object({
    object: z.literal("webhook_test"),
    id: z.string().describe("The delivery that carried the test event"),
    event_id: z.string(),
    status: z.enum(["succeeded", "failed"]),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: "WebhookTestResult" });

/**
 * The body of a webhook delivery (docs/webhooks.md, "What arrives"; built by buildEnvelope in outbox.ts):
 * for the OpenAPI document's `webhooks`.
 */
const eventSchema = (type: EventType, object: z.ZodType, id: string) =>
  z
    .object({
      id: z.string().describe("`evt_` and 32 hex digits: the idempotency key, the same on every retry and resend"),
      object: z.literal("event"),
      type: z.literal(type),
      created_at: instantText(),
      test: z.boolean().describe("true for an event sent by the test operation, with sample data"),
      data: z.object({ object: object.describe("The resource exactly as the API answers it") }),
    })
    .meta({ id });

export const customerCreatedEventSchema = eventSchema("customer.created", customerSchema, "CustomerCreatedEvent");
export const contractCreatedEventSchema = eventSchema("contract.created", contractSchema, "ContractCreatedEvent");
export const invoiceIssuedEventSchema = eventSchema("invoice.issued", invoiceWithLinesSchema, "InvoiceIssuedEvent");
export const invoicePaidEventSchema = eventSchema("invoice.paid", invoiceWithLinesSchema, "InvoicePaidEvent");
export const invoiceVoidedEventSchema = eventSchema("invoice.voided", invoiceWithLinesSchema, "InvoiceVoidedEvent");
export const paymentRecordedEventSchema = eventSchema(
  "invoice.payment_recorded",
  paymentSchema,
  "InvoicePaymentRecordedEvent",
);
export const creditNoteCreatedEventSchema = eventSchema(
  "credit_note.created",
  creditNoteSchema,
  "CreditNoteCreatedEvent",
);
