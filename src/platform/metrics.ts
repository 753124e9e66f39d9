import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** One registry per app instance, so that tests can build several apps in one process. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registry.registerMetric(usageDuplicates);
  registry.registerMetric(usageDuplicatesDiffering);
  const httpRequests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests answered, by route and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency",
    labelNames: ["method", "route"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const authThrottled = new Counter({
    name: "billing_auth_throttled_total",
    help: "Authentication attempts refused with 429 because the client address failed too often (BILLING_AUTH_FAILURES), by surface",
    labelNames: ["surface"] as const,
    registers: [registry],
  });
  return { registry, httpRequests, httpDuration, authThrottled };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Usage events answered `duplicate: true`, and those of them whose copy differed from the stored event
 * (`differs: true`). Counted by ingestion itself, which has no handle on an app's metrics: process-wide,
 * shown by every registry of the process (one app per process outside tests).
 */
const usageDuplicates = new Counter({
  name: "billing_usage_duplicates_total",
  help: "Usage events answered as duplicates (event_id stored already, or earlier in the same batch)",
  registers: [],
});
const usageDuplicatesDiffering = new Counter({
  name: "billing_usage_duplicates_differing_total",
  help: "Duplicate usage events whose copy differed from the stored event (answered differs: true)",
  registers: [],
});

export function countUsageDuplicates(duplicates: number, differing: number): void {
  if (duplicates > 0) usageDuplicates.inc(duplicates);
  if (differing > 0) usageDuplicatesDiffering.inc(differing);
}
