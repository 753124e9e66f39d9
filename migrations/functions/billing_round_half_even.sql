-- Half-even rounding, as roundToMinorUnit in money.ts (SQL round() rounds halves away from zero). Built on
-- round() and trunc(), which are exact at any scale (dividing by power(10, n) is not: its scale differs
-- between PostgreSQL 15 and PGlite's 18). One expression, not STRICT, so that the planner inlines it.
CREATE OR REPLACE FUNCTION billing_round_half_even(value numeric, places integer) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN abs(value - trunc(value, places)) * power(10::numeric, places) = 0.5
         AND mod(abs(trunc(value, places)) * power(10::numeric, places), 2) = 0
      THEN trunc(value, places)
    ELSE round(value, places)
  END
$$;
