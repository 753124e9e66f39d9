/**
 * The ingestion benchmark in miniature (issue: performance): a few seconds of load on each case, then the
 * benchmark's own check of the stored data (events acknowledged = events stored, charges = invoice lines).
 * It asserts correctness only; speed lives in `npm run bench`, never in a test.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { it } from "node:test";

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
