-- A rule priced on the period's running quantity (graduated, volume, package) has one usage line per invoice,
-- without a unit price: its line is keyed by the rule alone and stores no rate. Every other usage line still
-- has its rate; other kinds never have one.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_rate_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_rate_check CHECK (kind = 'usage' OR rate IS NULL);
