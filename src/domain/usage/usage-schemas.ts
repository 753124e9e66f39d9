import { z } from "zod";
import { decimalInput, jsonDecimal } from "../kernel/decimal-schemas.js";
import { externalIdText } from "../kernel/ids.js";
import { CHARGE_DP } from "../kernel/money.js";
import { dateText, instantText } from "../kernel/text-formats.js";
import { instantInput } from "../kernel/calendar-date.js";
import { BILLING_RANGE_WORDS } from "../kernel/time-range.js";

const MAX_EVENTS_PER_REQUEST = 100;
/** A non-negative decimal given as a JSON number or a decimal string, with at most 12 fractional digits. */
const decimal = (what: string) => decimalInput(what, CHARGE_DP);

/** Limits shared with the fast path (ingest/parse.ts). */
export { ID_MAX, ID_PATTERN } from "../kernel/ids.js";
export const METRIC_MAX = 100;
export const SCOPE_MAX = 255;

const id = externalIdText;
const scope = z.string().trim().min(1).max(SCOPE_MAX).optional();
/** An ISO 8601 instant with a time zone in a billing month (kernel/time-range.ts; the fast path asks the same rule). */
const eventTimestamp = instantInput(true);

/** One usage event (docs/api.md, "Usage events"). Unknown fields are refused: a misspelt field must not bill silently. */
export const usageEventInput = z
  .object({
    external_contract_id: id.describe("The contract's external id"),
    event_id: id.describe("Unique per company: the idempotency key"),
    metric: z.string().min(1).max(METRIC_MAX).describe("Must be a metric of the contract"),
    quantity: decimal("quantity"),
    timestamp: eventTimestamp.describe(
      `ISO 8601 with seconds and a time zone (Z or ±hh:mm up to ±15:59), at most microseconds; decides the service period (UTC month), a billing month ${BILLING_RANGE_WORDS}`,
    ),
    fee_amount: decimal("fee_amount").optional().describe("Billed as is; overrides the contract rate"),
    applied_rate: decimal("applied_rate").optional().describe("Overrides the rule's rate or per-unit price"),
    counterparty: scope,
    counterparty_side: scope,
    pair: scope,
  })
  .strict();

export type UsageEventInput = z.output<typeof usageEventInput>;

/**
 * The request body. Events are checked one by one by the service (a bad event is rejected on its own,
 * docs/decisions.md, "Rating" 7), so here each is only required to be there; the document shows the event schema.
 */
export const submitUsageBody = z
  .object({
    events: z
      .array(
        z
          .unknown()
          .meta({ ...z.toJSONSchema(usageEventInput, { io: "input", unrepresentable: "any" }), $schema: undefined }),
      )
      .min(1)
      .max(MAX_EVENTS_PER_REQUEST)
      .describe(`1 to ${MAX_EVENTS_PER_REQUEST} usage events`),
  })
  .strict();

export const REJECTION_CODES = [
  "contract_not_found",
  "contract_not_active",
  "outside_contract_term",
  "unknown_metric",
  "invalid_event",
  "period_closed",
  "timestamp_in_future",
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

/** The answer to a submission, event by event; `SubmitUsageResult` in the OpenAPI document. */
export const submitResultSchema = z
  .object({
    accepted: z.number().int(),
    rejected: z.number().int(),
    events: z.array(
      z.object({
        event_id: z.string().nullable(),
        status: z.enum(["accepted", "rejected"]),
        duplicate: z
          .boolean()
          .optional()
          .describe("true when this event_id was already stored (or came earlier in the batch)"),
        differs: z
          .boolean()
          .optional()
          .describe(
            "true on a duplicate whose body differs from the stored event (absent otherwise): the stored event stands; a new event needs a new event_id",
          ),
        error: z.object({ code: z.enum(REJECTION_CODES), message: z.string() }).optional(),
      }),
    ),
  })
  .meta({ id: "SubmitUsageResult" });
export type SubmitResult = z.infer<typeof submitResultSchema>;

/** A usage event's status: `voided` once a void took it off its draft (it stays stored). */
export const USAGE_EVENT_STATUSES = ["accepted", "rated", "voided"] as const;

/** POST /v1/billing/usage/{event_id}/void: why, for the record (optional). */
export const voidUsageBody = z
  .object({
    reason: z.string().trim().min(1).max(500).optional().describe("Why the event is voided; kept with it"),
  })
  .strict();

export const usageEventSchema = z
  .object({
    object: z.literal("usage_event"),
    id: z.string(),
    contract: z.string(),
    metric: z.string(),
    quantity: jsonDecimal,
    fee_amount: jsonDecimal.optional(),
    applied_rate: jsonDecimal.nullable(),
    counterparty: z.string().optional(),
    counterparty_side: z.string().optional(),
    pair: z.string().optional(),
    rated_amount: jsonDecimal,
    rule_id: z.string().describe("The pricing rule that priced the event"),
    pricing_version: z.number().int().describe("The program version that priced the event"),
    invoice_number: z.string(),
    service_period_start: dateText(),
    service_period_end: dateText(),
    timestamp: instantText(),
    ingested_at: instantText(),
    status: z.enum(USAGE_EVENT_STATUSES),
    voided_at: instantText().optional().describe("When the event was voided (voided events only)"),
    void_reason: z.string().optional().describe("The reason given when it was voided, if any"),
  })
  .meta({ id: "UsageEvent" });
export type UsageEvent = z.infer<typeof usageEventSchema>;
