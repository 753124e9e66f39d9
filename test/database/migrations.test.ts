import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Database } from "../../src/db/database.js";
import { AppliedMigrationChangedError, loadMigrations, migrate, migrationChecksum } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import { createTestDatabase, describeEachEngine, postgresSkip } from "../support/harness.js";

const versions = () => loadMigrations().map((m) => m.version);

async function appliedVersions(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version");
  return rows.map((r) => r.version);
}

async function tableNames(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  );
  return rows.map((r) => r.table_name);
}

describeEachEngine("migrations", (t, engine) => {
  it("applies nothing when run again on a database the service already migrated", async () => {
    assert.deepEqual(await migrate(t().app.db), []);
    assert.deepEqual(await appliedVersions(t().app.db), versions());
  });

  it("applies every migration in order on a fresh database, then nothing the second time", async () => {
    const database = await createTestDatabase(engine);
    try {
      assert.deepEqual(await tableNames(database.db), []);
      assert.deepEqual(await migrate(database.db), versions());
      const tables = await tableNames(database.db);
      for (const table of ["api_keys", "companies", "customers", "events", "schema_migrations", "users"]) {
        assert.ok(tables.includes(table), `table ${table} exists`);
      }
      assert.deepEqual(await migrate(database.db), []);
      assert.deepEqual(await tableNames(database.db), tables, "the second run changed no tables");
      assert.deepEqual(await appliedVersions(database.db), versions());
    } finally {
      await database.drop();
    }
  });

  it("plans the ingest function generically and with in-memory page costs (docs/performance.md, steps 8 and 14)", async () => {
    const { rows } = await t().app.db.query<{ config: string[] }>(
      "SELECT proconfig AS config FROM pg_proc WHERE proname = 'billing_ingest_usage_lines'",
    );
    assert.equal(rows.length, 1, "one ingest function");
    assert.deepEqual([...rows[0]!.config].sort(), ["plan_cache_mode=force_generic_plan", "random_page_cost=1.1"]);
  });

  it("records each applied migration's SHA-256, and refuses to run when an applied migration's text has changed", async () => {
    const { rows } = await t().app.db.query<{ version: string; checksum: string }>(
      "SELECT version, checksum FROM schema_migrations ORDER BY version",
    );
    assert.deepEqual(
      rows,
      loadMigrations().map((m) => ({ version: m.version, checksum: migrationChecksum(m.sql) })),
    );
    const edited = loadMigrations().map((m) =>
      m.version === "0003_contracts_and_pricing" ? { ...m, sql: `${m.sql}\n-- one more line\n` } : m,
    );
    await assert.rejects(migrate(t().app.db, edited), (error: unknown) => {
      assert.ok(error instanceof AppliedMigrationChangedError);
      assert.match(error.message, /^migrations\/0003_contracts_and_pricing\.sql has changed since it was applied/);
      return true;
    });
    // The same text with Windows line endings is the same migration.
    const crlf = loadMigrations().map((m) => ({ ...m, sql: m.sql.replace(/\n/g, "\r\n") }));
    assert.deepEqual(await migrate(t().app.db, crlf), []);
  });

  it("records the checksums of a database migrated before they were kept, then holds it to them", async () => {
    const database = await createTestDatabase(engine);
    try {
      await migrate(database.db);
      await database.db.query("UPDATE schema_migrations SET checksum = NULL");
      assert.deepEqual(await migrate(database.db), []);
      const { rows } = await database.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM schema_migrations WHERE checksum IS NULL",
      );
      assert.equal(rows[0]!.n, 0);
    } finally {
      await database.drop();
    }
  });

  it("keeps existing data when run again", async () => {
    const company = await t().app.services.access.createCompany("Survives migrations");
    await migrate(t().app.db);
    const { rows } = await t().app.db.query<{ name: string }>("SELECT name FROM companies WHERE id = $1", [company.id]);
    assert.deepEqual(rows, [{ name: "Survives migrations" }]);
  });
});

describe("migrations under concurrent start-up [postgres]", {
  skip: postgresSkip(),
}, () => {
  it("applies each migration exactly once when several processes migrate a fresh database at once", async () => {
    const database = await createTestDatabase("postgres");
    const others = [
      await openDatabase(database.storage),
      await openDatabase(database.storage),
      await openDatabase(database.storage),
    ];
    try {
      const results = await Promise.all([database.db, ...others].map((db) => migrate(db)));
      const applying = results.filter((applied) => applied.length > 0);
      assert.equal(applying.length, 1, "one process applied the migrations, the others found them done");
      assert.deepEqual(applying[0], versions());
      assert.deepEqual(await appliedVersions(database.db), versions());
      for (const db of others) assert.deepEqual(await migrate(db), []);
    } finally {
      for (const db of others) await db.close();
      await database.drop();
    }
  });
});
