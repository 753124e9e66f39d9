import type { CompanyScope } from "../../db/company-scope.js";
import type { Queryable } from "../../db/database.js";

export interface CompanyRow {
  id: string;
  name: string;
  created_at: Date;
}

export interface ApiKeyRow {
  id: string;
  company_id: string;
  name: string | null;
  prefix: string;
  key_hash: Buffer;
  scopes: string[] | null;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at?: Date | null;
}

export interface UserRow {
  id: string;
  company_id: string;
  email: string;
  password_hash: string;
  created_at: Date;
}

export async function findCompanyById(db: Queryable, id: string): Promise<CompanyRow | undefined> {
  const { rows } = await db.query<CompanyRow>("SELECT id, name, created_at FROM companies WHERE id = $1", [id]);
  return rows[0];
}

export async function findOldestCompanyByName(db: Queryable, name: string): Promise<CompanyRow | undefined> {
  const { rows } = await db.query<CompanyRow>(
    "SELECT id, name, created_at FROM companies WHERE name = $1 ORDER BY created_at, id LIMIT 1",
    [name],
  );
  return rows[0];
}

export async function insertApiKey(db: Queryable, key: ApiKeyRow): Promise<void> {
  await db.query(
    `INSERT INTO api_keys (id, company_id, name, prefix, key_hash, scopes, created_at, expires_at, revoked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      key.id,
      key.company_id,
      key.name,
      key.prefix,
      key.key_hash,
      key.scopes,
      key.created_at,
      key.expires_at,
      key.revoked_at,
    ],
  );
}

export async function findApiKeyByHash(db: Queryable, keyHash: Buffer): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT id, company_id, name, prefix, key_hash, scopes, created_at, expires_at, revoked_at
       FROM api_keys WHERE key_hash = $1`,
    [keyHash],
  );
  return rows[0];
}

/** Returns whether a live key was revoked. */
export async function revokeApiKey(db: Queryable, id: string, at: Date): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1
     RETURNING id, company_id, name, prefix, key_hash, scopes, created_at, expires_at, revoked_at`,
    [id, at],
  );
  return rows[0];
}

const API_KEY_COLUMNS =
  "id, company_id, name, prefix, key_hash, scopes, created_at, expires_at, revoked_at, last_used_at";

/** A company's keys, newest first (Settings → API keys). */
export async function listApiKeysOfCompany(db: CompanyScope): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE company_id = $1 ORDER BY created_at DESC, id DESC LIMIT 500`,
    [],
  );
  return rows;
}

export async function findApiKeyOfCompany(db: CompanyScope, id: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE company_id = $1 AND id = $2`,
    [id],
  );
  return rows[0];
}

export async function revokeApiKeyOfCompany(db: CompanyScope, id: string, at: Date): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE company_id = $1 AND id = $2 RETURNING ${API_KEY_COLUMNS}`,
    [id, at],
  );
  return rows[0];
}

export async function touchApiKey(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query(
    "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)",
    [id, at],
  );
}

export async function insertUser(db: Queryable, user: UserRow): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO users (id, company_id, email, password_hash, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (email) DO NOTHING`,
    [user.id, user.company_id, user.email, user.password_hash, user.created_at],
  );
  return result.rowCount === 1;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(
    "SELECT id, company_id, email, password_hash, created_at FROM users WHERE email = $1",
    [email],
  );
  return rows[0];
}

/** A new password; the user's dashboard sessions end with the old one. */
export async function setUserPassword(tx: Queryable, userId: string, passwordHash: string, at: Date): Promise<void> {
  await tx.query("UPDATE users SET password_hash = $2 WHERE id = $1", [userId, passwordHash]);
  await tx.query("UPDATE dashboard_sessions SET ended_at = COALESCE(ended_at, $2) WHERE user_id = $1", [userId, at]);
}

/** Serialises bootstrap across processes starting together. */
export async function lockBootstrap(tx: Queryable): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [727_002]);
}

export interface SessionRow {
  id: string;
  token_hash: Buffer;
  company_id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
}

export async function insertSession(db: Queryable, row: SessionRow): Promise<void> {
  await db.query(
    `INSERT INTO dashboard_sessions (id, token_hash, company_id, user_id, created_at, expires_at, ended_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [row.id, row.token_hash, row.company_id, row.user_id, row.created_at, row.expires_at, row.ended_at],
  );
}

export interface SessionWithUser extends SessionRow {
  email: string;
  company_name: string;
}

export async function findSessionByHash(db: Queryable, tokenHash: Buffer): Promise<SessionWithUser | undefined> {
  const { rows } = await db.query<SessionWithUser>(
    `SELECT s.id, s.token_hash, s.company_id, s.user_id, s.created_at, s.expires_at, s.ended_at, u.email, c.name AS company_name
       FROM dashboard_sessions s
       JOIN users u ON u.id = s.user_id AND u.company_id = s.company_id
       JOIN companies c ON c.id = s.company_id
      WHERE s.token_hash = $1`,
    [tokenHash],
  );
  return rows[0];
}

export async function endSession(db: Queryable, tokenHash: Buffer, at: Date): Promise<void> {
  await db.query("UPDATE dashboard_sessions SET ended_at = COALESCE(ended_at, $2) WHERE token_hash = $1", [
    tokenHash,
    at,
  ]);
}

/** A user's ended or expired sessions: deleted at each sign-in, so the table holds only live ones (and a few). */
export async function deleteStaleSessions(db: Queryable, userId: string, now: Date): Promise<void> {
  await db.query("DELETE FROM dashboard_sessions WHERE user_id = $1 AND (ended_at IS NOT NULL OR expires_at <= $2)", [
    userId,
    now,
  ]);
}
