import { forCompany } from "../../db/company-scope.js";
import { lookup } from "node:dns/promises";
import type { Database } from "../../db/database.js";
import type { OutboundHttp } from "../../platform/outbound-http.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError, ValidationError, ConflictError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { maxAttempts, nextAttemptAt } from "./delivery-schedule.js";
import { checkEndpointUrl, isPublicAddress } from "../../platform/address-policy.js";
import { buildEnvelope, EVENT_TYPES, type EventType } from "./outbox.js";
import { deliveryHeaders, generateSigningSecret } from "./sign-payload.js";
import * as repo from "./webhook-repository.js";
import type { Delivery, Endpoint } from "./webhook-schemas.js";
import { parseJsonExact, stringifyJson } from "../../platform/exact-json.js";

export interface WebhookSettings {
  retryScheduleMs: number[];
  timeoutMs: number;
  allowPrivate: boolean;
  /** How long a claimed delivery is leased to its worker; default timeout*3+30s. Must exceed timeoutMs. */
  leaseMs?: number | undefined;
}

/**
 * What lifts the refusal of a local or private URL, said where it is refused: in the API's error and beside the
 * dashboard's URL field (webhook-pages.ts), so that a developer with a receiver on their own machine learns the
 * way round it, and that it is not for production.
 */
export const ALLOW_PRIVATE_HINT =
  "For local development, whoever runs this billing service can allow http:// and private addresses by starting it with BILLING_WEBHOOK_ALLOW_PRIVATE=true (never in production: it lets the service send requests into its own network).";

/** Whether a refused URL's error names BILLING_WEBHOOK_ALLOW_PRIVATE: the URL was refused for being local only. */
export function refusedAsLocal(error: ValidationError): boolean {
  return error.code === "invalid_url" && error.message.endsWith(ALLOW_PRIVATE_HINT);
}

/** A refused endpoint URL: `message` for the API's error, `reason` beside the field; a local one says how to allow it. */
function invalidUrl(message: string, reason: string, local: boolean): ValidationError {
  return new ValidationError(local ? `${message}. ${ALLOW_PRIVATE_HINT}` : message, "invalid_url", [
    { path: "url", message: reason },
  ]);
}

/** The deliveries list shows this many, newest first (docs/webhooks.md, "Delivery rules"). */
const RECENT_DELIVERIES = 50;

function presentEndpoint(row: repo.EndpointRow, withSecret = false): Endpoint {
  const endpoint: Endpoint = {
    object: "webhook_endpoint",
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as EventType[],
    status: row.enabled ? "enabled" : "disabled",
    created_at: row.created_at.toISOString(),
  };
  if (withSecret) endpoint.secret = row.secret;
  return endpoint;
}

function presentDelivery(row: repo.DeliveryRow): Delivery {
  return {
    object: "webhook_delivery",
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type as EventType,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.status === "pending" && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    test: row.test,
    payload: parseJsonExact(row.payload) as Record<string, unknown>,
  };
}

/** Sample objects for test events (docs/webhooks.md, "Delivery rules": sample data, signed like real ones). */
function sampleObject(type: EventType, now: Date): unknown {
  const createdAt = now.toISOString();
  if (type === "customer.created") {
    return {
      object: "customer",
      id: "00000000-0000-4000-8000-000000000000",
      name: "Sample Customer Inc.",
      external_id: "sample-customer",
      email: "billing@sample.example",
      domain: "sample.example",
      country: "US",
      address: null,
      registration_number: null,
      payment_terms_days: 30,
      payment_terms: "Net 30",
      created_at: createdAt,
    };
  }
  return {
    object: "contract",
    id: "sample-customer-inc-test",
    customer_id: "00000000-0000-4000-8000-000000000000",
    customer_name: "Sample Customer Inc.",
    contract_number: "CN-000000",
    status: "active",
    start_date: createdAt.slice(0, 10),
    end_date: null,
    currency: "USD",
    billing_cadence: "monthly",
    metrics: ["domestic_wire", "international_wire"],
    pdf_url: "https://billing.example/v1/agreements/sample.pdf",
    sample: true,
    created_at: createdAt,
  };
}

export function createWebhookService({
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
  /** docs/decisions.md, "Webhooks": https only, and every address the host resolves to is public; checked again at each delivery. */
  async function checkUrl(text: string): Promise<string> {
    const verdict = checkEndpointUrl(text, { allowPrivate: settings.allowPrivate });
    if (!verdict.ok) throw invalidUrl(`url ${verdict.reason}`, verdict.reason, verdict.local);
    if (!settings.allowPrivate) {
      const host = verdict.url.hostname.replace(/^\[|\]$/g, "");
      let addresses: { address: string }[];
      try {
        addresses = await lookup(host, { all: true, verbatim: true });
      } catch {
        throw new ValidationError(`url host ${host} does not resolve`, "invalid_url", [
          { path: "url", message: "host does not resolve" },
        ]);
      }
      const refused = addresses.find((a) => !isPublicAddress(a.address));
      if (addresses.length === 0 || refused) {
        throw invalidUrl(
          `url host ${host} resolves to a non-public address`,
          "must resolve to public addresses only",
          addresses.length > 0,
        );
      }
    }
    return verdict.url.toString();
  }

  async function endpointOf(actor: Actor, id: string): Promise<repo.EndpointRow> {
    const row = isUuid(id) ? await repo.findEndpoint(forCompany(db, actor.companyId), id) : undefined;
    if (!row) throw new NotFoundError("webhook_endpoint");
    return row;
  }

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

  /** A resend or test: one attempt now, recorded; no automatic retries after it. */
  async function manualAttempt(
    companyId: string,
    deliveryId: string,
    endpoint: repo.EndpointRow,
  ): Promise<repo.DeliveryRow> {
    const started = await repo.beginManualAttempt(forCompany(db, companyId), deliveryId);
    if (!started) throw new NotFoundError("webhook_delivery");
    const outcome = await attempt(started, endpoint);
    await repo.recordAttempt(
      db,
      { companyId, id: deliveryId, attempts: started.attempts },
      {
        status: outcome.ok ? "succeeded" : "failed",
        statusCode: outcome.statusCode,
        error: outcome.error,
        nextAttemptAt: null,
        deliveredAt: outcome.ok ? clock.now() : null,
      },
    );
    return (await repo.findDelivery(forCompany(db, companyId), deliveryId))!;
  }

  return {
    async create(
      actor: Actor,
      input: { url: string; events?: EventType[] | undefined; description?: string | undefined },
    ): Promise<Endpoint> {
      requireScope(actor, "webhooks:write");
      const now = clock.now();
      const row: repo.EndpointRow = {
        company_id: actor.companyId,
        id: newId(),
        url: await checkUrl(input.url),
        description: input.description ?? null,
        events: [...new Set(input.events ?? EVENT_TYPES)],
        enabled: true,
        secret: generateSigningSecret(),
        created_at: now,
        updated_at: now,
      };
      await repo.insertEndpoint(forCompany(db, row.company_id), row);
      return presentEndpoint(row, true);
    },

    async list(actor: Actor): Promise<Endpoint[]> {
      requireScope(actor, "webhooks:read", "webhooks:write");
      return (await repo.listEndpoints(forCompany(db, actor.companyId))).map((row) => presentEndpoint(row));
    },

    async get(actor: Actor, id: string): Promise<Endpoint> {
      requireScope(actor, "webhooks:read", "webhooks:write");
      return presentEndpoint(await endpointOf(actor, id));
    },

    /** url, events, description, enabled; disabling stops pending retries (they end failed). */
    async update(
      actor: Actor,
      id: string,
      input: {
        url?: string | undefined;
        events?: EventType[] | undefined;
        description?: string | null | undefined;
        enabled?: boolean | undefined;
      },
    ): Promise<Endpoint> {
      requireScope(actor, "webhooks:write");
      const row = await endpointOf(actor, id);
      const next: repo.EndpointRow = {
        ...row,
        url: input.url !== undefined ? await checkUrl(input.url) : row.url,
        events: input.events !== undefined ? [...new Set(input.events)] : row.events,
        description: input.description !== undefined ? input.description : row.description,
        enabled: input.enabled ?? row.enabled,
        updated_at: clock.now(),
      };
      await db.transaction(async (tx) => {
        await repo.updateEndpoint(forCompany(tx, next.company_id), next);
        if (row.enabled && !next.enabled) await repo.stopPendingDeliveries(forCompany(tx, actor.companyId), row.id);
      });
      return presentEndpoint(next, true);
    },

    /** A new secret, effective at once: the old one signs nothing more (docs/webhooks.md, "Delivery rules"). */
    async rotateSecret(actor: Actor, id: string): Promise<Endpoint> {
      requireScope(actor, "webhooks:write");
      const row = await endpointOf(actor, id);
      const next = { ...row, secret: generateSigningSecret(), updated_at: clock.now() };
      await repo.updateEndpoint(forCompany(db, next.company_id), next);
      return presentEndpoint(next, true);
    },

    async remove(actor: Actor, id: string): Promise<{ object: "webhook_endpoint"; id: string; deleted: true }> {
      requireScope(actor, "webhooks:write");
      if (!isUuid(id) || !(await repo.deleteEndpoint(forCompany(db, actor.companyId), id)))
        throw new NotFoundError("webhook_endpoint");
      return { object: "webhook_endpoint", id, deleted: true };
    },

    /** Sends a signed test event (test: true, sample data) now, and records it as a delivery. */
    async sendTest(actor: Actor, id: string, type: EventType) {
      requireScope(actor, "webhooks:write");
      const endpoint = await endpointOf(actor, id);
      if (!endpoint.enabled) throw new ConflictError("The endpoint is disabled; enable it first", "endpoint_disabled");
      const now = clock.now();
      const envelope = buildEnvelope(type, sampleObject(type, now), now, true);
      const deliveryId = newId();
      await repo.insertDelivery(forCompany(db, actor.companyId), {
        company_id: actor.companyId,
        id: deliveryId,
        endpoint_id: endpoint.id,
        event_id: envelope.id,
        event_type: type,
        payload: stringifyJson(envelope),
        test: true,
        status: "pending",
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: null,
        delivered_at: null,
        created_at: now,
      });
      const delivery = await manualAttempt(actor.companyId, deliveryId, endpoint);
      return {
        object: "webhook_test" as const,
        id: delivery.id,
        event_id: delivery.event_id,
        status: delivery.status as "succeeded" | "failed",
        status_code: delivery.last_status_code,
        error: delivery.last_error,
      };
    },

    async recentDeliveries(actor: Actor, endpointId: string): Promise<Delivery[]> {
      requireScope(actor, "webhooks:read", "webhooks:write");
      const endpoint = await endpointOf(actor, endpointId);
      return (await repo.listRecentDeliveries(forCompany(db, actor.companyId), endpoint.id, RECENT_DELIVERIES)).map(
        presentDelivery,
      );
    },

    /** One delivery with its payload (dashboard delivery page), even when older than the recent list shows. */
    async getDelivery(actor: Actor, deliveryId: string): Promise<Delivery> {
      requireScope(actor, "webhooks:read", "webhooks:write");
      const row = isUuid(deliveryId) ? await repo.findDelivery(forCompany(db, actor.companyId), deliveryId) : undefined;
      if (!row) throw new NotFoundError("webhook_delivery");
      return presentDelivery(row);
    },

    /** The company's failing deliveries across endpoints (dashboard overview), newest first. */
    async failingDeliveries(actor: Actor, limit = 10): Promise<Delivery[]> {
      requireScope(actor, "webhooks:read", "webhooks:write");
      return (await repo.listFailingDeliveries(forCompany(db, actor.companyId), Math.min(Math.max(limit, 1), 100))).map(
        presentDelivery,
      );
    },

    /** Sends the same event again (same id and body), now, as one more attempt. */
    async resend(actor: Actor, deliveryId: string): Promise<Delivery> {
      requireScope(actor, "webhooks:write");
      const delivery = isUuid(deliveryId)
        ? await repo.findDelivery(forCompany(db, actor.companyId), deliveryId)
        : undefined;
      if (!delivery) throw new NotFoundError("webhook_delivery");
      const endpoint = (await repo.findEndpoint(forCompany(db, actor.companyId), delivery.endpoint_id))!;
      if (!endpoint.enabled) throw new ConflictError("The endpoint is disabled; enable it first", "endpoint_disabled");
      return presentDelivery(await manualAttempt(actor.companyId, delivery.id, endpoint));
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

export type WebhookService = ReturnType<typeof createWebhookService>;
