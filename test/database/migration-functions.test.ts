/**
 * Database functions are defined by migrations/functions/*.sql, applied again at every start (src/db/migrate.ts).
 * A database migrated by an earlier release, where numbered migrations created and replaced them, must end
 * with exactly the functions a new database gets. test/fixtures/migrations-v1 holds the numbered migrations
 * that changed when the definitions moved, as they were before (0004, 0005, 0009-0011); with the unchanged
 * ones from migrations/, they replay the earlier releases without git. test/fixtures/functions-v2 holds the
 * function files of the release that ended at 0012, before 0013 moved invoice arithmetic into code.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Database, Queryable } from "../../src/db/database.js";
import { loadFunctions, loadMigrations, migrate } from "../../src/db/migrate.js";
import { createTestDatabase, describeEachEngine, type EngineName } from "../support/harness.js";

const frozen = new Map(
  loadMigrations(fileURLToPath(new URL("../fixtures/migrations-v1", import.meta.url))).map((m) => [m.version, m]),
);
const oldMigrations = loadMigrations()
  .filter((m) => m.version < "0012")
  .map((m) => frozen.get(m.version) ?? m);
assert.equal(oldMigrations.length, 11, "the releases before the function files had migrations 0001-0011");
const v2Migrations = loadMigrations().filter((m) => m.version <= "0012");
const v2Functions = loadFunctions(fileURLToPath(new URL("../fixtures/functions-v2", import.meta.url)));

interface FunctionRow {
  signature: string;
  definition: string;
  acl: string | null;
}

/** Every billing_* function of the public schema, by signature, as PostgreSQL would recreate it. */
async function billingFunctions(db: Queryable): Promise<FunctionRow[]> {
  const { rows } = await db.query<FunctionRow>(
    `SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition, p.proacl::text AS acl
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.proname LIKE 'billing\\_%'
      ORDER BY 1`,
  );
  return rows;
}

/**
 * What a database migrated by a release before checksums holds: no checksum (migrate records the texts of
 * this release then). Those releases' texts of 0004, 0005 and 0009-0011 differ from today's files: they were
 * emptied in place before migrations were frozen.
 */
async function forgetChecksums(db: Queryable): Promise<void> {
  await db.query("UPDATE schema_migrations SET checksum = NULL");
}

async function withDatabase<T>(engine: EngineName, work: (db: Database) => Promise<T>): Promise<T> {
  const database = await createTestDatabase(engine);
  try {
    return await work(database.db);
  } finally {
    await database.drop();
  }
}

describeEachEngine("migration functions", (t, engine) => {
  let fresh: FunctionRow[];

  it("gives a new database one function per file of migrations/functions, as the file defines it", async () => {
    fresh = await withDatabase(engine, async (db) => {
      await migrate(db);
      return billingFunctions(db);
    });
    const names = fresh.map((f) => f.signature.replace(/\(.*$/, ""));
    assert.deepEqual(
      names,
      loadFunctions()
        .map((f) => f.name)
        .sort(),
    );
    const ingest = fresh.find((f) => f.signature.startsWith("billing_ingest_usage_lines("));
    assert.match(ingest!.definition, /SET plan_cache_mode TO 'force_generic_plan'/);
    assert.match(ingest!.definition, /SET random_page_cost TO '1\.1'/);
    // The service's own database (migrated by createApp) agrees.
    assert.deepEqual(await billingFunctions(t().app.db), fresh);
  });

  // 0: empty; 5: the first ingest function; 8: just before it was replaced; 9, 10, 11: each step of its successor.
  for (const k of [0, 5, 8, 9, 10, 11]) {
    it(`brings a database migrated up to ${k === 0 ? "nothing" : oldMigrations[k - 1]!.version} to the same functions`, async () => {
      assert.ok(fresh, "the new database's functions were read");
      await withDatabase(engine, async (db) => {
        // The earlier releases' migrate: numbered files only, and no checksums kept.
        assert.deepEqual(
          await migrate(db, oldMigrations.slice(0, k), []),
          oldMigrations.slice(0, k).map((m) => m.version),
        );
        await forgetChecksums(db);
        const before = (await billingFunctions(db)).map((f) => f.signature.replace(/\(.*$/, ""));
        if (k >= 5 && k < 9) assert.ok(before.includes("billing_ingest_usage"), "the dead function is there to drop");
        await migrate(db);
        assert.deepEqual(await billingFunctions(db), fresh);
        const { rows } = await db.query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version");
        assert.deepEqual(
          rows.map((r) => r.version),
          loadMigrations().map((m) => m.version),
        );
      });
    });
  }

  it("brings a database of the release with function files (0012, rounding in SQL) to the same functions", async () => {
    assert.ok(fresh, "the new database's functions were read");
    await withDatabase(engine, async (db) => {
      await migrate(db, v2Migrations, v2Functions);
      await forgetChecksums(db);
      const before = (await billingFunctions(db)).map((f) => f.signature.replace(/\(.*$/, ""));
      assert.ok(
        before.includes("billing_round_half_even") && before.includes("billing_fee_unit_price"),
        "the helpers are there to drop",
      );
      await migrate(db);
      assert.deepEqual(await billingFunctions(db), fresh);
    });
  });

  it("applies the function files again on every run, keeping each function (same oid) and changing nothing", async () => {
    const db = t().app.db;
    const rowVersions = () =>
      db.query<{ oid: string; xmin: string }>(
        "SELECT oid::text, xmin::text FROM pg_proc WHERE proname LIKE 'billing\\_%' ORDER BY oid",
      );
    const before = await billingFunctions(db);
    const first = (await rowVersions()).rows;
    assert.deepEqual(await migrate(db), []);
    assert.deepEqual(await migrate(db), []);
    const second = (await rowVersions()).rows;
    assert.deepEqual(
      second.map((r) => r.oid),
      first.map((r) => r.oid),
    );
    for (const [i, row] of second.entries()) assert.notEqual(row.xmin, first[i]!.xmin, "CREATE OR REPLACE ran again");
    assert.deepEqual(await billingFunctions(db), before);
  });

  it("refuses a function file whose body does not compile, and keeps the functions as they were", async () => {
    const db = t().app.db;
    const before = await billingFunctions(db);
    const broken = [
      {
        name: "billing_broken_sql",
        sql: "CREATE OR REPLACE FUNCTION billing_broken_sql() RETURNS integer LANGUAGE sql AS $$ SELECT no_such_column FROM invoices $$",
      },
      {
        name: "billing_broken_plpgsql",
        sql: "CREATE OR REPLACE FUNCTION billing_broken_plpgsql() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RETURN 1 END $$",
      },
    ];
    for (const file of broken) {
      await assert.rejects(migrate(db, loadMigrations(), [...loadFunctions(), file]), /syntax error|does not exist/);
      assert.deepEqual(await billingFunctions(db), before, `${file.name}: the transaction was rolled back`);
    }
  });
});
