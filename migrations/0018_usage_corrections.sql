-- Corrections of usage in an open period (docs/api.md, "Voiding a usage event") and re-rating.
--
-- 1. What the sender sent: `applied_rate` is the rate an event was billed at, which is its rule's own rate
--    when the event named none. Re-rating an event under another program must know which it was: an event that
--    named a rate keeps it, one that did not takes the new rule's. `sent_rate` is the rate the event named,
--    NULL when it named none. Events stored before this column existed: an applied rate other than the rule's
--    own rate at the event's program version was sent; one equal to it is taken as not sent (the two cannot
--    be told apart afterwards, and they price the same until the rule's rate changes).
ALTER TABLE usage_events ADD COLUMN sent_rate numeric;
UPDATE usage_events e
   SET sent_rate = e.applied_rate
  FROM pricing_program_versions v
 WHERE e.applied_rate IS NOT NULL AND e.fee_amount IS NULL
   AND v.company_id = e.company_id AND v.contract_id = e.contract_id AND v.version = e.pricing_version
   AND e.applied_rate IS DISTINCT FROM (SELECT (r->>'rate')::numeric FROM jsonb_array_elements(v.rules) AS r
                                         WHERE r->>'id' = e.rule_id LIMIT 1);

-- 2. A voided event stays stored, with who voided it, when and why; it no longer counts on its line (the
--    line is priced again without it) and keeps the rated_amount it had when it was voided.
ALTER TABLE usage_events DROP CONSTRAINT usage_events_status_check;
ALTER TABLE usage_events ADD CONSTRAINT usage_events_status_check CHECK (status IN ('accepted', 'rated', 'voided'));
ALTER TABLE usage_events ADD COLUMN voided_at timestamptz, ADD COLUMN void_reason text;
ALTER TABLE usage_events ADD CONSTRAINT usage_events_voided_check CHECK ((status = 'voided') = (voided_at IS NOT NULL));

-- 3. The ingest function takes the sent rates (a new last argument, with a default so that a process of the
--    previous release calling the old arguments still resolves to it during a rolling upgrade). The new
--    definition is in migrations/functions/billing_ingest_usage_lines.sql.
DROP FUNCTION IF EXISTS billing_ingest_usage_lines(
  uuid, timestamptz, text[], integer[], date[], date[], integer[], text[], text[], text[], text[], text[], numeric[],
  numeric[], numeric[], text[], integer[], numeric[], numeric[], text[], timestamptz[], numeric[], text[], text[], text[]);
