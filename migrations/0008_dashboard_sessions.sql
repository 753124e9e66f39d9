-- The dashboard's sign-in sessions (issue 7). The cookie holds a random token; only its SHA-256 is stored,
-- as with API keys. The CSRF token is derived from the session token (HMAC), so it needs no column.

CREATE TABLE dashboard_sessions (
  id          uuid PRIMARY KEY,
  token_hash  bytea NOT NULL,
  company_id  uuid NOT NULL REFERENCES companies (id),
  user_id     uuid NOT NULL REFERENCES users (id),
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  ended_at    timestamptz             -- logout
);
CREATE UNIQUE INDEX dashboard_sessions_token_hash_key ON dashboard_sessions (token_hash);
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id);

-- Settings → API keys shows when each key was last used (written at most once a minute per key and process).
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
