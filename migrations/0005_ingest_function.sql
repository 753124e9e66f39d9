-- Usage ingestion in one round trip (issue: performance). This migration created the first ingest function,
-- billing_ingest_usage (replaced in 0009, dropped in 0012), and its two helpers, whose definitions moved:

-- billing_round_half_even: defined by a function file until 0013 dropped it (invoices round in code).

-- billing_fee_unit_price: defined by a function file until 0013 dropped it (invoices round in code).
