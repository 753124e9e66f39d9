import type { Database } from "../../db/database.js";
import type { OutboundHttp } from "../../platform/outbound-http.js";
import type { Clock } from "../kernel/clock.js";
import { createDeliveryEngine, type WebhookSettings } from "./delivery-engine.js";
import { createWebhookDeliveries } from "./webhook-deliveries.js";
import { createWebhookEndpoints } from "./webhook-endpoints.js";

/**
 * Webhooks (`services.webhooks`), one job per file: a company's endpoints (webhook-endpoints), its deliveries
 * and test events (webhook-deliveries), and the engine that sends them (delivery-engine; the worker's
 * `deliverDue`). Events and their deliveries are written by outbox.ts, in the transaction that caused them.
 */
export function createWebhookService(deps: {
  db: Database;
  clock: Clock;
  http: OutboundHttp;
  settings: WebhookSettings;
}) {
  const engine = createDeliveryEngine(deps);
  return {
    ...createWebhookEndpoints({ ...deps, allowPrivate: deps.settings.allowPrivate }),
    ...createWebhookDeliveries({ ...deps, engine }),
    deliverDue: engine.deliverDue,
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
