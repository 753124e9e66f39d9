-- Contracts uploaded with their signed agreement (docs/api.md, "Uploading a contract"). The PDF is kept in the
-- database, as sent: it is saved in the same transaction as its contract (a failure leaves neither), backed
-- up with it, and served only to its own company. A document no contract points at is a dashboard upload
-- waiting for its terms to be reviewed; it is deleted a day later.
CREATE TABLE contract_documents (
  company_id  uuid NOT NULL REFERENCES companies (id),
  id          uuid NOT NULL,
  filename    text NOT NULL,
  content     bytea NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 10485760),
  sha256      text NOT NULL,    -- hex of the content, shown with the contract and checked by verify
  reading     jsonb,            -- the terms read from the PDF's text, for the review form (null: none read)
  created_at  timestamptz NOT NULL,
  seq         bigint GENERATED ALWAYS AS IDENTITY,  -- upload order: a company keeps its newest waiting uploads
  PRIMARY KEY (company_id, id)
);

-- NULL: the contract's agreement is the generated one (pdf_url is its token link).
ALTER TABLE contracts ADD COLUMN document_id uuid;
ALTER TABLE contracts ADD CONSTRAINT contracts_document_fkey
  FOREIGN KEY (company_id, document_id) REFERENCES contract_documents (company_id, id);
CREATE UNIQUE INDEX contracts_document_key ON contracts (company_id, document_id) WHERE document_id IS NOT NULL;
