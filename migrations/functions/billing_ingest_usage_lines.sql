-- Usage ingestion in one round trip (issue: performance; docs/performance.md steps 8 and 14). The service rates
-- the events in code and sends them summed by invoice line, on three levels:
--   pairs   (contract, version, service period): one draft invoice each, found with one probe per pair;
--   lines   (pair, line key): the line's attributes and the sums of its events' quantities and charges;
--   events  the stored fields of each event and the index of its line; an event's metric and applied rate
--           are its line's (a line's key fixes both), and it takes its contract, version, period and invoice
--           from the line's pair.
-- The function stores the events and folds the lines into the draft invoices as one statement: row locks are
-- held for its run only, not across round trips. When every event is new, the lines are folded in as they
-- came. When the insert shows ids stored already (a retry, a replay, a concurrent request), the sums are taken
-- again over the events this call inserted, so that an event is never billed twice. Batches that touch a rule
-- with a monthly cap take the locking path in code instead (usage/ingest/write.ts): the cap's remainder depends on
-- what the locked invoice already holds.
--
-- Duplicates that differ from the stored event (docs/api.md "Usage events", `differs`): where that costs
-- nothing extra, the function also tells whether a duplicate's copy differs from the stored event. In a call
-- taken for a replay (its first and last ids stored already), each id is looked up before the insert instead
-- of by the insert's conflict check, and the stored row is compared on the way. Measured on one connection
-- with 400-event calls: replays and new events cost what they did without the comparison (within noise),
-- where looking the duplicates up after the insert cost a replay 20-30 % more of PostgreSQL's CPU, and a
-- separate query from the service more than doubled a replay's PostgreSQL CPU.
--
-- Array indexes are 1-based. Answers rows (outcome, contract_id, period_start, event_id):
--   'stale'     a contract not active at the program version its events were rated with: nothing was
--               written; rate again with fresh contracts;
--   'missing'   a (contract, period) without a draft invoice: nothing was written; create it and call again;
--   'stored'    with an event id: an event stored by this call, when some ids were stored already (those
--               not listed are duplicates); without one (a single row): every event was stored;
--   'compared'  without an event id (one row): this call compared every duplicate with its stored event;
--               those not listed below are identical. Without it, no duplicate of the call was compared;
--   'differs'   an event id: a duplicate whose copy differs from the stored event;
--   'recheck'   an event id: a duplicate this function did not judge (priced by another rule or program
--               version, or stored by a concurrent call meanwhile).
-- No row at all: every id was stored already, none was compared, and nothing changed.
CREATE OR REPLACE FUNCTION billing_ingest_usage_lines(
  p_company uuid, p_now timestamptz,
  p_pair_contracts text[], p_pair_versions integer[], p_pair_starts date[], p_pair_ends date[],
  p_line_pairs integer[], p_line_keys text[], p_line_kinds text[], p_line_rule_ids text[], p_line_metrics text[],
  p_line_descriptions text[], p_line_unit_prices numeric[], p_line_quantities numeric[], p_line_charges numeric[],
  p_ids text[], p_event_lines integer[], p_quantities numeric[], p_charges numeric[], p_rule_ids text[], p_timestamps timestamptz[],
  -- optional per event: an empty array stands for NULL throughout
  p_fees numeric[], p_counterparties text[], p_sides text[], p_pairs text[],
  -- the rate each event named (NULL: none, its rule's own rate applies); a call of the previous release sends none
  p_sent_rates numeric[] DEFAULT '{}',
  -- per pair: the contract's newest program version when its events were judged (NULL: the pair's version)
  p_pair_heads integer[] DEFAULT NULL
) RETURNS TABLE (outcome text, contract_id text, period_start date, event_id text)
LANGUAGE plpgsql
-- Plans are made once per connection, not per call, and see the arrays as parameters, which PL/pgSQL keeps
-- expanded: p_x[i] is then a direct access. A custom plan would get them as flat constants instead, where
-- p_line_keys[i] walks the array from its start (measured: 17 ms of a 1,000-event call in the insert).
SET plan_cache_mode = force_generic_plan
-- Every lookup here probes a handful of rows of pages that are in memory: a contract, a draft, a line, by
-- their keys. PostgreSQL's default random_page_cost (4, a spinning disk's) made the planner read a small table
-- whole rather than probe an index: with 200 drafts, the draft lookup became a sequential scan per pair (3.9 ms
-- of a 1,600-event call against 0.5 ms with the index; auto_explain), and the totals a scan of all lines per
-- invoice. 1.1 is the usual figure for data in memory or on SSD; it applies to this function's plans only.
SET random_page_cost = 1.1
AS $$
DECLARE
  v_count integer;
  v_invoices text[];    -- per pair: its draft's number (NULL: missing)
  v_closed boolean;     -- some pair's invoice is no longer a draft (step 2), or was issued since (step 4)
  v_stored text[];      -- ids this call inserted
  v_quantities numeric[] := p_line_quantities;
  v_charges numeric[] := p_line_charges;
  v_locked text[];      -- the drafts that get new charges, sorted
  v_new boolean[];      -- per event, when the ids were looked up before the insert: not stored yet
  v_differs text[];     -- duplicates whose copy differs from the stored event
  v_recheck text[];     -- duplicates left to the service to judge
BEGIN
  -- Lookups below are LATERAL ... LIMIT 1 on purpose: one index probe per distinct key, never a hash join
  -- that would read all of the company's contracts, invoices or events.

  -- 1. The events were rated against the contracts as they are now (the service caches contracts): each
  --    contract is active, its program's newest version is the one the service judged with, and it has no
  --    credits (a contract with credits is rated on the locking path: its credits burn under the drafts' locks).
  RETURN QUERY
    SELECT 'stale'::text, w.c, NULL::date, NULL::text
      FROM (SELECT DISTINCT c, version FROM unnest(p_pair_contracts, COALESCE(p_pair_heads, p_pair_versions)) AS u(c, version)) AS w
      LEFT JOIN LATERAL (SELECT k.current_version, k.status, k.has_credits FROM contracts k
                          WHERE k.company_id = p_company AND k.id = w.c LIMIT 1) AS k ON true
     WHERE k.status IS DISTINCT FROM 'active' OR k.current_version <> w.version OR k.has_credits;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  IF v_count > 0 THEN
    RETURN;
  END IF;

  -- 2. Every pair's draft, in pair order; nothing is locked yet.
  SELECT array_agg(i.number ORDER BY w.n), bool_or(i.status <> 'draft') INTO v_invoices, v_closed
    FROM unnest(p_pair_contracts, p_pair_starts) WITH ORDINALITY AS w(c, p, n)
    LEFT JOIN LATERAL (SELECT number, status FROM invoices i
                        WHERE i.company_id = p_company AND i.contract_id = w.c AND i.period_start = w.p
                          AND billing_invoice_is_live(i.status) LIMIT 1) AS i ON true;
  IF array_position(v_invoices, NULL) IS NOT NULL THEN
    -- A missing draft matters only for a new event (a stored duplicate needs none).
    RETURN QUERY
      SELECT DISTINCT 'missing'::text, p_pair_contracts[e.pair], p_pair_starts[e.pair], NULL::text
        FROM (SELECT u.id, p_line_pairs[u.line] AS pair FROM unnest(p_ids, p_event_lines) AS u(id, line)) AS e
        LEFT JOIN LATERAL (SELECT 1 AS found FROM usage_events s WHERE s.company_id = p_company AND s.id = e.id LIMIT 1) AS s ON true
       WHERE v_invoices[e.pair] IS NULL AND s.found IS NULL;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
      RETURN;
    END IF;
  END IF;

  -- 2b. A pair whose invoice has left draft (issued, paid or void) is closed: each of its new events is
  --     refused (period_closed), never moved to another invoice. Its stored events stay duplicates, as anywhere.
  IF v_closed THEN
    RETURN QUERY
      SELECT 'closed'::text, p_pair_contracts[e.pair], p_pair_starts[e.pair], e.id
        FROM (SELECT u.id, p_line_pairs[u.line] AS pair FROM unnest(p_ids, p_event_lines) AS u(id, line)) AS e
        JOIN LATERAL (SELECT 1 FROM invoices i
                       WHERE i.company_id = p_company AND i.number = v_invoices[e.pair] AND i.status <> 'draft') AS c ON true
        LEFT JOIN LATERAL (SELECT 1 AS found FROM usage_events s WHERE s.company_id = p_company AND s.id = e.id LIMIT 1) AS s ON true
       WHERE s.found IS NULL;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
      RETURN;
    END IF;
  END IF;

  -- 3. Store the events, in the order sent; ids stored already are skipped (docs/decisions.md, "Rating an event", rule 8).
  --    A call whose first and last ids are both stored already is taken for a replay: every id is looked up
  --    before the insert, one probe each in place of the insert's own conflict check, and a stored event is
  --    compared with its copy here on the way (3a). Any other call inserts at once, as before, and its
  --    duplicates are not compared here: an event new to the table never costs a look-up of its own.
  IF EXISTS (SELECT 1 FROM usage_events s WHERE s.company_id = p_company AND s.id = p_ids[1])
     AND EXISTS (SELECT 1 FROM usage_events s WHERE s.company_id = p_company AND s.id = p_ids[cardinality(p_ids)]) THEN
    -- 3a. A copy differs in contract, metric, quantity, timestamp (an instant), fee or scope fields, or, both
    --     billed at a rate by the same rule and program version, in that rate (the stored applied_rate is
    --     the rate used; p_line_unit_prices holds the copy's). Priced by another rule or version, only the
    --     service can tell whether the copy asked for the stored rate ('recheck'). Fees store no rate.
    SELECT array_agg(d.found IS NULL ORDER BY e.n), array_agg(e.id) FILTER (WHERE d.verdict = 'differs'),
           array_agg(e.id) FILTER (WHERE d.verdict = 'recheck')
      INTO v_new, v_differs, v_recheck
      FROM unnest(p_ids, p_event_lines, p_quantities, p_rule_ids, p_timestamps, p_fees, p_counterparties, p_sides, p_pairs)
             WITH ORDINALITY AS e(id, line, quantity, rule_id, ts, fee, counterparty, side, scope_pair, n)
      LEFT JOIN LATERAL (
        SELECT true AS found,
               CASE WHEN s.contract_id <> p_pair_contracts[p_line_pairs[e.line]] OR s.metric <> p_line_metrics[e.line]
                         OR s.quantity <> e.quantity OR s.event_timestamp <> e.ts OR s.fee_amount IS DISTINCT FROM e.fee
                         OR s.counterparty IS DISTINCT FROM e.counterparty OR s.counterparty_side IS DISTINCT FROM e.side
                         OR s.pair IS DISTINCT FROM e.scope_pair
                         OR (s.fee_amount IS NULL AND s.rule_id = e.rule_id AND s.pricing_version = p_pair_versions[p_line_pairs[e.line]]
                             AND s.applied_rate <> p_line_unit_prices[e.line])
                      THEN 'differs'
                    WHEN s.fee_amount IS NULL AND (s.rule_id <> e.rule_id OR s.pricing_version <> p_pair_versions[p_line_pairs[e.line]])
                      THEN 'recheck'
               END AS verdict
          FROM usage_events s
         WHERE s.company_id = p_company AND s.id = e.id
         LIMIT 1) AS d ON true;
    RETURN QUERY SELECT 'compared'::text, NULL::text, NULL::date, NULL::text;
  END IF;

  WITH ins AS (
    INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, sent_rate,
                              counterparty, counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number,
                              line_key, service_period_start, service_period_end, event_timestamp, ingested_at, status)
    SELECT p_company, e.id, p_pair_contracts[e.pair], p_line_metrics[e.line], e.quantity, e.fee,
           p_line_unit_prices[e.line], e.sent_rate, e.counterparty, e.side, e.scope_pair, e.charge, e.rule_id,
           p_pair_versions[e.pair], v_invoices[e.pair], p_line_keys[e.line], p_pair_starts[e.pair], p_pair_ends[e.pair],
           e.ts, p_now, 'rated'
      FROM (SELECT u.*, p_line_pairs[u.line] AS pair
              FROM unnest(p_ids, p_event_lines, p_quantities, p_charges, p_rule_ids, p_timestamps, p_fees, p_counterparties,
                          p_sides, p_pairs, p_sent_rates) WITH ORDINALITY
                AS u(id, line, quantity, charge, rule_id, ts, fee, counterparty, side, scope_pair, sent_rate, n)) AS e
     WHERE v_invoices[e.pair] IS NOT NULL -- only duplicates lack a draft here (step 2)
       AND (v_new IS NULL OR v_new[e.n])
    ON CONFLICT (company_id, id) DO NOTHING
    RETURNING id
  )
  SELECT array_agg(id) INTO v_stored FROM ins;
  v_count := COALESCE(cardinality(v_stored), 0);
  IF v_new IS NOT NULL AND v_count < (SELECT count(*) FROM unnest(v_new) AS x(b) WHERE b) THEN
    -- Stored by a concurrent call since the look-up: a duplicate that was not compared.
    v_recheck := v_recheck || ARRAY(SELECT u.id FROM unnest(p_ids, v_new) AS u(id, b)
                                     WHERE u.b AND NOT EXISTS (SELECT 1 FROM unnest(v_stored) AS i(id) WHERE i.id = u.id));
  END IF;
  RETURN QUERY SELECT 'differs'::text, NULL::text, NULL::date, x.id FROM unnest(v_differs) AS x(id);
  RETURN QUERY SELECT 'recheck'::text, NULL::text, NULL::date, x.id FROM unnest(v_recheck) AS x(id);
  IF v_count = 0 THEN
    RETURN; -- all duplicates: nothing to add, no lock taken
  END IF;

  IF v_count < cardinality(p_ids) THEN
    -- Some ids were stored already: each line gets the sums of the events inserted here, and a line none of
    -- them landed on is left alone (NULL).
    SELECT array_agg(g.quantity ORDER BY l.n), array_agg(g.charge ORDER BY l.n) INTO v_quantities, v_charges
      FROM generate_subscripts(p_line_pairs, 1) AS l(n)
      LEFT JOIN (SELECT u.line, sum(u.quantity) AS quantity, sum(u.charge) AS charge
                   FROM unnest(p_ids, p_event_lines, p_quantities, p_charges) AS u(id, line, quantity, charge)
                   JOIN unnest(v_stored) AS s(id) ON s.id = u.id
                  GROUP BY u.line) AS g ON g.line = l.n;
  END IF;

  -- 4. Lock the drafts in one order (no deadlocks), then add the new exact sums to their lines. Nothing
  --    rounded is stored: amounts, fee unit prices, the minimum true-up and the totals are derived when an
  --    invoice is read (src/domain/invoices/invoice-figures.ts).
  SELECT array_agg(DISTINCT v_invoices[l.pair] ORDER BY v_invoices[l.pair]) INTO v_locked
    FROM unnest(p_line_pairs, v_quantities) AS l(pair, quantity)
   WHERE l.quantity IS NOT NULL;
  --    A draft issued since step 2 (its lock waited for the finalization) takes the whole call back: the
  --    service calls again, and step 2b refuses its events.
  SELECT bool_or(l.status <> 'draft') INTO v_closed
    FROM (SELECT status FROM invoices
           WHERE company_id = p_company AND number = ANY(v_locked)
           ORDER BY number FOR UPDATE) AS l;
  IF v_closed THEN
    RAISE EXCEPTION 'a draft invoice was issued while usage was stored on it' USING ERRCODE = '40001';
  END IF;
  --    A pricing change dated into these drafts' periods prices their events again under the drafts' locks
  --    (src/domain/contracts/pricing-versions.ts). One that committed since step 1 takes the whole call back
  --    too: the service calls again, step 1 finds the contract stale, and the events are judged again.
  IF EXISTS (SELECT 1
               FROM (SELECT DISTINCT c, version FROM unnest(p_pair_contracts, COALESCE(p_pair_heads, p_pair_versions)) AS u(c, version)) AS w
               JOIN LATERAL (SELECT k.current_version, k.status, k.has_credits FROM contracts k
                              WHERE k.company_id = p_company AND k.id = w.c LIMIT 1) AS k ON true
              WHERE k.status <> 'active' OR k.current_version <> w.version OR k.has_credits) THEN
    RAISE EXCEPTION 'a contract''s pricing changed while usage was stored under it' USING ERRCODE = '40001';
  END IF;

  INSERT INTO invoice_lines AS l (company_id, invoice_number, line_key, kind, rule_id, metric, description,
                                  quantity, rate, charge_total, capped_total)
  SELECT p_company, v_invoices[d.pair], d.line_key, d.kind, d.rule_id, d.metric, d.description, d.quantity,
         CASE WHEN d.kind = 'usage' THEN d.unit_price END, d.charge, CASE WHEN d.kind = 'usage' THEN d.charge ELSE 0 END
    FROM unnest(p_line_pairs, p_line_keys, p_line_kinds, p_line_rule_ids, p_line_metrics, p_line_descriptions,
                p_line_unit_prices, v_quantities, v_charges)
      AS d(pair, line_key, kind, rule_id, metric, description, unit_price, quantity, charge)
   WHERE d.quantity IS NOT NULL
  ON CONFLICT (company_id, invoice_number, line_key) DO UPDATE SET
    quantity = l.quantity + EXCLUDED.quantity,
    charge_total = l.charge_total + EXCLUDED.charge_total,
    capped_total = l.capped_total + EXCLUDED.capped_total;

  UPDATE invoices SET updated_at = p_now WHERE company_id = p_company AND number = ANY(v_locked);

  IF v_count = cardinality(p_ids) THEN
    RETURN QUERY SELECT 'stored'::text, NULL::text, NULL::date, NULL::text;
  ELSE
    RETURN QUERY SELECT 'stored'::text, NULL::text, NULL::date, s.id FROM unnest(v_stored) AS s(id);
  END IF;
END
$$;
