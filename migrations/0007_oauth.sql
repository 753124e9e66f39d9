-- OAuth 2.1 for the MCP server: dynamically registered (public) clients, pending authorization requests,
-- authorization codes and tokens. Codes and tokens are stored as SHA-256 hashes only.

CREATE TABLE oauth_clients (
  client_id   text PRIMARY KEY,
  metadata    jsonb NOT NULL,           -- RFC 7591 client metadata as registered
  created_at  timestamptz NOT NULL
);

-- An authorize call waiting for its user: the login and consent forms carry its id (random, single-use).
CREATE TABLE oauth_requests (
  id           text PRIMARY KEY,
  client_id    text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  params       jsonb NOT NULL,          -- redirect_uri, code_challenge, state, scopes, resource
  user_id      uuid,                    -- set once the user has logged in
  company_id   uuid,
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL
);

CREATE TABLE oauth_codes (
  code_hash       bytea PRIMARY KEY,
  client_id       text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  company_id      uuid NOT NULL REFERENCES companies (id),
  user_id         uuid NOT NULL,
  scopes          text[] NOT NULL,
  code_challenge  text NOT NULL,
  redirect_uri    text NOT NULL,
  resource        text,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  created_at      timestamptz NOT NULL
);

CREATE TABLE oauth_tokens (
  token_hash  bytea PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('access', 'refresh')),
  client_id   text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  company_id  uuid NOT NULL REFERENCES companies (id),
  user_id     uuid NOT NULL,
  scopes      text[] NOT NULL,
  resource    text,
  family      bytea NOT NULL,           -- the code the chain of tokens grew from: reuse revokes the family
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz,
  created_at  timestamptz NOT NULL
);
CREATE INDEX oauth_tokens_family_idx ON oauth_tokens (family);
