-- Companies (tenants), their API keys and their dashboard users.
-- Every table holding company data carries company_id first in its keys, so the schema can be
-- distributed by company (Citus) later; api_keys is looked up by hash before the company is known
-- and would be a reference table there.

CREATE TABLE companies (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL
);
CREATE INDEX companies_name_idx ON companies (name);  -- names are not unique; bootstrap takes the oldest

CREATE TABLE api_keys (
  id          uuid PRIMARY KEY,
  company_id  uuid NOT NULL REFERENCES companies (id),
  name        text,
  prefix      text NOT NULL,          -- first characters of the key, for recognition only
  key_hash    bytea NOT NULL,         -- SHA-256 of the whole key; the key itself is never stored
  scopes      text[],                 -- NULL means every scope
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz,
  revoked_at  timestamptz
);
CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_company_idx ON api_keys (company_id, created_at);

CREATE TABLE users (
  id             uuid PRIMARY KEY,
  company_id     uuid NOT NULL REFERENCES companies (id),
  email          text NOT NULL,       -- stored lower-cased
  password_hash  text NOT NULL,       -- argon2id PHC string
  created_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE INDEX users_company_idx ON users (company_id);
