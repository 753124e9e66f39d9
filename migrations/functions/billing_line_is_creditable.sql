-- Whether credits may pay an invoice line: usage and pre-calculated fees, the company's own charges, but a
-- pass-through rule's (whose line keys start 'pass|'). The SQL twin of isCreditable in
-- src/domain/invoices/invoice-lines.ts, which is where the rule and the key's shape live; billing verify's check
-- that no invoice is credited beyond what credits may pay calls it.
CREATE OR REPLACE FUNCTION billing_line_is_creditable(p_kind text, p_line_key text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT p_kind IN ('usage', 'fee') AND p_line_key NOT LIKE 'pass|%'
$$;
