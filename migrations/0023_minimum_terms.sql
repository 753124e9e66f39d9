-- What each monthly commitment of an invoice counts (docs/api.md, "Monthly minimums and pass-through charges"):
-- [{amount, counts}], one per group of the program's minimum rules that count the same charges. NULL on an
-- invoice stored before commitments said what they count: its `minimum_amount` then counts the default charges.
ALTER TABLE invoices
  ADD COLUMN minimum_terms jsonb;
