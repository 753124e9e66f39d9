import type { CompanyScope } from "../../db/company-scope.js";
import type { Clock } from "../kernel/clock.js";
import { newEventId } from "../kernel/ids.js";
import { insertEvent } from "./event-repository.js";
import { insertDeliveriesForEvent } from "./webhook-repository.js";
import { stringifyJson } from "../../platform/exact-json.js";

/**
 * Every event type an endpoint may subscribe to (docs/webhooks.md, "Event types"). `invoice.payment_recorded`
 * and `credit_note.created` are recorded by the payments and credit notes of an invoice.
 */
export const EVENT_TYPES = [
  "customer.created",
  "contract.created",
  "invoice.issued",
  "invoice.paid",
  "invoice.voided",
  "invoice.payment_recorded",
  "credit_note.created",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What an endpoint created without `events` subscribes to: the two types there were before invoice events
 * existed, so that such an endpoint receives what it always did; invoice and credit note events are opt-in.
 * The stored `events` of an endpoint is the explicit list, so an endpoint stored earlier keeps its types.
 */
export const DEFAULT_EVENT_TYPES = ["customer.created", "contract.created"] as const satisfies readonly EventType[];

export interface EventEnvelope {
  id: string;
  object: "event";
  type: EventType;
  created_at: string;
  test: boolean;
  data: { object: unknown };
}

/** Builds the envelope receivers get (docs/webhooks.md, "What arrives"). */
export function buildEnvelope(type: EventType, object: unknown, createdAt: Date, test = false): EventEnvelope {
  return { id: newEventId(), object: "event", type, created_at: createdAt.toISOString(), test, data: { object } };
}

/**
 * Records an event and its deliveries in the caller's transaction (transactional outbox, docs/decisions.md,
 * "Webhooks"): they commit with the resource that caused them, or not at all. The body is serialised once,
 * here, so that every attempt and resend sends the same bytes.
 */
export async function recordEvent(
  tx: CompanyScope,
  clock: Clock,
  type: EventType,
  object: unknown,
): Promise<EventEnvelope> {
  const envelope = buildEnvelope(type, object, clock.now());
  const body = stringifyJson(envelope);
  const createdAt = new Date(envelope.created_at);
  await insertEvent(tx, { company_id: tx.companyId, id: envelope.id, type, body, created_at: createdAt });
  // Its deliveries too, one per subscribed endpoint: what the workers send is decided here, once.
  await insertDeliveriesForEvent(tx, { eventId: envelope.id, type, body, createdAt });
  return envelope;
}
