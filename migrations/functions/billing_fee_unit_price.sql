-- A fee line's unit price: amount / quantity kept to 12 decimals (docs/decisions.md, "Invoices"; addCharge in
-- invoice-lines.ts). The division carries 40 decimals first: numeric division would otherwise pick about 16
-- significant digits from its operands and lose decimals of large quotients before the rounding.
CREATE OR REPLACE FUNCTION billing_fee_unit_price(amount numeric, quantity numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN quantity = 0 THEN 0 ELSE billing_round_half_even(round(amount, 40) / quantity, 12) END
$$;
