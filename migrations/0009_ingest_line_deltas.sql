-- Usage ingestion with the line deltas summed by the service (issue: performance; docs/performance.md step 8).
-- It replaced billing_ingest_usage (0005; dropped in 0012) with billing_ingest_usage_lines.

-- Only `billing verify` read usage events by invoice line (a full scan and hash aggregate serve it as well),
-- and every insert paid for keeping it.
DROP INDEX usage_events_invoice_idx;

-- billing_ingest_usage_lines: its definition lives in migrations/functions/billing_ingest_usage_lines.sql.
