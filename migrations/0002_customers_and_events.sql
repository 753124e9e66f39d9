-- Customers, and the transactional outbox of events (customer.created, contract.created) that the
-- webhook worker delivers. An event row is written in the same transaction as the resource it announces.

CREATE TABLE customers (
  company_id           uuid NOT NULL REFERENCES companies (id),
  id                   uuid NOT NULL,
  name                 text NOT NULL,
  external_id          text,
  email                text,
  domain               text,
  country              text,
  address              text,
  registration_number  text,
  payment_terms        text,          -- 'Net {n}'
  created_at           timestamptz NOT NULL,
  PRIMARY KEY (company_id, id)
);
CREATE UNIQUE INDEX customers_external_id_key ON customers (company_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX customers_newest_idx ON customers (company_id, created_at DESC, id DESC);

CREATE TABLE events (
  company_id  uuid NOT NULL REFERENCES companies (id),
  id          text NOT NULL,          -- evt_ + 32 hex
  type        text NOT NULL,
  body        text NOT NULL,          -- the exact serialized envelope receivers get (byte-stable for signing)
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (company_id, id)
);
CREATE INDEX events_newest_idx ON events (company_id, created_at DESC);
