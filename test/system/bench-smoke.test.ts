/**
 * The ingestion benchmark in miniature (issue: performance): a few seconds of load on each case, then the
 * benchmark's own check of the stored data (events acknowledged = events stored, charges = invoice lines).
 * It asserts correctness only; speed lives in `npm run bench`, never in a test.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { it } from "node:test";
import { postgresSkip } from "../support/test-databases.js";

it("runs every benchmark case and finds the stored data exactly as acknowledged", { timeout: 240_000 }, () => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "bench/ingest-bench.ts"], {
    env: { ...process.env, BENCH_SMOKE: "1", LOG_LEVEL: "warn" },
    encoding: "utf8",
    timeout: 230_000,
  });
  assert.equal(run.status, 0, `benchmark failed:\n${run.stdout}\n${run.stderr}`);
  const rows = run.stdout.split("\n").filter((line) => line.startsWith("| ("));
  assert.ok(rows.length >= 1, `no case ran:\n${run.stdout}`);
  for (const row of rows) assert.match(row, /ok: \d+ stored, charges = lines/);
});

for (const engine of ["pglite", "postgres"] as const) {
  const skip = postgresSkip(engine);
  it(`runs the ingest function's own benchmark and finds its invoices exact [${engine}]`, {
    skip,
    timeout: 120_000,
  }, () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "bench/ingest-sql-bench.ts"], {
      env: {
        ...process.env,
        SQL_BENCH_ENGINE: engine,
        SQL_BENCH_CALLS: "3",
        SQL_BENCH_EVENTS: "300",
        LOG_LEVEL: "warn",
      },
      encoding: "utf8",
      timeout: 110_000,
    });
    assert.equal(run.status, 0, `benchmark failed:\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, new RegExp(`^${engine} shape a: 3 calls of 300 events: .*verify: ok$`, "m"));
  });
}

it("starts the benchmarked service with the allocator settings `npm start` gives it", async () => {
  const { readFileSync } = await import("node:fs");
  const { MALLOC_ENV } = await import("../../bench/bench-kit.js");
  const start = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } }).scripts.start;
  const fromScript = Object.fromEntries([...start.matchAll(/(\w+)=\$\{\1:-([^}]+)\}/g)].map((m) => [m[1], m[2]]));
  assert.deepEqual(fromScript, { ...MALLOC_ENV });
  assert.match(start, /node dist\/src\/main\.js$/);
});
