-- Prepaid and promotional credits (docs/api.md, "Credits"): grants on a contract, burned down by its usage as it
-- is rated, every movement a ledger entry.

CREATE TABLE credit_grants (
  company_id      uuid NOT NULL,
  id              text NOT NULL,           -- cg_ + 16 hex characters
  contract_id     text NOT NULL,
  name            text NOT NULL,           -- shown on its invoice lines
  type            text NOT NULL CHECK (type IN ('prepaid', 'promotional')),
  amount          numeric NOT NULL CHECK (amount > 0),
  -- what is left: the sum of the grant's ledger entries (billing verify checks it)
  balance         numeric NOT NULL CHECK (balance >= 0 AND balance <= amount),
  currency        text NOT NULL,
  starts_on       date NOT NULL,
  expires_on      date,                    -- NULL: never expires
  metrics         text[],                  -- NULL: every usage metric of the contract
  priority        integer NOT NULL CHECK (priority BETWEEN 0 AND 100),
  status          text NOT NULL CHECK (status IN ('active', 'expired')),
  invoice_number  text,                    -- a prepaid grant: the invoice that bills it
  created_at      timestamptz NOT NULL,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, contract_id) REFERENCES contracts (company_id, id),
  CHECK (expires_on IS NULL OR expires_on >= starts_on)
);
CREATE INDEX credit_grants_contract_idx ON credit_grants (company_id, contract_id, seq);
CREATE INDEX credit_grants_expiring_idx ON credit_grants (expires_on) WHERE status = 'active';

CREATE TABLE credit_ledger (
  company_id      uuid NOT NULL,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  grant_id        text NOT NULL,
  -- grant: the amount granted; burn: what usage took (negative), or gave back when its month was priced again
  -- (positive); void: what a voided usage event gave back (its month priced again without it); expiry: what was
  -- left when the grant expired (negative)
  kind            text NOT NULL CHECK (kind IN ('grant', 'burn', 'void', 'expiry')),
  amount          numeric NOT NULL,
  invoice_number  text,                    -- a burn or void: the draft whose usage it is on
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (company_id, seq),
  FOREIGN KEY (company_id, grant_id) REFERENCES credit_grants (company_id, id)
);
CREATE INDEX credit_ledger_grant_idx ON credit_ledger (company_id, grant_id, seq);

-- A contract that has had a grant is rated on the locking path (its credits are burned under the drafts'
-- locks); the ingest function refuses such a contract on the batch path, as it refuses a stale one.
ALTER TABLE contracts ADD COLUMN has_credits boolean NOT NULL DEFAULT false;

-- A credit line: what a grant covers of the draft's usage, negative.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_kind_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_kind_check
  CHECK (kind IN ('subscription', 'one_time', 'usage', 'fee', 'credit'));
