-- What an issued invoice's documents show, kept as issued (docs/api.md, "Invoices", the PDF): `invoices.parties`
-- (migration 0020) holds the seller's and the customer's details as of the issue, and names the seller's logo by
-- its SHA-256; the logo's bytes are kept here, once per company and content, so that replacing or removing the
-- account's logo never changes an invoice already issued with it.
CREATE TABLE invoice_logos (
  company_id    uuid NOT NULL REFERENCES companies (id),
  sha256        text NOT NULL,          -- hex, of `bytes`
  content_type  text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  bytes         bytea NOT NULL,
  PRIMARY KEY (company_id, sha256)
);
