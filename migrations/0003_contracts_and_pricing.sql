-- Contracts and their append-only pricing program versions.

CREATE TABLE company_counters (
  company_id  uuid NOT NULL REFERENCES companies (id),
  name        text NOT NULL,          -- 'contract_number', 'invoice_number'
  value       bigint NOT NULL,
  PRIMARY KEY (company_id, name)
);

CREATE TABLE contracts (
  company_id        uuid NOT NULL REFERENCES companies (id),
  id                text NOT NULL,    -- the external id: the value sent as external_contract_id
  contract_number   text NOT NULL,
  customer_id       uuid NOT NULL,
  customer_name     text NOT NULL,
  status            text NOT NULL CHECK (status IN ('draft', 'active', 'completed', 'cancelled', 'terminated')),
  start_date        date NOT NULL,
  end_date          date,             -- NULL: open-ended
  currency          text NOT NULL,
  billing_cadence   text NOT NULL,
  sample            boolean NOT NULL,
  current_version   integer NOT NULL, -- the active (approved) pricing program version
  metrics           text[] NOT NULL,  -- metrics of the active version's usage rules, kept with it
  pdf_token         text NOT NULL,    -- unguessable capability token in pdf_url (32 random bytes)
  created_at        timestamptz NOT NULL,
  seq               bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
CREATE UNIQUE INDEX contracts_number_key ON contracts (company_id, contract_number);
CREATE UNIQUE INDEX contracts_pdf_token_key ON contracts (pdf_token);
CREATE INDEX contracts_newest_idx ON contracts (company_id, seq DESC);

CREATE TABLE pricing_program_versions (
  company_id      uuid NOT NULL,
  contract_id     text NOT NULL,
  version         integer NOT NULL,
  effective_date  date NOT NULL,
  rules           jsonb NOT NULL,     -- the whole rule list of this version; versions are never updated
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (company_id, contract_id, version),
  FOREIGN KEY (company_id, contract_id) REFERENCES contracts (company_id, id)
);
