import type { CompanyScope } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import type { OutboundHttp } from "../../platform/outbound-http.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError } from "../kernel/errors.js";
import { maxAttempts, nextAttemptAt } from "./delivery-schedule.js";
import { deliveryHeaders } from "./sign-payload.js";
import * as repo from "./webhook-repository.js";

export interface WebhookSettings {
  retryScheduleMs: number[];
  timeoutMs: number;
  allowPrivate: boolean;
  /** How long a claimed delivery is leased to its worker; default timeout*3+30s. Must exceed timeoutMs. */
  leaseMs?: number | undefined;
}

/**
 * Sending deliveries (docs/webhooks.md, "Delivery rules"): the worker's due deliveries, claimed and leased,
 * retried on the schedule; and a resend's or a test's one attempt now.
 */
export function createDeliveryEngine({
  db,
  clock,
  http,
  settings,
}: {
  db: Database;
  clock: Clock;
  http: OutboundHttp;
  settings: WebhookSettings;
}) {
  /** One attempt: sign with the endpoint's current secret, POST, classify (docs/webhooks.md, "Delivery rules"). */
  async function attempt(
    delivery: { event_id: string; event_type: string; payload: string },
    endpoint: { url: string; secret: string },
  ) {
    const headers = deliveryHeaders({
      secret: endpoint.secret,
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      body: delivery.payload,
      timestamp: Math.floor(clock.now().getTime() / 1000),
    });
    const result = await http.post(endpoint.url, delivery.payload, headers, { timeoutMs: settings.timeoutMs });
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const error = ok ? null : (result.error ?? `receiver answered ${result.status}`);
    return { ok, statusCode: result.status, error };
  }

  return {
    /** A resend or test: one attempt now, recorded; no automatic retries after it. */
    async manualAttempt(
      scope: CompanyScope,
      deliveryId: string,
      endpoint: repo.EndpointRow,
    ): Promise<repo.DeliveryRow> {
      const started = await repo.beginManualAttempt(scope, deliveryId);
      if (!started) throw new NotFoundError("webhook_delivery");
      const outcome = await attempt(started, endpoint);
      await repo.recordAttempt(
        db,
        { companyId: scope.companyId, id: deliveryId, attempts: started.attempts },
        {
          status: outcome.ok ? "succeeded" : "failed",
          statusCode: outcome.statusCode,
          error: outcome.error,
          nextAttemptAt: null,
          deliveredAt: outcome.ok ? clock.now() : null,
        },
      );
      return (await repo.findDelivery(scope, deliveryId))!;
    },

    /**
     * The worker's step: claim due deliveries (leased), send them, record each outcome. Returns how many
     * were attempted. `limit` bounds the work in flight; `perEndpoint` bounds what one receiver can hold up.
     */
    async deliverDue(options: { limit: number; perEndpoint: number }): Promise<number> {
      const now = clock.now();
      // A lease longer than any attempt can take, so that a live worker never loses its rows. It is renewed
      // when each attempt starts: a claimed row may wait behind slower attempts to the same endpoint.
      const leaseMs = settings.leaseMs ?? settings.timeoutMs * 3 + 30_000;
      const claimed = await repo.claimDueDeliveries(db, now, new Date(now.getTime() + leaseMs), options.limit);
      const byEndpoint = new Map<string, repo.ClaimedDelivery[]>();
      for (const d of claimed) byEndpoint.set(d.endpoint_id, [...(byEndpoint.get(d.endpoint_id) ?? []), d]);
      const attempts = maxAttempts(settings.retryScheduleMs);
      await Promise.all(
        [...byEndpoint.values()].map(async (queue) => {
          const lanes = Array.from({ length: Math.min(options.perEndpoint, queue.length) }, async () => {
            for (let d = queue.shift(); d; d = queue.shift()) {
              const key = { companyId: d.company_id, id: d.id, attempts: d.attempts };
              // Sent only if still ours, to the endpoint as it is now (secret, URL, enabled).
              const endpoint = await repo.startClaimedAttempt(db, key, new Date(clock.now().getTime() + leaseMs));
              if (!endpoint) continue;
              const outcome = await attempt(d, endpoint);
              const finishedAt = clock.now();
              const retryAt = outcome.ok
                ? null
                : d.attempts >= attempts
                  ? null
                  : nextAttemptAt(d.attempts, settings.retryScheduleMs, finishedAt);
              await repo.recordAttempt(db, key, {
                status: outcome.ok ? "succeeded" : retryAt ? "pending" : "failed",
                statusCode: outcome.statusCode,
                error: outcome.error,
                nextAttemptAt: retryAt,
                deliveredAt: outcome.ok ? finishedAt : null,
              });
            }
          });
          await Promise.all(lanes);
        }),
      );
      return claimed.length;
    },
  };
}

export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;
