/**
 * Databases for tests, on either engine. Two kinds:
 * - `createTestDatabase`: a brand-new empty database (the migration and start-up suites need one);
 * - `createMigratedTestDatabase`: a copy of a database already migrated, what nearly every suite needs.
 *   The migrated original (the template) is built once per test run and engine, not once per suite: PGlite's
 *   initdb alone takes seconds. node:test runs each file in a process of its own, so the template is shared
 *   between processes, named by a hash of the migrations and functions (a changed file builds a new one), and
 *   built by one process at a time on PostgreSQL (an advisory lock); on PGlite it is a data folder's tarball,
 *   written aside and renamed into place when whole, that each copy is loaded from into memory. The service still migrates at start-up (createApp): on a copy that finds
 *   every migration applied with its checksum, and it applies the functions again, as on any start.
 *
 * The PostgreSQL suites skip, saying so, when TEST_DATABASE_URL is not set: `postgresSkip` is that one rule.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { Database } from "../../src/db/database.js";
import { loadFunctions, loadMigrations, migrate } from "../../src/db/migrate.js";
import { openDatabase, type StorageConfig } from "../../src/db/open-database.js";

export type EngineName = "pglite" | "postgres";

export interface TestDatabase {
  engine: EngineName;
  storage: StorageConfig;
  db: Database;
  drop(): Promise<void>;
}

const testDatabaseUrl = process.env.TEST_DATABASE_URL;

/** node:test's `skip` for a suite on `engine`: PostgreSQL's suites skip, saying why, without TEST_DATABASE_URL. */
export function postgresSkip(engine: EngineName = "postgres"): string | false {
  return engine === "postgres" && !testDatabaseUrl ? "TEST_DATABASE_URL is not set" : false;
}

/** A brand-new empty database on the engine. */
export async function createTestDatabase(engine: EngineName): Promise<TestDatabase> {
  if (engine === "pglite") {
    const storage: StorageConfig = { kind: "pglite", dataDir: "memory://" };
    const db = await openDatabase(storage);
    return { engine, storage, db, drop: () => db.close() };
  }
  const name = `billing_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return openPostgresCopy(name);
}

/** A database of its own with every migration and function applied, copied from this run's template. */
export async function createMigratedTestDatabase(engine: EngineName): Promise<TestDatabase> {
  if (engine === "pglite") {
    const storage: StorageConfig = { kind: "pglite", dataDir: "memory://", loadDataDir: await pgliteTemplate() };
    const db = await openDatabase(storage);
    return { engine, storage, db, drop: () => db.close() };
  }
  const template = await postgresTemplate();
  const name = `billing_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  return openPostgresCopy(name);
}

/** The migrations' and functions' fingerprint, with PGlite's version (a data folder belongs to its release). */
function schemaFingerprint(): string {
  const hash = createHash("sha256");
  for (const file of [...loadMigrations(), ...loadFunctions()]) hash.update(`${file.sql}\0`);
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const packageRoot = entry.slice(0, entry.lastIndexOf("pglite") + "pglite".length);
  hash.update(readFileSync(join(packageRoot, "package.json")));
  return hash.digest("hex").slice(0, 16);
}

let pgliteTemplatePromise: Promise<Uint8Array<ArrayBuffer>> | undefined;

/**
 * A migrated PGlite data folder as a tarball (PGlite's dumpDataDir) under the temporary folder, built by the
 * first process that needs it; a memory:// database starts from it (StorageConfig's loadDataDir) in a fraction
 * of initdb's time.
 */
function pgliteTemplate(): Promise<Uint8Array<ArrayBuffer>> {
  pgliteTemplatePromise ??= (async () => {
    const file = join(tmpdir(), `billing-test-template-${schemaFingerprint()}.tar`);
    if (existsSync(file)) return new Uint8Array(readFileSync(file));
    // Built aside, then renamed into place: the file exists only once it is whole. Two processes may both
    // build one; either rename leaves a whole file.
    const building = mkdtempSync(join(tmpdir(), "billing-test-template-"));
    try {
      const dataDir = join(building, "data");
      const db = await openDatabase({ kind: "pglite", dataDir });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      const pglite = await PGlite.create(dataDir);
      const tarball = new Uint8Array(await (await pglite.dumpDataDir("none")).arrayBuffer());
      await pglite.close();
      writeFileSync(join(building, "data.tar"), tarball);
      renameSync(join(building, "data.tar"), file);
      return tarball;
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  })();
  return pgliteTemplatePromise;
}

// Any constant: the test processes that build the PostgreSQL template queue on it.
const TEMPLATE_LOCK_KEY = 727_002;
let postgresTemplatePromise: Promise<string> | undefined;

/** A migrated database marked as a template on the tests' server, built by the first process that needs it. */
function postgresTemplate(): Promise<string> {
  postgresTemplatePromise ??= (async () => {
    const name = `billing_template_${schemaFingerprint()}`;
    const admin = await adminClient();
    try {
      await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
      const { rows } = await admin.query<{ datistemplate: boolean }>(
        "SELECT datistemplate FROM pg_database WHERE datname = $1",
        [name],
      );
      if (rows[0]?.datistemplate) return name;
      // None, or one a process left half-built (it is marked a template only once migrated): built anew.
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
      const db = await openDatabase({ kind: "postgres", url: databaseUrl(name), poolSize: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true`);
      return name;
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]).catch(() => {});
      await admin.end();
    }
  })();
  return postgresTemplatePromise;
}

async function openPostgresCopy(name: string): Promise<TestDatabase> {
  const storage: StorageConfig = { kind: "postgres", url: databaseUrl(name), poolSize: 10 };
  const db = await openDatabase(storage);
  return {
    engine: "postgres",
    storage,
    db,
    async drop() {
      await db.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

function databaseUrl(name: string): string {
  if (!testDatabaseUrl) throw new Error("TEST_DATABASE_URL is not set");
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminClient(): Promise<pg.Client> {
  if (!testDatabaseUrl) throw new Error("TEST_DATABASE_URL is not set");
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  return admin;
}

async function adminQuery(sql: string): Promise<void> {
  const admin = await adminClient();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}
