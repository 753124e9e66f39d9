-- The language and conventions an invoice's documents are written in (docs/decisions.md, "Invoice documents"):
-- dates ("December 1, 2026") and money ("$1,234.50") on the PDF, the hosted page and the email. A BCP 47 tag
-- that Intl knows; en-US unless the company sets another.
ALTER TABLE companies ADD COLUMN locale text NOT NULL DEFAULT 'en-US';
