/**
 * The embedded database has no autovacuum (PGlite is a single-user backend); the service analyzes and
 * vacuums its tables itself, by autovacuum's thresholds (src/db/embedded-maintenance.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { maintenanceDue, runEmbeddedMaintenance, startEmbeddedMaintenance } from "../../src/db/embedded-maintenance.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database, Queryable } from "../../src/db/database.js";
import { createTestDatabase, type EngineName, postgresSkip } from "../support/harness.js";

describe("maintenanceDue: autovacuum's default thresholds", () => {
  const never = { secondsSinceAnalyze: null, secondsSinceVacuum: null };
  const cases: [string, Parameters<typeof maintenanceDue>[0], { analyze: boolean; vacuum: boolean }][] = [
    [
      "never analyzed, few changes",
      { table: "t", reltuples: -1, modifiedSinceAnalyze: 50, dead: 0, insertedSinceVacuum: 50, ...never },
      { analyze: false, vacuum: false },
    ],
    [
      "never analyzed, 51 changes",
      { table: "t", reltuples: -1, modifiedSinceAnalyze: 51, dead: 0, insertedSinceVacuum: 51, ...never },
      { analyze: true, vacuum: false },
    ],
    [
      "1,000 rows, 150 changed",
      { table: "t", reltuples: 1000, modifiedSinceAnalyze: 150, dead: 0, insertedSinceVacuum: 0, ...never },
      { analyze: false, vacuum: false },
    ],
    [
      "1,000 rows, 151 changed",
      { table: "t", reltuples: 1000, modifiedSinceAnalyze: 151, dead: 0, insertedSinceVacuum: 0, ...never },
      { analyze: true, vacuum: false },
    ],
    [
      "1,000 rows, 251 dead",
      { table: "t", reltuples: 1000, modifiedSinceAnalyze: 0, dead: 251, insertedSinceVacuum: 0, ...never },
      { analyze: false, vacuum: true },
    ],
    [
      "1,000 rows, 250 dead",
      { table: "t", reltuples: 1000, modifiedSinceAnalyze: 0, dead: 250, insertedSinceVacuum: 0, ...never },
      { analyze: false, vacuum: false },
    ],
    [
      "1,000 rows, 1,201 inserted",
      { table: "t", reltuples: 1000, modifiedSinceAnalyze: 0, dead: 0, insertedSinceVacuum: 1201, ...never },
      { analyze: false, vacuum: true },
    ],
    [
      "1,000,000 rows, 100,001 changed",
      { table: "t", reltuples: 1e6, modifiedSinceAnalyze: 100_051, dead: 0, insertedSinceVacuum: 100_051, ...never },
      { analyze: true, vacuum: false },
    ],
    [
      "analyzed 59 s ago, 151 changed of 1,000",
      {
        table: "t",
        reltuples: 1000,
        modifiedSinceAnalyze: 151,
        dead: 251,
        insertedSinceVacuum: 0,
        secondsSinceAnalyze: 59,
        secondsSinceVacuum: 60,
      },
      { analyze: false, vacuum: true },
    ],
    [
      "vacuumed 30 s ago, 251 dead of 1,000",
      {
        table: "t",
        reltuples: 1000,
        modifiedSinceAnalyze: 151,
        dead: 251,
        insertedSinceVacuum: 0,
        secondsSinceAnalyze: 61,
        secondsSinceVacuum: 30,
      },
      { analyze: true, vacuum: false },
    ],
  ];
  for (const [name, activity, expected] of cases) {
    it(name, () => assert.deepEqual(maintenanceDue(activity), expected));
  }
});

async function lastMaintenance(db: Queryable, table: string) {
  const { rows } = await db.query<{ analyzed: boolean; vacuumed: boolean; reltuples: number }>(
    `SELECT (s.last_analyze IS NOT NULL) AS analyzed, (s.last_vacuum IS NOT NULL) AS vacuumed, c.reltuples::float8 AS reltuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = $1`,
    [table],
  );
  return rows[0]!;
}

for (const engine of ["pglite", "postgres"] as const satisfies readonly EngineName[]) {
  const skip = postgresSkip(engine);
  describe(`runEmbeddedMaintenance [${engine}]`, { skip }, () => {
    it("analyzes a table that changed past the threshold, vacuums one with dead rows, and leaves the others alone", async () => {
      const { db, drop } = await createTestDatabase(engine);
      try {
        await migrate(db);
        // PostgreSQL's own autovacuum must not take this table's turn during the test.
        if (engine === "postgres") await db.query("ALTER TABLE companies SET (autovacuum_enabled = false)");
        await runEmbeddedMaintenance(db);
        await db.query(
          "INSERT INTO companies (id, name, created_at) SELECT gen_random_uuid(), 'c' || n, now() FROM generate_series(1, 300) AS n",
        );
        await db.query("UPDATE companies SET name = name || '!'");
        const pass = await runEmbeddedMaintenance(db);
        assert.ok(pass.analyzed.includes("public.companies"), JSON.stringify(pass));
        assert.ok(pass.vacuumed.includes("public.companies"), JSON.stringify(pass));
        assert.ok(!pass.analyzed.includes("public.users"), "an untouched table is not analyzed");
        const companies = await lastMaintenance(db, "companies");
        assert.equal(companies.analyzed, true);
        assert.equal(companies.vacuumed, true);
        assert.equal(companies.reltuples, 300, "the planner now knows the table's size");
        const again = await runEmbeddedMaintenance(db);
        assert.ok(
          !again.analyzed.includes("public.companies") && !again.vacuumed.includes("public.companies"),
          JSON.stringify(again),
        );
      } finally {
        await drop();
      }
    });
  });
}

describe("the embedded database runs the maintenance on its own [pglite]", () => {
  it("analyzes a table soon after it changed, with no one asking, and says what it did", async () => {
    const passes: { analyzed: string[]; vacuumed: string[] }[] = [];
    const db = await openDatabase(
      { kind: "pglite", dataDir: "memory://", maintenanceIntervalMs: 20 },
      { maintenance: { onPass: (done) => passes.push(done) } },
    );
    try {
      await migrate(db);
      await db.query(
        "INSERT INTO companies (id, name, created_at) SELECT gen_random_uuid(), 'c' || n, now() FROM generate_series(1, 300) AS n",
      );
      for (let i = 0; !(await lastMaintenance(db, "companies")).analyzed; i++) {
        if (i > 500) assert.fail("companies was never analyzed");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await lastMaintenance(db, "companies")).reltuples, 300);
      assert.ok(
        passes.some((p) => p.analyzed.includes("public.companies")),
        JSON.stringify(passes),
      );
    } finally {
      await db.close();
    }
  });

  it("reports a failed pass and tries again at the next one", async () => {
    let calls = 0;
    const failing = {
      engine: "pglite",
      async query() {
        calls += 1;
        throw new Error("database is closing");
      },
    } as unknown as Database;
    const errors: unknown[] = [];
    const maintenance = startEmbeddedMaintenance(failing, 5, { onError: (error) => errors.push(error) });
    try {
      for (let i = 0; errors.length < 2; i++) {
        if (i > 500) assert.fail("the failures were not reported");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await maintenance.stop();
    }
    assert.match(String(errors[0]), /database is closing/);
    assert.ok(calls >= 2, "a second pass ran after the first failed");
  });
});
