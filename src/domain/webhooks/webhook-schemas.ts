import { z } from "zod";
import { EVENT_TYPES } from "./outbox.js";

const eventType = z.enum(EVENT_TYPES);

export const createEndpointInput = z
  .object({
    url: z.string().min(1).max(2048).describe("HTTPS URL resolving to a public address"),
    events: z.array(eventType).min(1).max(EVENT_TYPES.length).optional().describe("Event types to receive; all when left out"),
    description: z.string().trim().max(500).optional(),
  })
  .strict();

export const updateEndpointInput = z
  .object({
    url: z.string().min(1).max(2048).optional(),
    events: z.array(eventType).min(1).max(EVENT_TYPES.length).optional(),
    description: z.string().trim().max(500).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const testEventInput = z.object({ type: eventType }).strict();

export const endpointSchema = z.object({
  object: z.literal("webhook_endpoint"),
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(eventType),
  status: z.enum(["enabled", "disabled"]),
  created_at: z.string(),
  secret: z.string().optional().describe("Only on create, rotate-secret and update"),
});
export type Endpoint = z.infer<typeof endpointSchema>;

export const deliverySchema = z.object({
  object: z.literal("webhook_delivery"),
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string(),
  event_type: eventType,
  status: z.enum(["pending", "succeeded", "failed"]),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  created_at: z.string(),
  test: z.boolean(),
  payload: z.record(z.string(), z.unknown()).describe("The exact event body sent"),
});
export type Delivery = z.infer<typeof deliverySchema>;

export const testResultSchema = z.object({
  object: z.literal("webhook_test"),
  id: z.string().describe("The delivery that carried the test event"),
  event_id: z.string(),
  status: z.enum(["succeeded", "failed"]),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
});
