-- Usage ingestion in one round trip (issue: performance). The service rates events in code (rate-event.ts)
-- and hands the rated batch to this function, which stores it and folds it into the draft invoices as one
-- statement: row locks are held for the function's run only, not across round trips.
-- Batches that touch a rule with a monthly cap take the locking path in code instead (ingest-usage.ts),
-- because the cap's remainder depends on what the locked invoice already holds.

-- Half-even rounding, as roundToMinorUnit in money.ts (SQL round() rounds halves away from zero). Built on
-- round() and trunc(), which are exact at any scale (dividing by power(10, n) is not: its scale differs
-- between PostgreSQL 15 and PGlite's 18). One expression, not STRICT, so that the planner inlines it.
CREATE FUNCTION billing_round_half_even(value numeric, places integer) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN abs(value - trunc(value, places)) * power(10::numeric, places) = 0.5
         AND mod(abs(trunc(value, places)) * power(10::numeric, places), 2) = 0
      THEN trunc(value, places)
    ELSE round(value, places)
  END
$$;

-- A fee line's unit price: amount / quantity kept to 12 decimals (decisions.md "Invoices"; addCharge in
-- invoice-lines.ts). The division carries 40 decimals first: numeric division would otherwise pick about 16
-- significant digits from its operands and lose decimals of large quotients before the rounding.
CREATE FUNCTION billing_fee_unit_price(amount numeric, quantity numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN quantity = 0 THEN 0 ELSE billing_round_half_even(round(amount, 40) / quantity, 12) END
$$;

-- Answers rows (outcome, contract_id, period_start, event_id):
--   'stale'   a contract that is no longer active at the program version the events were rated with:
--             nothing was written; rate again with fresh contracts;
--   'missing' a (contract, period) without a draft invoice: nothing was written; create it and call again;
--   'stored'  an event id stored by this call. Ids not returned were stored already (duplicates).
CREATE FUNCTION billing_ingest_usage(
  p_company uuid, p_now timestamptz,
  p_ids text[], p_contracts text[], p_metrics text[], p_quantities numeric[], p_fees numeric[],
  p_rates numeric[], p_counterparties text[], p_sides text[], p_pairs text[], p_charges numeric[],
  p_rule_ids text[], p_versions integer[], p_line_keys text[], p_kinds text[], p_descriptions text[],
  p_unit_prices numeric[], p_period_starts date[], p_period_ends date[], p_timestamps timestamptz[],
  p_exponents integer[]
) RETURNS TABLE (outcome text, contract_id text, period_start date, event_id text)
LANGUAGE plpgsql AS $$
DECLARE
  v_numbers text[];
  v_count integer;
  v_missing_contracts text[];
  v_missing_periods date[];
BEGIN
  -- Lookups below are LATERAL ... LIMIT 1 on purpose: one index probe per distinct key, never a hash join
  -- that would read all of the company's invoices or events.

  -- 1. The events were rated against the contracts as they are now (the service caches contracts).
  RETURN QUERY
    SELECT 'stale'::text, w.c, NULL::date, NULL::text
      FROM (SELECT DISTINCT c, version FROM unnest(p_contracts, p_versions) AS u(c, version)) AS w
      LEFT JOIN LATERAL (SELECT k.current_version, k.status FROM contracts k
                          WHERE k.company_id = p_company AND k.id = w.c LIMIT 1) AS k ON true
     WHERE k.status IS DISTINCT FROM 'active' OR k.current_version <> w.version;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  IF v_count > 0 THEN
    RETURN;
  END IF;

  -- 2. Every new event's draft must exist (a stored duplicate needs none); nothing is locked yet.
  WITH pairs AS (
    SELECT w.c, w.p, i.number
      FROM (SELECT DISTINCT c, p FROM unnest(p_contracts, p_period_starts) AS u(c, p)) AS w
      LEFT JOIN LATERAL (SELECT number FROM invoices i
                          WHERE i.company_id = p_company AND i.contract_id = w.c AND i.period_start = w.p LIMIT 1) AS i ON true
  )
  SELECT array_agg(c), array_agg(p) INTO v_missing_contracts, v_missing_periods FROM pairs WHERE number IS NULL;
  IF v_missing_contracts IS NOT NULL THEN
    RETURN QUERY
      SELECT DISTINCT 'missing'::text, w.c, w.p, NULL::text
        FROM unnest(p_ids, p_contracts, p_period_starts) AS w(id, c, p)
        JOIN unnest(v_missing_contracts, v_missing_periods) AS m(c, p) ON m.c = w.c AND m.p = w.p
        LEFT JOIN LATERAL (SELECT 1 AS found FROM usage_events e WHERE e.company_id = p_company AND e.id = w.id LIMIT 1) AS e ON true
       WHERE e.found IS NULL;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
      RETURN;
    END IF;
  END IF;

  -- 3. Store the events; ids stored already are skipped (decisions.md, Rating 8).
  IF to_regclass('pg_temp.billing_ingested') IS NULL THEN
    CREATE TEMP TABLE billing_ingested (
      id text, invoice_number text, line_key text, quantity numeric, charge numeric, capped numeric,
      kind text, rule_id text, metric text, description text, unit_price numeric, exponent integer
    ) ON COMMIT DELETE ROWS;
  END IF;
  WITH v AS (
    SELECT * FROM unnest(p_ids, p_contracts, p_metrics, p_quantities, p_fees, p_rates, p_counterparties, p_sides,
                         p_pairs, p_charges, p_rule_ids, p_versions, p_line_keys, p_kinds, p_descriptions,
                         p_unit_prices, p_period_starts, p_period_ends, p_timestamps, p_exponents)
      AS v(id, contract_id, metric, quantity, fee, rate, counterparty, side, pair, charge, rule_id, version,
           line_key, kind, description, unit_price, period_start, period_end, ts, exponent)
  ), ins AS (
    INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty,
                              counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number, line_key,
                              service_period_start, service_period_end, event_timestamp, ingested_at, status)
    SELECT p_company, v.id, v.contract_id, v.metric, v.quantity, v.fee, v.rate, v.counterparty, v.side, v.pair,
           v.charge, v.rule_id, v.version, i.number, v.line_key, v.period_start, v.period_end, v.ts, p_now, 'rated'
      FROM v JOIN LATERAL (SELECT number FROM invoices i
                            WHERE i.company_id = p_company AND i.contract_id = v.contract_id AND i.period_start = v.period_start
                            LIMIT 1) AS i ON true
    ON CONFLICT (company_id, id) DO NOTHING
    RETURNING id, invoice_number, line_key, quantity, rated_amount
  )
  INSERT INTO billing_ingested
  SELECT ins.id, ins.invoice_number, ins.line_key, ins.quantity, ins.rated_amount,
         CASE WHEN v.kind = 'usage' THEN ins.rated_amount ELSE 0 END,
         v.kind, v.rule_id, v.metric, v.description, v.unit_price, v.exponent
    FROM ins JOIN v ON v.id = ins.id;

  SELECT array_agg(DISTINCT invoice_number ORDER BY invoice_number) INTO v_numbers FROM billing_ingested;
  IF v_numbers IS NULL THEN
    RETURN; -- all duplicates: nothing to add, no lock taken
  END IF;

  -- 4. Lock the drafts in one order (no deadlocks), then fold the new charges into their lines.
  PERFORM 1 FROM invoices
    WHERE company_id = p_company AND number = ANY(v_numbers)
    ORDER BY number FOR UPDATE;

  INSERT INTO invoice_lines AS l (company_id, invoice_number, line_key, kind, rule_id, metric, description,
                                  quantity, unit_price, charge_total, capped_total, amount)
  SELECT p_company, g.invoice_number, g.line_key, g.kind, g.rule_id, g.metric, g.description, g.quantity,
         CASE WHEN g.kind = 'fee' THEN
           billing_fee_unit_price(billing_round_half_even(g.charge, g.exponent), g.quantity)
         ELSE g.unit_price END,
         g.charge, g.capped, billing_round_half_even(g.charge, g.exponent)
    FROM (SELECT invoice_number, line_key, min(kind) AS kind, min(rule_id) AS rule_id, min(metric) AS metric,
                 min(description) AS description, min(unit_price) AS unit_price, sum(quantity) AS quantity,
                 sum(charge) AS charge, sum(capped) AS capped, min(exponent) AS exponent
            FROM billing_ingested GROUP BY invoice_number, line_key) AS g
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
           billing_round_half_even(i.minimum_amount, (SELECT min(exponent) FROM billing_ingested b WHERE b.invoice_number = i.number))
             - COALESCE((SELECT sum(l.amount) FROM invoice_lines l
                          WHERE l.company_id = p_company AND l.invoice_number = i.number AND l.kind <> 'minimum'), 0) AS shortfall
      FROM invoices i
     WHERE i.company_id = p_company AND i.number = ANY(v_numbers) AND i.minimum_amount IS NOT NULL
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

  -- 6. Totals are the sum of the rounded lines (tax 0 until a tax rule exists).
  UPDATE invoices i
     SET subtotal = s.subtotal, total = s.subtotal + i.tax, updated_at = p_now
    FROM (SELECT invoice_number, sum(amount) AS subtotal FROM invoice_lines
           WHERE company_id = p_company AND invoice_number = ANY(v_numbers) GROUP BY invoice_number) AS s
   WHERE i.company_id = p_company AND i.number = s.invoice_number;

  RETURN QUERY SELECT 'stored'::text, NULL::text, NULL::date, b.id FROM billing_ingested b;
END
$$;
