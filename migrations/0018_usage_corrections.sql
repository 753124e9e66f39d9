-- Corrections of usage in an open period (docs/api.md, "Voiding a usage event"), re-rating, and pricing changes
-- scheduled for a date (docs/api.md, "Scheduled changes").
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

-- 3. A program version is in force from a day: `applies_from`. A contract's program is a timeline of segments,
--    one per day a version was dated for; on a day, the version in force is the highest-numbered version of the
--    latest segment that has begun (every change writes a version into each segment from its date on, so later
--    segments always hold higher numbers). `effective_date` stays the date shown: a dated change's date, or
--    for a change made without one, the day it was made. Versions written before scheduled changes existed all
--    applied to every event rated after them, whatever its timestamp: they become one segment, from the
--    contract's start (or its first version's date, if earlier).
ALTER TABLE pricing_program_versions ADD COLUMN applies_from date;
UPDATE pricing_program_versions v
   SET applies_from = (SELECT LEAST(c.start_date, min(f.effective_date))
                         FROM contracts c JOIN pricing_program_versions f
                           ON f.company_id = c.company_id AND f.contract_id = c.id
                        WHERE c.company_id = v.company_id AND c.id = v.contract_id
                        GROUP BY c.start_date);
ALTER TABLE pricing_program_versions ALTER COLUMN applies_from SET NOT NULL;
CREATE INDEX pricing_program_versions_segments_idx
  ON pricing_program_versions (company_id, contract_id, applies_from, version DESC);

-- 4. The ingest function takes the sent rates (a new last argument, with a default so that a process of the
--    previous release calling the old arguments still resolves to it during a rolling upgrade), and each
--    pair's program head (the contract's newest version when its events were judged: an event is priced by
--    the version in force on its day, which need not be the newest). The new
--    definition is in migrations/functions/billing_ingest_usage_lines.sql.
DROP FUNCTION IF EXISTS billing_ingest_usage_lines(
  uuid, timestamptz, text[], integer[], date[], date[], integer[], text[], text[], text[], text[], text[], numeric[],
  numeric[], numeric[], text[], integer[], numeric[], numeric[], text[], timestamptz[], numeric[], text[], text[], text[]);
