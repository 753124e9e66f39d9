-- Webhook endpoints and their deliveries. A delivery row is written in the same transaction as the event it
-- carries (outbox.ts), one per enabled endpoint subscribed to the event's type.

CREATE TABLE webhook_endpoints (
  company_id   uuid NOT NULL REFERENCES companies (id),
  id           uuid NOT NULL,
  url          text NOT NULL,
  description  text,
  events       text[] NOT NULL,
  enabled      boolean NOT NULL,
  -- The signing secret is needed as it is to compute each HMAC, so it cannot be stored hashed; it is never
  -- logged and shown only on create, rotate and update (spec section 2).
  secret       text NOT NULL,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (company_id, id)
);

CREATE TABLE webhook_deliveries (
  company_id        uuid NOT NULL,
  id                uuid NOT NULL,
  endpoint_id       uuid NOT NULL,
  event_id          text NOT NULL,
  event_type        text NOT NULL,
  payload           text NOT NULL,          -- the exact body sent, fixed when the event happened
  test              boolean NOT NULL,
  status            text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts          integer NOT NULL,
  last_status_code  integer,
  last_error        text,
  next_attempt_at   timestamptz,            -- pending: when the next attempt is due (or its lease ends)
  delivered_at      timestamptz,
  created_at        timestamptz NOT NULL,
  seq               bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE
);
-- What the workers claim: due pending deliveries, across companies.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (company_id, endpoint_id, seq DESC);
