-- Invoices that reach their customers (docs/api.md, "Delivery"): a message log that is also the outbox the mail
-- worker sends from, reminders around the due date, and a hosted page per issued invoice.

-- When reminders go, in days from the due date (negative: before it). Empty: no reminders.
ALTER TABLE companies
  ADD COLUMN reminder_days integer[] NOT NULL DEFAULT '{-3,1,7}';

-- The hosted page's link: made when the invoice is issued (NULL on drafts), replaced when revoked. The link is
-- kept to be shown again (`hosted_url`); a visitor's token is looked up by its SHA-256, one indexed equality, so
-- that no comparison of the token itself can time a guess.
ALTER TABLE invoices
  ADD COLUMN hosted_url            text,
  ADD COLUMN hosted_token_sha256   bytea;
CREATE UNIQUE INDEX invoices_hosted_token_key ON invoices (hosted_token_sha256) WHERE hosted_token_sha256 IS NOT NULL;

-- Every message about an invoice: written in the transaction that caused it (issue, a reminder's round, a
-- resend), sent by the mail worker with retries, and kept as the invoice's log.
CREATE TABLE invoice_messages (
  company_id       uuid NOT NULL,
  id               uuid NOT NULL,
  invoice_number   text NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('issued', 'reminder', 'manual')),
  reminder_day     integer,                -- a reminder's day, from the due date (one message per day and invoice)
  recipient        text,                   -- NULL: the customer had no email address (the message failed)
  status           text NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  last_error       text,
  next_attempt_at  timestamptz,            -- queued: when the next attempt is due (or its lease ends)
  sent_at          timestamptz,
  created_at       timestamptz NOT NULL,
  seq              bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, invoice_number) REFERENCES invoices (company_id, number),
  CHECK ((kind = 'reminder') = (reminder_day IS NOT NULL))
);
-- What the mail workers claim: due queued messages, across companies.
CREATE INDEX invoice_messages_due_idx ON invoice_messages (next_attempt_at) WHERE status = 'queued';
CREATE INDEX invoice_messages_invoice_idx ON invoice_messages (company_id, invoice_number, seq DESC);
CREATE UNIQUE INDEX invoice_messages_reminder_key ON invoice_messages (company_id, invoice_number, reminder_day)
  WHERE kind = 'reminder';
-- The reminders' round reads the issued invoices by due date.
CREATE INDEX invoices_issued_due_idx ON invoices (due_date) WHERE status = 'issued';
