-- Draft invoices keep exact sums only. Every rounded figure (a line's amount, a fee line's unit price, the
-- monthly-minimum true-up line, subtotal, tax and total) is derived when the invoice is read, by one function
-- in code (src/domain/invoices/invoice-figures.ts), so that the batch path, the locking path and projection
-- can no longer disagree on one.

-- The true-up line is derived from minimum_amount and the other lines.
DELETE FROM invoice_lines WHERE kind = 'minimum';

-- A usage line's rate is part of its key and stays; every other unit price is derived.
ALTER TABLE invoice_lines RENAME COLUMN unit_price TO rate;
ALTER TABLE invoice_lines ALTER COLUMN rate DROP NOT NULL;
UPDATE invoice_lines SET rate = NULL WHERE kind <> 'usage';
ALTER TABLE invoice_lines DROP COLUMN amount;

ALTER TABLE invoices DROP COLUMN subtotal, DROP COLUMN tax, DROP COLUMN total;

-- The ingest function loses its currency exponents (it rounds nothing now); its helpers go.
DROP FUNCTION IF EXISTS billing_ingest_usage_lines(
  uuid, timestamptz, text[], integer[], date[], date[], integer[], integer[], text[], text[], text[], text[], text[],
  numeric[], numeric[], numeric[], text[], integer[], numeric[], numeric[], text[], timestamptz[], numeric[], text[],
  text[], text[]);
DROP FUNCTION IF EXISTS billing_fee_unit_price(numeric, numeric);
DROP FUNCTION IF EXISTS billing_round_half_even(numeric, integer);

-- What is derived cannot be stored: no true-up line, and a rate on usage lines only.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_kind_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_kind_check CHECK (kind IN ('subscription', 'one_time', 'usage', 'fee'));
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_rate_check CHECK ((kind = 'usage') = (rate IS NOT NULL));
