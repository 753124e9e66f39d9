/**
 * PGlite on its own thread (pglite-thread.ts, pglite-worker.ts) must look exactly like PGlite in-process:
 * the same values and types for every column kind the domain reads, the same errors (code, message,
 * constraint), the same transaction semantics, and an idle database must not hold the process open.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database } from "./database.js";
import { migrate } from "./migrate.js";
import { openDatabase } from "./open-database.js";

const typesQuery = `
  SELECT 9007199254740993::int8 AS big, 12.3400::numeric AS money, 0.1::numeric(20,12) AS rate,
         '2026-03-04T05:06:07.089Z'::timestamptz AS at, '2026-02-28'::date AS day,
         '\\x00ff10'::bytea AS raw, '{"a": [1, "two", null], "b": {"c": 1.5}}'::jsonb AS doc,
         '{"x": 1}'::json AS plain, ARRAY['a', 'b,c', NULL]::text[] AS names, ARRAY[1, 2]::int8[] AS bigs,
         ARRAY[1.5, 2]::numeric[] AS amounts, 42::int4 AS small, 7::int2 AS tiny, 1.5::float8 AS float,
         true AS yes, NULL::text AS nothing, 'héllo ✓'::text AS text, '00000000-0000-4000-8000-000000000001'::uuid AS id,
         '1 day'::interval AS span, ARRAY[]::text[] AS empty`;

describe("PGlite on a worker thread", () => {
  let thread: Database;
  let inProcess: Database;

  before(async () => {
    thread = await openDatabase({ kind: "pglite", dataDir: "memory://", runOn: "thread" });
    inProcess = await openDatabase({ kind: "pglite", dataDir: "memory://", runOn: "in-process" });
    for (const db of [thread, inProcess]) {
      await db.query("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, amount numeric NOT NULL DEFAULT 0)");
    }
  });
  after(async () => {
    await thread.close();
    await inProcess.close();
  });

  it("returns the same values and types as in-process PGlite", async () => {
    const [a, b] = await Promise.all([thread.query(typesQuery), inProcess.query(typesQuery)]);
    assert.deepEqual(a.rows, b.rows);
    const row = a.rows[0] as Record<string, unknown>;
    assert.equal(row.big, "9007199254740993");
    assert.equal(row.money, "12.3400");
    assert.equal(row.rate, "0.100000000000");
    assert.ok(row.at instanceof Date);
    assert.equal((row.at as Date).toISOString(), "2026-03-04T05:06:07.089Z");
    assert.equal(row.day, "2026-02-28");
    assert.ok(Buffer.isBuffer(row.raw));
    assert.deepEqual([...(row.raw as Buffer)], [0, 255, 16]);
    assert.deepEqual(row.doc, { a: [1, "two", null], b: { c: 1.5 } });
    assert.deepEqual(row.plain, { x: 1 });
    assert.deepEqual(row.names, ["a", "b,c", null]);
    assert.deepEqual(row.bigs, ["1", "2"]);
    assert.deepEqual(row.amounts, [1.5, 2]); // pg's own parser for numeric[] (both engines alike)
    assert.equal(row.small, 42);
    assert.equal(row.tiny, 7);
    assert.equal(row.float, 1.5);
    assert.equal(row.yes, true);
    assert.equal(row.nothing, null);
    assert.equal(row.text, "héllo ✓");
    assert.equal(row.id, "00000000-0000-4000-8000-000000000001");
    assert.deepEqual(row.empty, []);
    assert.equal(a.rowCount, 1);
  });

  it("starts both with the smaller memory settings", async () => {
    for (const db of [thread, inProcess]) {
      assert.deepEqual((await db.query("SHOW shared_buffers")).rows, [
        { shared_buffers: process.env.BILLING_PGLITE_SHARED_BUFFERS || "16MB" },
      ]);
    }
  });

  it("sends parameters of every kind the domain sends", async () => {
    const params = [
      "12345678901234567890",
      "0.000000000001",
      new Date("2026-01-01T00:00:00Z"),
      Buffer.from([1, 2, 3]),
      JSON.stringify({ k: "v" }),
      ["x", "y"],
      null,
    ];
    const sql =
      "SELECT $1::numeric AS n, $2::numeric AS m, $3::timestamptz AS t, $4::bytea AS b, $5::jsonb AS j, $6::text[] AS a, $7::text AS z";
    const [a, b] = await Promise.all([thread.query(sql, params), inProcess.query(sql, params)]);
    assert.deepEqual(a.rows, b.rows);
    assert.deepEqual(a.rows[0], {
      n: "12345678901234567890",
      m: "0.000000000001",
      t: new Date("2026-01-01T00:00:00Z"),
      b: Buffer.from([1, 2, 3]),
      j: { k: "v" },
      a: ["x", "y"],
      z: null,
    });
  });

  it("keeps the PostgreSQL error code, message and constraint", async () => {
    await thread.query("INSERT INTO items (id, name) VALUES (1, 'one')");
    await inProcess.query("INSERT INTO items (id, name) VALUES (1, 'one')");
    const errorOf = async (db: Database, sql: string, params?: unknown[]) => {
      try {
        await db.query(sql, params);
      } catch (error) {
        const e = error as { code?: string; message: string; constraint?: string; detail?: string };
        return {
          code: e.code,
          message: e.message,
          constraint: e.constraint,
          detail: e.detail,
          isError: error instanceof Error,
        };
      }
      throw new Error("no error");
    };
    const cases: [string, unknown[]?][] = [
      ["INSERT INTO items (id, name) VALUES ($1, $2)", [1, "again"]],
      ["INSERT INTO items (id) VALUES (2)"],
      ["DO $$ BEGIN RAISE EXCEPTION 'deadlock, simulated' USING ERRCODE = '40P01'; END $$"],
      ["SELECT * FROM no_such_table"],
      ["SELEC 1"],
      ["SELECT 1/0"],
    ];
    for (const [sql, params] of cases) {
      const [a, b] = [await errorOf(thread, sql, params), await errorOf(inProcess, sql, params)];
      assert.deepEqual(a, b, sql);
    }
    const duplicate = await errorOf(thread, cases[0]![0], cases[0]![1]);
    assert.equal(duplicate.code, "23505");
    assert.equal(duplicate.constraint, "items_pkey");
    assert.equal((await errorOf(thread, cases[2]![0])).code, "40P01");
    assert.equal((await errorOf(thread, cases[1]![0])).code, "23502");
    // The session is still usable after every error.
    assert.deepEqual((await thread.query("SELECT count(*)::int AS n FROM items")).rows, [{ n: 1 }]);
  });

  it("commits a transaction, rolls it back on a throw, and keeps the error", async () => {
    const value = await thread.transaction(async (tx) => {
      await tx.query("INSERT INTO items (id, name) VALUES (10, 'ten')");
      return (await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM items WHERE id = 10")).rows[0]!.n;
    });
    assert.equal(value, 1);
    const boom = new Error("boom");
    await assert.rejects(
      thread.transaction(async (tx) => {
        await tx.query("INSERT INTO items (id, name) VALUES (11, 'eleven')");
        throw boom;
      }),
      (error) => error === boom,
    );
    await assert.rejects(
      thread.transaction(async (tx) => {
        await tx.query("INSERT INTO items (id, name) VALUES (12, 'twelve')");
        await tx.query("INSERT INTO items (id, name) VALUES (10, 'ten again')");
      }),
      (error: { code?: string }) => error.code === "23505",
    );
    const { rows } = await thread.query<{ id: number }>("SELECT id FROM items WHERE id >= 10 ORDER BY id");
    assert.deepEqual(rows, [{ id: 10 }]);
  });

  it("runs transactions one at a time, and queries outside wait for the open one", async () => {
    const order: string[] = [];
    let release!: () => void;
    let wrote!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const first = thread.transaction(async (tx) => {
      await tx.query("INSERT INTO items (id, name) VALUES (20, 'twenty')");
      order.push("first wrote");
      wrote();
      await held;
      order.push("first commits");
    });
    await written;
    const second = thread.transaction(async (tx) => {
      order.push("second starts");
      return (await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM items WHERE id = 20")).rows[0]!.n;
    });
    const outside = thread.query<{ n: number }>("SELECT count(*)::int AS n FROM items WHERE id = 20").then((r) => {
      order.push("outside");
      return r.rows[0]!.n;
    });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(order, ["first wrote"]);
    release();
    await first;
    assert.equal(await second, 1);
    assert.equal(await outside, 1);
    assert.deepEqual(order.slice(0, 2), ["first wrote", "first commits"]);
  });

  it("carries large results and many statements in one call", async () => {
    const { rows } = await thread.query<{ i: number; pad: string }>(
      "SELECT i, repeat('x', 100) AS pad FROM generate_series(1, 50000) AS i",
    );
    assert.equal(rows.length, 50000);
    assert.equal(rows[49999]!.i, 50000);
    assert.equal(rows[0]!.pad.length, 100);
    const big = "y".repeat(3_000_000);
    const echoed = await thread.query<{ s: string }>("SELECT $1::text AS s", [big]);
    assert.equal(echoed.rows[0]!.s, big);
    // A simple query with several statements (migrations are sent that way).
    await thread.query("CREATE TEMP TABLE scratch (v int); INSERT INTO scratch VALUES (1), (2); DROP TABLE scratch");
  });

  it("applies the migrations, advisory lock included", async () => {
    const db = await openDatabase({ kind: "pglite", dataDir: "memory://", runOn: "thread" });
    try {
      const applied = await migrate(db);
      assert.ok(applied.length > 0);
      assert.deepEqual(await migrate(db), []);
      assert.equal(await db.ping(), true);
    } finally {
      await db.close();
    }
    assert.equal(await db.ping(), false);
    await assert.rejects(db.query("SELECT 1"));
  });
});

describe("PGlite on a worker thread, on a data folder", () => {
  it("keeps what it stored across a close and a reopen, and holds the folder's lock while open", async () => {
    const dir = mkdtempSync(join(tmpdir(), "billing-thread-"));
    try {
      const first = await openDatabase({ kind: "pglite", dataDir: dir, runOn: "thread" });
      await first.query("CREATE TABLE kept (v text)");
      await first.query("INSERT INTO kept VALUES ('still here')");
      const probe = spawnSync(process.execPath, [...process.execArgv, "--input-type=module", "-e", openScript(dir)], {
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.match(probe.stderr + probe.stdout, /in use by process/);
      await first.close();
      const second = await openDatabase({ kind: "pglite", dataDir: dir, runOn: "thread" });
      try {
        assert.deepEqual((await second.query("SELECT v FROM kept")).rows, [{ v: "still here" }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("does not keep the process alive when the caller forgets to close it", () => {
    const script = `
      import { openDatabase } from ${JSON.stringify(moduleUrl("./open-database.ts"))};
      const db = await openDatabase({ kind: "pglite", dataDir: "memory://", runOn: "thread" });
      const { rows } = await db.query("SELECT 41 + 1 AS n");
      console.log("answer", rows[0].n);`;
    const child = spawnSync(process.execPath, [...process.execArgv, "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(child.signal, null, "the process exited on its own");
    assert.match(child.stdout, /answer 42/);
    assert.equal(child.status, 0, child.stderr);
  });
});

function moduleUrl(relative: string): string {
  return new URL(relative, import.meta.url).href;
}

function openScript(dir: string): string {
  return `
    import { openDatabase } from ${JSON.stringify(moduleUrl("./open-database.ts"))};
    try { await openDatabase({ kind: "pglite", dataDir: ${JSON.stringify(dir)}, runOn: "thread" }); console.log("opened"); }
    catch (error) { console.log(error.message); }`;
}
