-- Usage ingestion in one round trip (issue: performance). This migration created the first ingest function,
-- billing_ingest_usage (replaced in 0009, dropped in 0012), and its two helpers, whose definitions moved:

-- billing_round_half_even: its definition lives in migrations/functions/billing_round_half_even.sql.

-- billing_fee_unit_price: its definition lives in migrations/functions/billing_fee_unit_price.sql.
