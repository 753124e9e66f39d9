-- Invoices leave draft (docs/decisions.md, "Invoices", lifecycle): draft -> issued -> paid, issued -> void.
-- Issuing freezes an invoice: its lines stop changing (ingestion and projection touch drafts only), and the
-- figures it was issued with are kept, so that no later change of code or data can change what the
-- customer was sent: `billed` holds the lines as billed and the totals (decimals as text). Drafts keep
-- none (their figures are derived when read).
ALTER TABLE invoices
  ADD COLUMN issued_at timestamptz,
  ADD COLUMN paid_at timestamptz,
  ADD COLUMN voided_at timestamptz,
  ADD COLUMN billed jsonb;

ALTER TABLE invoices ADD CONSTRAINT invoices_status_check CHECK (status IN ('draft', 'issued', 'paid', 'void'));
ALTER TABLE invoices ADD CONSTRAINT invoices_frozen_check CHECK (
  (status = 'draft') = (issued_at IS NULL)
  AND (status = 'draft') = (billed IS NULL)
  AND (status = 'paid') = (paid_at IS NOT NULL)
  AND (status = 'void') = (voided_at IS NOT NULL)
);

-- The worker's search for drafts whose period is over (all companies): drafts only, oldest period first.
CREATE INDEX invoices_open_drafts_idx ON invoices (period_end) WHERE status = 'draft';
