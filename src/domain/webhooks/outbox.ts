import type { CompanyScope } from "../../db/company-scope.js";
import type { Clock } from "../kernel/clock.js";
import { newEventId } from "../kernel/ids.js";
import { insertEvent } from "./event-repository.js";
import { insertDeliveriesForEvent } from "./webhook-repository.js";
import { stringifyJson } from "../../platform/exact-json.js";

export const EVENT_TYPES = ["customer.created", "contract.created"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
