import type { Tenancy } from "../kernel/tenancy.js";
import type { IngestSettings } from "./batch-writer.js";
import type { RatingContextCache } from "../contracts/rating-context-cache.js";
import type { LineBook } from "../invoices/line-book.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError, ValidationError } from "../kernel/errors.js";
import { toJsonDecimal } from "../kernel/money.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { createUsageIngestion } from "./ingest-usage.js";
import * as repo from "./usage-read-repository.js";
import type { UsageEventRow } from "./usage-repository.js";
import { createPricingPreview } from "./pricing-preview.js";
import { createVoidUsageEvent } from "./void-event.js";
import type { UsageEvent } from "./usage-schemas.js";

function presentUsageEvent(row: UsageEventRow): UsageEvent {
  const event: UsageEvent = {
    object: "usage_event",
    id: row.id,
    contract: row.contract_id,
    metric: row.metric,
    quantity: toJsonDecimal(row.quantity),
    applied_rate: row.applied_rate === null ? null : toJsonDecimal(row.applied_rate),
    rated_amount: toJsonDecimal(row.rated_amount),
    rule_id: row.rule_id,
    pricing_version: row.pricing_version,
    invoice_number: row.invoice_number,
    service_period_start: row.service_period_start,
    service_period_end: row.service_period_end,
    timestamp: row.event_timestamp.toISOString(),
    ingested_at: row.ingested_at.toISOString(),
    status: row.status as UsageEvent["status"],
  };
  if (row.fee_amount !== null) event.fee_amount = toJsonDecimal(row.fee_amount);
  if (row.counterparty !== null) event.counterparty = row.counterparty;
  if (row.counterparty_side !== null) event.counterparty_side = row.counterparty_side;
  if (row.pair !== null) event.pair = row.pair;
  if (row.voided_at !== null) event.voided_at = row.voided_at.toISOString();
  if (row.void_reason !== null) event.void_reason = row.void_reason;
  return event;
}

export function createUsageService(deps: {
  clock: Clock;
  book: LineBook;
  contexts: RatingContextCache;
  ingest?: IngestSettings | undefined;
}) {
  const voidEvent = createVoidUsageEvent(deps);
  const get = async (tenant: Tenancy, eventId: string): Promise<UsageEvent> => {
    requireScope(tenant, "usage:read", "usage:write");
    const row = await repo.findUsageEvent(tenant.data, eventId);
    if (!row) throw new NotFoundError("usage_event");
    return presentUsageEvent(row);
  };
  return {
    submit: createUsageIngestion(deps),

    /** A program priced against a month's stored usage, beside the month's invoice (pricing-preview.ts). */
    previewPricing: createPricingPreview(deps),

    /** Voids an event of an open period (void-event.ts); answers the event as it is then. */
    async void(tenant: Tenancy, eventId: string, reason: string | null): Promise<UsageEvent> {
      await voidEvent(tenant, eventId, reason);
      return get(tenant, eventId);
    },

    async list(tenant: Tenancy, filter: repo.UsageFilter, page: PageRequest): Promise<Page<UsageEvent>> {
      requireScope(tenant, "usage:read", "usage:write");
      let afterSeq: string | undefined;
      if (page.startingAfter !== undefined) {
        afterSeq = (await repo.findUsageEvent(tenant.data, page.startingAfter))?.seq;
        if (afterSeq === undefined)
          throw new ValidationError("starting_after does not name a usage event of this company", "invalid_cursor");
      }
      const rows = await repo.listUsageEvents(tenant.data, filter, afterSeq, page.limit);
      const result = toPage(rows, page.limit);
      return { items: result.items.map(presentUsageEvent), hasMore: result.hasMore };
    },

    get,

    /**
     * Events per UTC day of their timestamp over the last `days` days up to today by the service's clock
     * (dashboard overview chart), oldest first, a zero for every day without events.
     */
    async dailyEventCounts(tenant: Tenancy, days: number): Promise<{ date: string; events: number }[]> {
      requireScope(tenant, "usage:read", "usage:write");
      const span = Math.min(Math.max(Math.trunc(days) || 1, 1), 366);
      const now = deps.clock.now();
      const dayMs = 86_400_000;
      const tomorrow = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + dayMs;
      const first = tomorrow - span * dayMs;
      const rows = await repo.countUsageEventsPerDay(tenant.data, new Date(first), new Date(tomorrow));
      const counts = new Map(rows.map((r) => [r.day, Number(r.events)]));
      return Array.from({ length: span }, (_, i) => {
        const date = new Date(first + i * dayMs).toISOString().slice(0, 10);
        return { date, events: counts.get(date) ?? 0 };
      });
    },
  };
}
