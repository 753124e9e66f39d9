-- Usage ingestion with the line deltas summed by the service (issue: performance; docs/performance.md step 8).
--
-- billing_ingest_usage (0005) received every event with its line's attributes and summed the lines itself:
-- each call copied the inserted events into a temporary table (emptied again at every commit), grouped
-- them by line, and probed the invoice of every event. Its replacement receives three levels instead:
--   pairs   (contract, version, service period): one draft invoice each, found with one probe per pair;
--   lines   (pair, line key): the line's attributes and the sums of its events' quantities and charges;
--   events  the stored fields of each event and the index of its line; an event's metric and applied rate
--           are its line's (a line's key fixes both), and it takes its contract, version, period and invoice
--           from the line's pair.
-- When every event is new, the lines are folded in as they came. When the insert shows ids stored already
-- (a retry, a replay, a concurrent request), the sums are taken again over the events this call inserted,
-- so that an event is never billed twice. Everything else (stale contracts, missing drafts, lock order,
-- minimum true-up, totals) behaves as in 0005.

DROP FUNCTION billing_ingest_usage(
  uuid, timestamptz, text[], text[], text[], numeric[], numeric[], numeric[], text[], text[], text[], numeric[],
  text[], integer[], text[], text[], text[], numeric[], date[], date[], timestamptz[], integer[]);

-- Only `billing verify` read usage events by invoice line (a full scan and hash aggregate serve it as well),
-- and every insert paid for keeping it.
DROP INDEX usage_events_invoice_idx;

-- Array indexes are 1-based. Answers rows (outcome, contract_id, period_start, event_id):
--   'stale'   a contract not active at the program version its events were rated with: nothing was
--             written; rate again with fresh contracts;
--   'missing' a (contract, period) without a draft invoice: nothing was written; create it and call again;
--   'stored'  with an event id: an event stored by this call, when some ids were stored already (those
--             not listed are duplicates); without one (a single row): every event was stored.
-- No row at all: every id was stored already, and nothing changed.
CREATE FUNCTION billing_ingest_usage_lines(
  p_company uuid, p_now timestamptz,
  p_pair_contracts text[], p_pair_versions integer[], p_pair_starts date[], p_pair_ends date[], p_pair_exponents integer[],
  p_line_pairs integer[], p_line_keys text[], p_line_kinds text[], p_line_rule_ids text[], p_line_metrics text[],
  p_line_descriptions text[], p_line_unit_prices numeric[], p_line_quantities numeric[], p_line_charges numeric[],
  p_ids text[], p_event_lines integer[], p_quantities numeric[], p_charges numeric[], p_rule_ids text[], p_timestamps timestamptz[],
  -- optional per event: an empty array stands for NULL throughout
  p_fees numeric[], p_counterparties text[], p_sides text[], p_pairs text[]
) RETURNS TABLE (outcome text, contract_id text, period_start date, event_id text)
LANGUAGE plpgsql
-- Plans are made once per connection, not per call, and see the arrays as parameters, which PL/pgSQL keeps
-- expanded: p_x[i] is then a direct access. A custom plan would get them as flat constants instead, where
-- p_line_keys[i] walks the array from its start (measured: 17 ms of a 1,000-event call in the insert).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_count integer;
  v_invoices text[];    -- per pair: its draft's number (NULL: missing)
  v_stored text[];      -- ids this call inserted
  v_quantities numeric[] := p_line_quantities;
  v_charges numeric[] := p_line_charges;
  v_locked text[];      -- the drafts that get new charges, sorted
BEGIN
  -- Lookups below are LATERAL ... LIMIT 1 on purpose: one index probe per distinct key, never a hash join
  -- that would read all of the company's contracts, invoices or events.

  -- 1. The events were rated against the contracts as they are now (the service caches contracts).
  RETURN QUERY
    SELECT 'stale'::text, w.c, NULL::date, NULL::text
      FROM (SELECT DISTINCT c, version FROM unnest(p_pair_contracts, p_pair_versions) AS u(c, version)) AS w
      LEFT JOIN LATERAL (SELECT k.current_version, k.status FROM contracts k
                          WHERE k.company_id = p_company AND k.id = w.c LIMIT 1) AS k ON true
     WHERE k.status IS DISTINCT FROM 'active' OR k.current_version <> w.version;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  IF v_count > 0 THEN
    RETURN;
  END IF;

  -- 2. Every pair's draft, in pair order; nothing is locked yet.
  SELECT array_agg(i.number ORDER BY w.n) INTO v_invoices
    FROM unnest(p_pair_contracts, p_pair_starts) WITH ORDINALITY AS w(c, p, n)
    LEFT JOIN LATERAL (SELECT number FROM invoices i
                        WHERE i.company_id = p_company AND i.contract_id = w.c AND i.period_start = w.p LIMIT 1) AS i ON true;
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

  -- 3. Store the events, in the order sent; ids stored already are skipped (decisions.md, Rating 8).
  WITH ins AS (
    INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty,
                              counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number, line_key,
                              service_period_start, service_period_end, event_timestamp, ingested_at, status)
    SELECT p_company, e.id, p_pair_contracts[e.pair], p_line_metrics[e.line], e.quantity, e.fee,
           p_line_unit_prices[e.line], e.counterparty, e.side, e.scope_pair, e.charge, e.rule_id, p_pair_versions[e.pair],
           v_invoices[e.pair], p_line_keys[e.line], p_pair_starts[e.pair], p_pair_ends[e.pair], e.ts, p_now, 'rated'
      FROM (SELECT u.*, p_line_pairs[u.line] AS pair
              FROM unnest(p_ids, p_event_lines, p_quantities, p_charges, p_rule_ids, p_timestamps, p_fees, p_counterparties,
                          p_sides, p_pairs)
                AS u(id, line, quantity, charge, rule_id, ts, fee, counterparty, side, scope_pair)) AS e
     WHERE v_invoices[e.pair] IS NOT NULL -- only duplicates lack a draft here (step 2)
    ON CONFLICT (company_id, id) DO NOTHING
    RETURNING id
  )
  SELECT array_agg(id) INTO v_stored FROM ins;
  v_count := COALESCE(cardinality(v_stored), 0);
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

  -- 4. Lock the drafts in one order (no deadlocks), then fold the new charges into their lines.
  SELECT array_agg(DISTINCT v_invoices[l.pair] ORDER BY v_invoices[l.pair]) INTO v_locked
    FROM unnest(p_line_pairs, v_quantities) AS l(pair, quantity)
   WHERE l.quantity IS NOT NULL;
  PERFORM 1 FROM invoices
    WHERE company_id = p_company AND number = ANY(v_locked)
    ORDER BY number FOR UPDATE;

  INSERT INTO invoice_lines AS l (company_id, invoice_number, line_key, kind, rule_id, metric, description,
                                  quantity, unit_price, charge_total, capped_total, amount)
  SELECT p_company, v_invoices[d.pair], d.line_key, d.kind, d.rule_id, d.metric, d.description, d.quantity,
         CASE WHEN d.kind = 'fee' THEN
           billing_fee_unit_price(billing_round_half_even(d.charge, p_pair_exponents[d.pair]), d.quantity)
         ELSE d.unit_price END,
         d.charge, CASE WHEN d.kind = 'usage' THEN d.charge ELSE 0 END,
         billing_round_half_even(d.charge, p_pair_exponents[d.pair])
    FROM unnest(p_line_pairs, p_line_keys, p_line_kinds, p_line_rule_ids, p_line_metrics, p_line_descriptions,
                p_line_unit_prices, v_quantities, v_charges)
      AS d(pair, line_key, kind, rule_id, metric, description, unit_price, quantity, charge)
   WHERE d.quantity IS NOT NULL
  ON CONFLICT (company_id, invoice_number, line_key) DO UPDATE SET
    quantity = l.quantity + EXCLUDED.quantity,
    charge_total = l.charge_total + EXCLUDED.charge_total,
    capped_total = l.capped_total + EXCLUDED.capped_total,
    -- EXCLUDED.amount was rounded to the currency's minor unit, so its scale is that exponent.
    amount = billing_round_half_even(l.charge_total + EXCLUDED.charge_total, scale(EXCLUDED.amount)),
    -- fees: unit_price = amount / quantity (decisions.md "Invoices")
    unit_price = CASE WHEN l.kind = 'fee' THEN
                   billing_fee_unit_price(billing_round_half_even(l.charge_total + EXCLUDED.charge_total, scale(EXCLUDED.amount)),
                                          l.quantity + EXCLUDED.quantity)
                 ELSE l.unit_price END;

  -- 5. Projected drafts keep their minimum: the true-up line is what the other lines still fall short of.
  WITH t AS (
    SELECT i.number,
           billing_round_half_even(i.minimum_amount,
                                   (SELECT min(x.exponent) FROM unnest(v_invoices, p_pair_exponents) AS x(number, exponent)
                                     WHERE x.number = i.number))
             - COALESCE((SELECT sum(l.amount) FROM invoice_lines l
                          WHERE l.company_id = p_company AND l.invoice_number = i.number AND l.kind <> 'minimum'), 0) AS shortfall
      FROM invoices i
     WHERE i.company_id = p_company AND i.number = ANY(v_locked) AND i.minimum_amount IS NOT NULL
  ), removed AS (
    DELETE FROM invoice_lines l USING t
     WHERE l.company_id = p_company AND l.invoice_number = t.number AND l.line_key = 'minimum' AND t.shortfall <= 0
  )
  INSERT INTO invoice_lines AS l (company_id, invoice_number, line_key, kind, rule_id, metric, description,
                                  quantity, unit_price, charge_total, capped_total, amount)
  SELECT p_company, t.number, 'minimum', 'minimum', NULL, NULL, 'Monthly minimum', 1, t.shortfall, t.shortfall, 0, t.shortfall
    FROM t WHERE t.shortfall > 0
  ON CONFLICT (company_id, invoice_number, line_key) DO UPDATE SET
    unit_price = EXCLUDED.unit_price, charge_total = EXCLUDED.charge_total, amount = EXCLUDED.amount;

  -- 6. Totals are the sum of the rounded lines (tax 0 until a tax rule exists). The lines are summed per
  --    invoice (LATERAL): on tables too young to have statistics, one GROUP BY over the lines of all locked
  --    invoices was planned as a nested loop that summed every line of the company once per invoice
  --    (auto_explain: 0.4 s for one call of 200 invoices).
  UPDATE invoices i
     SET subtotal = s.subtotal, total = s.subtotal + i.tax, updated_at = p_now
    FROM unnest(v_locked) AS n(number)
    CROSS JOIN LATERAL (SELECT COALESCE(sum(l.amount), 0) AS subtotal FROM invoice_lines l
                         WHERE l.company_id = p_company AND l.invoice_number = n.number) AS s
   WHERE i.company_id = p_company AND i.number = n.number;

  IF v_count = cardinality(p_ids) THEN
    RETURN QUERY SELECT 'stored'::text, NULL::text, NULL::date, NULL::text;
  ELSE
    RETURN QUERY SELECT 'stored'::text, NULL::text, NULL::date, s.id FROM unnest(v_stored) AS s(id);
  END IF;
END
$$;
