-- A contract's pricing program as a timeline (migrations/0018_usage_corrections.sql, part 3): one entry per day a
-- version applies from, oldest first, each with the highest-numbered version of that day and its rules:
--   [{"from": "2026-03-01", "version": 4, "effective_date": "2026-03-01", "rules": [...]}, ...]
-- The version in force on a day is the entry with the latest `from` on or before it
-- (`programOn` in src/domain/contracts/program-timeline.ts); NULL for a contract without versions.
CREATE OR REPLACE FUNCTION billing_program_segments(p_company uuid, p_contract text) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
  SELECT jsonb_agg(jsonb_build_object('from', s.applies_from, 'version', s.version, 'effective_date', s.effective_date,
                                      'rules', s.rules) ORDER BY s.applies_from)
    FROM (SELECT DISTINCT ON (applies_from) applies_from, version, effective_date, rules
            FROM pricing_program_versions
           WHERE company_id = p_company AND contract_id = p_contract
           ORDER BY applies_from, version DESC) AS s
$$;
