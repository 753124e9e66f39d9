import type { Tx } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { newEventId } from "../kernel/ids.js";
import { insertEvent } from "./event-repository.js";

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

/** Builds the envelope receivers get (spec section 6). */
export function buildEnvelope(type: EventType, object: unknown, createdAt: Date, test = false): EventEnvelope {
  return { id: newEventId(), object: "event", type, created_at: createdAt.toISOString(), test, data: { object } };
}

/**
 * Records an event in the caller's transaction (transactional outbox, decisions.md "Webhooks"):
 * it commits with the resource that caused it, or not at all. The body is serialised once, here,
 * so that every attempt and resend sends the same bytes.
 */
export async function recordEvent(tx: Tx, clock: Clock, companyId: string, type: EventType, object: unknown): Promise<EventEnvelope> {
  const envelope = buildEnvelope(type, object, clock.now());
  await insertEvent(tx, {
    company_id: companyId,
    id: envelope.id,
    type,
    body: JSON.stringify(envelope),
    created_at: new Date(envelope.created_at),
  });
  return envelope;
}
