-- Whether an invoice in this status is its contract's invoice for its period: every status but `void` (a void
-- invoice was replaced by its reissue, or is simply gone from the books). The one SQL home of the live-invoice
-- filter: the lookups of a period's invoice, the drafts' unique index's ON CONFLICT, ingestion's draft lookup
-- and billing verify all call it. A plain SQL function, which PostgreSQL inlines: a query that calls it still
-- matches the partial unique index of migration 0020, whose predicate is this one (and ON CONFLICT infers it).
-- What an invoice may do in each status is src/domain/invoices/invoice-states.ts's.
CREATE OR REPLACE FUNCTION billing_invoice_is_live(p_status text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT p_status <> 'void'
$$;
