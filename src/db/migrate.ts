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
 * match this release's files. Returns the versions it applied (function definitions are not counted).
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
    const applied = new Set(
      (await tx.query<{ version: string }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version),
    );
    const done: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await tx.query(migration.sql);
      await tx.query("INSERT INTO schema_migrations (version) VALUES ($1)", [migration.version]);
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
