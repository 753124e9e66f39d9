-- Invoices a finance team can send, collect and correct (docs/api.md, "Account", "Payments", "Credit notes",
-- "Void and reissue").

-- The seller's profile: what every invoice says about who bills and how to pay. Defaults keep today's invoices
-- as they were (Letter, Net 30).
ALTER TABLE companies
  ADD COLUMN legal_name            text,
  ADD COLUMN address               text,
  ADD COLUMN tax_id                text,
  ADD COLUMN payment_instructions  text,
  ADD COLUMN invoice_footer        text,
  ADD COLUMN paper_size            text NOT NULL DEFAULT 'letter' CHECK (paper_size IN ('letter', 'a4')),
  ADD COLUMN payment_terms_days    integer NOT NULL DEFAULT 30 CHECK (payment_terms_days BETWEEN 0 AND 3650),
  ADD COLUMN updated_at            timestamptz;

-- The logo, apart from the row every request reads: PNG or JPEG bytes as uploaded (at most 1 MiB).
CREATE TABLE company_logos (
  company_id    uuid PRIMARY KEY REFERENCES companies (id),
  content_type  text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  bytes         bytea NOT NULL,
  sha256        text NOT NULL,
  updated_at    timestamptz NOT NULL
);

-- What a customer's invoices carry and how they reach it. Payment terms become a number of days (they were
-- kept as the text 'Net {n}').
ALTER TABLE customers
  ADD COLUMN payment_terms_days  integer CHECK (payment_terms_days BETWEEN 0 AND 3650),
  ADD COLUMN tax_id            text,
  ADD COLUMN invoice_memo      text,
  ADD COLUMN invoice_delivery  text NOT NULL DEFAULT 'none' CHECK (invoice_delivery IN ('email', 'none')),
  ADD COLUMN updated_at        timestamptz;
UPDATE customers SET payment_terms_days = substring(payment_terms FROM '^Net ([0-9]+)$')::integer
 WHERE payment_terms ~ '^Net [0-9]{1,4}$';
ALTER TABLE customers DROP COLUMN payment_terms;
CREATE INDEX customers_name_idx ON customers (company_id, lower(name));

-- A contract's own payment terms, over its customer's (NULL: the customer's, then the account's).
ALTER TABLE contracts
  ADD COLUMN payment_terms_days integer CHECK (payment_terms_days BETWEEN 0 AND 3650);

-- Collecting and correcting an issued invoice. amount_paid and amount_credited are the sums of its payments
-- and credit notes (billing verify checks both); amount_due = total - amount_paid - (credited against it).
-- `parties` freezes, when it is issued, what its documents say about the seller and the customer, so that a
-- later edit of either never changes an issued invoice. A reissued invoice names the void one it replaces.
ALTER TABLE invoices
  ADD COLUMN amount_paid      numeric NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
  ADD COLUMN amount_credited  numeric NOT NULL DEFAULT 0 CHECK (amount_credited >= 0),
  ADD COLUMN parties          jsonb,
  ADD COLUMN reissue_of       text;

-- Void and reissue: a void invoice keeps its period, and the draft that replaces it takes the same one. Only
-- invoices that are not void are one per contract and period.
DROP INDEX invoices_contract_period_key;
CREATE UNIQUE INDEX invoices_contract_period_key ON invoices (company_id, contract_id, period_start)
  WHERE status <> 'void';

CREATE TABLE invoice_payments (
  company_id      uuid NOT NULL,
  id              text NOT NULL,          -- pay_ + 16 hex characters
  invoice_number  text NOT NULL,
  amount          numeric NOT NULL CHECK (amount > 0),
  paid_on         date NOT NULL,
  method          text NOT NULL,
  reference       text,
  created_at      timestamptz NOT NULL,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, invoice_number) REFERENCES invoices (company_id, number)
);
CREATE INDEX invoice_payments_invoice_idx ON invoice_payments (company_id, invoice_number, seq);

-- Invoices paid before payments were itemised were paid in full: one payment each, so that amount_paid is
-- always the sum of an invoice's payments.
INSERT INTO invoice_payments (company_id, id, invoice_number, amount, paid_on, method, reference, created_at)
SELECT company_id, 'pay_' || substr(md5(company_id::text || number), 1, 16), number, (billed->>'total')::numeric,
       paid_date, 'other', NULL, paid_at
  FROM invoices WHERE status = 'paid' AND (billed->>'total')::numeric > 0
 ORDER BY company_id, seq;
UPDATE invoices SET amount_paid = (billed->>'total')::numeric WHERE status = 'paid';

CREATE TABLE credit_notes (
  company_id        uuid NOT NULL,
  number            text NOT NULL,        -- CN-000001, per company
  seq               bigint NOT NULL,
  invoice_number    text NOT NULL,
  customer_id       uuid NOT NULL,
  currency          text NOT NULL,
  amount            numeric NOT NULL CHECK (amount > 0),
  -- what it took off the invoice's amount due, and what it left on the customer's credit balance
  applied_to_due    numeric NOT NULL CHECK (applied_to_due >= 0),
  to_balance        numeric NOT NULL CHECK (to_balance >= 0),
  reason            text NOT NULL,
  lines             jsonb NOT NULL,       -- [{line, description, amount}] as credited
  issued_date       date NOT NULL,
  created_at        timestamptz NOT NULL,
  PRIMARY KEY (company_id, number),
  FOREIGN KEY (company_id, invoice_number) REFERENCES invoices (company_id, number),
  CHECK (applied_to_due + to_balance = amount)
);
CREATE INDEX credit_notes_invoice_idx ON credit_notes (company_id, invoice_number, seq);
CREATE INDEX credit_notes_customer_idx ON credit_notes (company_id, customer_id, seq);
CREATE INDEX credit_notes_newest_idx ON credit_notes (company_id, seq DESC);
CREATE INDEX invoices_reissue_of_idx ON invoices (company_id, reissue_of) WHERE reissue_of IS NOT NULL;
