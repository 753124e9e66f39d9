-- A graduated or volume rule's line keeps the exact sums of each tier it reached (its bounds, unit price, flat
-- amount, quantity and amount, decimals as text), so that its invoice can show them. NULL on every other line.
ALTER TABLE invoice_lines ADD COLUMN tiers jsonb;
