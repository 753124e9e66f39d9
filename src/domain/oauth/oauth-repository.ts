import type { Queryable } from "../../db/database.js";

export interface OAuthClientRow {
  client_id: string;
  metadata: Record<string, unknown>;
  created_at: Date;
}

export interface OAuthRequestRow {
  id: string;
  client_id: string;
  params: {
    redirectUri: string;
    codeChallenge: string;
    state: string | null;
    scopes: string[];
    resource: string | null;
  };
  user_id: string | null;
  company_id: string | null;
  expires_at: Date;
}

export interface OAuthCodeRow {
  code_hash: Buffer;
  client_id: string;
  company_id: string;
  user_id: string;
  scopes: string[];
  code_challenge: string;
  redirect_uri: string;
  resource: string | null;
  expires_at: Date;
  used_at: Date | null;
}

export interface OAuthTokenRow {
  token_hash: Buffer;
  kind: "access" | "refresh";
  client_id: string;
  company_id: string;
  user_id: string;
  scopes: string[];
  resource: string | null;
  family: Buffer;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function insertClient(db: Queryable, row: OAuthClientRow): Promise<void> {
  await db.query("INSERT INTO oauth_clients (client_id, metadata, created_at) VALUES ($1, $2, $3)", [
    row.client_id,
    JSON.stringify(row.metadata),
    row.created_at,
  ]);
}

export async function findClient(db: Queryable, clientId: string): Promise<OAuthClientRow | undefined> {
  const { rows } = await db.query<OAuthClientRow>(
    "SELECT client_id, metadata, created_at FROM oauth_clients WHERE client_id = $1",
    [clientId],
  );
  return rows[0];
}

export async function insertRequest(db: Queryable, row: OAuthRequestRow, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO oauth_requests (id, client_id, params, user_id, company_id, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [row.id, row.client_id, JSON.stringify(row.params), row.user_id, row.company_id, row.expires_at, now],
  );
}

export async function findRequest(db: Queryable, id: string): Promise<OAuthRequestRow | undefined> {
  const { rows } = await db.query<OAuthRequestRow>(
    "SELECT id, client_id, params, user_id, company_id, expires_at FROM oauth_requests WHERE id = $1",
    [id],
  );
  return rows[0];
}

/** Records who logged in for a request, and moves it to a new id for the consent step. */
export async function setRequestUser(
  db: Queryable,
  id: string,
  newId: string,
  userId: string,
  companyId: string,
): Promise<void> {
  await db.query("UPDATE oauth_requests SET id = $2, user_id = $3, company_id = $4 WHERE id = $1 AND user_id IS NULL", [
    id,
    newId,
    userId,
    companyId,
  ]);
}

/** Takes a request away (single use); returns it if it was there. */
export async function deleteRequest(db: Queryable, id: string): Promise<OAuthRequestRow | undefined> {
  const { rows } = await db.query<OAuthRequestRow>(
    "DELETE FROM oauth_requests WHERE id = $1 RETURNING id, client_id, params, user_id, company_id, expires_at",
    [id],
  );
  return rows[0];
}

export async function insertCode(db: Queryable, row: OAuthCodeRow, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO oauth_codes (code_hash, client_id, company_id, user_id, scopes, code_challenge, redirect_uri, resource,
                              expires_at, used_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10)`,
    [
      row.code_hash,
      row.client_id,
      row.company_id,
      row.user_id,
      row.scopes,
      row.code_challenge,
      row.redirect_uri,
      row.resource,
      row.expires_at,
      now,
    ],
  );
}

export async function findCode(db: Queryable, codeHash: Buffer): Promise<OAuthCodeRow | undefined> {
  const { rows } = await db.query<OAuthCodeRow>(
    `SELECT code_hash, client_id, company_id, user_id, scopes, code_challenge, redirect_uri, resource, expires_at, used_at
       FROM oauth_codes WHERE code_hash = $1`,
    [codeHash],
  );
  return rows[0];
}

/** Marks a code used; false if it was used already (by a concurrent exchange too). */
export async function useCode(db: Queryable, codeHash: Buffer, now: Date): Promise<boolean> {
  const result = await db.query("UPDATE oauth_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL", [
    codeHash,
    now,
  ]);
  return result.rowCount === 1;
}

export async function insertToken(db: Queryable, row: OAuthTokenRow, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO oauth_tokens (token_hash, kind, client_id, company_id, user_id, scopes, resource, family, expires_at, revoked_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10)`,
    [
      row.token_hash,
      row.kind,
      row.client_id,
      row.company_id,
      row.user_id,
      row.scopes,
      row.resource,
      row.family,
      row.expires_at,
      now,
    ],
  );
}

/** A live token whose user still exists. */
export async function findLiveToken(
  db: Queryable,
  tokenHash: Buffer,
  kind: "access" | "refresh",
  now: Date,
): Promise<OAuthTokenRow | undefined> {
  const { rows } = await db.query<OAuthTokenRow>(
    `SELECT t.token_hash, t.kind, t.client_id, t.company_id, t.user_id, t.scopes, t.resource, t.family, t.expires_at, t.revoked_at
       FROM oauth_tokens t JOIN users u ON u.id = t.user_id AND u.company_id = t.company_id
      WHERE t.token_hash = $1 AND t.kind = $2 AND t.revoked_at IS NULL AND t.expires_at > $3`,
    [tokenHash, kind, now],
  );
  return rows[0];
}

export async function findTokenAnyState(db: Queryable, tokenHash: Buffer): Promise<OAuthTokenRow | undefined> {
  const { rows } = await db.query<OAuthTokenRow>(
    `SELECT token_hash, kind, client_id, company_id, user_id, scopes, resource, family, expires_at, revoked_at
       FROM oauth_tokens WHERE token_hash = $1`,
    [tokenHash],
  );
  return rows[0];
}

/** Revokes one token; true if it was live. */
export async function revokeToken(db: Queryable, tokenHash: Buffer, now: Date): Promise<boolean> {
  const result = await db.query(
    "UPDATE oauth_tokens SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL",
    [tokenHash, now],
  );
  return result.rowCount === 1;
}

/** Revokes every token grown from one authorization code (code reuse, refresh-token reuse). */
export async function revokeFamily(db: Queryable, family: Buffer, now: Date): Promise<void> {
  await db.query("UPDATE oauth_tokens SET revoked_at = $2 WHERE family = $1 AND revoked_at IS NULL", [family, now]);
}
