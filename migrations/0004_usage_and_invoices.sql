-- Draft invoices with their lines, and the usage events rated onto them.

CREATE TABLE invoices (
  company_id            uuid NOT NULL,
  number                text NOT NULL,   -- INV-000042
  seq                   bigint NOT NULL, -- the number's integer, for ordering and cursors
  contract_id           text NOT NULL,
  status                text NOT NULL,
  currency              text NOT NULL,
  period_start          date NOT NULL,
  period_end            date NOT NULL,
  subtotal              numeric NOT NULL,
  tax                   numeric NOT NULL,
  total                 numeric NOT NULL,
  minimum_amount        numeric,         -- set by projection: the monthly minimum the true-up line keeps
  projected_at          timestamptz,
  issued_date           date NOT NULL,
  due_date              date NOT NULL,
  paid_date             date,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  PRIMARY KEY (company_id, number),
  FOREIGN KEY (company_id, contract_id) REFERENCES contracts (company_id, id)
);
-- One invoice per contract and billing period (docs/decisions.md, "Periods").
CREATE UNIQUE INDEX invoices_contract_period_key ON invoices (company_id, contract_id, period_start);
CREATE INDEX invoices_newest_idx ON invoices (company_id, seq DESC);
CREATE INDEX invoices_contract_newest_idx ON invoices (company_id, contract_id, seq DESC);

CREATE TABLE invoice_lines (
  company_id      uuid NOT NULL,
  invoice_number  text NOT NULL,
  line_key        text NOT NULL,         -- what the line aggregates: 'usage|<rule>|<unit price>', 'fee|<metric>', ...
  kind            text NOT NULL CHECK (kind IN ('subscription', 'one_time', 'usage', 'fee', 'minimum')),
  rule_id         text,
  metric          text,
  description     text NOT NULL,
  quantity        numeric NOT NULL,
  unit_price      numeric NOT NULL,
  charge_total    numeric NOT NULL,      -- the exact sum of the charges on the line
  capped_total    numeric NOT NULL,      -- the part of charge_total that counts against the rule's monthly cap
  amount          numeric NOT NULL,      -- charge_total rounded half-even to the currency's minor unit
  PRIMARY KEY (company_id, invoice_number, line_key),
  FOREIGN KEY (company_id, invoice_number) REFERENCES invoices (company_id, number)
);

CREATE TABLE usage_events (
  company_id            uuid NOT NULL,
  id                    text NOT NULL,   -- the client's event_id: the idempotency key
  seq                   bigint GENERATED ALWAYS AS IDENTITY,
  contract_id           text NOT NULL,
  metric                text NOT NULL,
  quantity              numeric NOT NULL,
  fee_amount            numeric,
  applied_rate          numeric,
  counterparty          text,
  counterparty_side     text,
  pair                  text,
  rated_amount          numeric NOT NULL,
  rule_id               text NOT NULL,
  pricing_version       integer NOT NULL,
  invoice_number        text NOT NULL,
  line_key              text NOT NULL,
  service_period_start  date NOT NULL,
  service_period_end    date NOT NULL,
  event_timestamp       timestamptz NOT NULL,
  ingested_at           timestamptz NOT NULL,
  status                text NOT NULL CHECK (status IN ('accepted', 'rated')),
  PRIMARY KEY (company_id, id)
);
CREATE INDEX usage_events_newest_idx ON usage_events (company_id, seq DESC);
CREATE INDEX usage_events_contract_idx ON usage_events (company_id, contract_id, service_period_start, seq DESC);
CREATE INDEX usage_events_invoice_idx ON usage_events (company_id, invoice_number, line_key);
