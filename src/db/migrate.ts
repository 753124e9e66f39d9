import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Database, Tx } from "./database.js";

// Any constant shared by every process of the service; two processes starting together queue on it.
const MIGRATION_LOCK_KEY = 727_001;

function findMigrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "migrations");
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error("migrations folder not found");
}

export interface Migration {
  version: string;
  sql: string;
}

export function loadMigrations(dir = findMigrationsDir()): Migration[] {
  return readdirSync(dir)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: name.replace(/\.sql$/, ""), sql: readFileSync(join(dir, name), "utf8") }));
}

/**
 * A migration's fingerprint: the SHA-256 of its text with line endings made LF, so that a checkout that turns
 * them into CRLF (git's autocrlf on Windows) is still the same migration.
 */
export const migrationChecksum = (sql: string): string =>
  createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");

/** An applied migration whose file no longer holds the text that was applied: the service refuses to start. */
export class AppliedMigrationChangedError extends Error {
  constructor(readonly version: string) {
    super(
      `migrations/${version}.sql has changed since it was applied to this database: an applied migration is frozen. ` +
        `Restore the file as it was, and put the change in a new migration`,
    );
  }
}

/** A repeatable definition: `CREATE OR REPLACE FUNCTION <name> ...`, in migrations/functions/<name>.sql. */
export interface FunctionDefinition {
  name: string;
  sql: string;
}

export function loadFunctions(dir = join(findMigrationsDir(), "functions")): FunctionDefinition[] {
  return readdirSync(dir)
    .filter((name) => /^[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ name: name.replace(/\.sql$/, ""), sql: readFileSync(join(dir, name), "utf8") }));
}

/**
 * Applies pending migrations in order, then every function definition again, all in one transaction under an
 * advisory lock, so that two processes starting at once apply each file exactly once and the functions always
 * match this release's files. Returns the versions it applied (function definitions are not counted). Refuses,
 * naming the file, when an applied migration's text has changed (AppliedMigrationChangedError): applied
 * migrations are frozen, and a change goes into a new one.
 */
export async function migrate(
  db: Database,
  migrations = loadMigrations(),
  functions = loadFunctions(),
): Promise<string[]> {
  return db.transaction(async (tx) => {
    // A migration may build an index over a large table: the pool's one-minute statement deadline is for
    // requests, not for this. (A second process waits here for the lock, also without a deadline.)
    await tx.query("SET LOCAL statement_timeout = 0");
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    // Each applied migration's SHA-256 (migrationChecksum). Rows from before checksums were kept take the
    // text of the release that first records them; from then on the text must stay what it is.
    await tx.query("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text");
    const applied = new Map(
      (
        await tx.query<{ version: string; checksum: string | null }>("SELECT version, checksum FROM schema_migrations")
      ).rows.map((r) => [r.version, r.checksum]),
    );
    const done: string[] = [];
    for (const migration of migrations) {
      const checksum = migrationChecksum(migration.sql);
      if (applied.has(migration.version)) {
        const recorded = applied.get(migration.version);
        if (recorded === null)
          await tx.query("UPDATE schema_migrations SET checksum = $2 WHERE version = $1", [
            migration.version,
            checksum,
          ]);
        else if (recorded !== checksum) throw new AppliedMigrationChangedError(migration.version);
        continue;
      }
      await tx.query(migration.sql);
      await tx.query("INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)", [
        migration.version,
        checksum,
      ]);
      done.push(migration.version);
    }
    await applyFunctions(tx, functions);
    return done;
  });
}

/**
 * Runs every definition (CREATE OR REPLACE: an unchanged one costs about a millisecond). Bodies are checked
 * only once all exist, so that a file may call a function defined in a file sorted after it.
 */
async function applyFunctions(tx: Tx, functions: FunctionDefinition[]): Promise<void> {
  if (functions.length === 0) return;
  await tx.query("SET LOCAL check_function_bodies = off");
  for (const definition of functions) await tx.query(definition.sql);
  await tx.query("SET LOCAL check_function_bodies = on");
  // What CREATE FUNCTION would have checked, now that every function exists: each language's validator.
  const { rows } = await tx.query<{ oid: number; validator: string }>(
    `SELECT p.oid, l.lanvalidator::regproc::text AS validator
       FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
      WHERE p.pronamespace = current_schema()::regnamespace AND p.proname = ANY($1) AND l.lanvalidator <> 0
      ORDER BY p.oid`,
    [functions.map((f) => f.name)],
  );
  for (const row of rows) await tx.query(`SELECT ${row.validator}($1)`, [row.oid]);
}
