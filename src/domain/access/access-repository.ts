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
}

export interface UserRow {
  id: string;
  company_id: string;
  email: string;
  password_hash: string;
  created_at: Date;
}

export async function insertCompany(db: Queryable, company: CompanyRow): Promise<void> {
  await db.query("INSERT INTO companies (id, name, created_at) VALUES ($1, $2, $3)", [
    company.id,
    company.name,
    company.created_at,
  ]);
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

/** Serialises bootstrap across processes starting together. */
export async function lockBootstrap(tx: Queryable): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [727_002]);
}
