/**
 * `tsx bench/ingest-sql-bench.ts`: the ingest function alone (issue: performance), for A/B work on its SQL.
 *
 * Calls billing_ingest_usage_lines the way the service does (through `ingestRatedBatch`), one call at a time
 * on one connection, with synthetic rated events, and prints the wall time per call and the database's CPU
 * per event. No HTTP, no rating, no load generator: what is left is the SQL's own cost, which the service
 * benchmark cannot separate from everything else that shares the two cores.
 *
 * Shapes (SQL_BENCH_SHAPE): "a" (default) a call of SQL_BENCH_EVENTS (1,600) events over SQL_BENCH_CONTRACTS
 * (200) contracts and two metrics, i.e. 200 drafts and 400 lines, as a call of case (a) carried with one lane
 * (with two lanes: 350 events over 100 contracts); "b" the same events on one contract. SQL_BENCH_CALLS
 * (default 60) calls after 5 unmeasured ones. SQL_BENCH_ENGINE=pglite runs on the embedded database (on its
 * worker thread, as the service does) instead of PostgreSQL (BENCH_DATABASE_URL or the local server). SQL_BENCH_SETUP: SQL run after the set-up (a changed function); SQL_BENCH_REPORT: a query
 * run after the measured calls, its rows printed as JSON; SQL_BENCH_ANALYZE=1: ANALYZE before the calls;
 * SQL_BENCH_EXPLAIN=1 (PostgreSQL): one more call with auto_explain into the server's log.
 */
import { forCompany } from "../src/db/company-scope.js";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Big } from "big.js";
import { createDatabase, dropDatabase, percentile, postgresCpu } from "./bench-kit.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import { ingestRatedBatch, type BatchEventWrite } from "../src/domain/usage/usage-repository.js";
import { verifyBilling } from "../src/domain/invariants/verify.js";

const SHAPE = process.env.SQL_BENCH_SHAPE ?? "a";
const EVENTS = Number(process.env.SQL_BENCH_EVENTS ?? 1600);
const CALLS = Number(process.env.SQL_BENCH_CALLS ?? 60);
const ENGINE = process.env.SQL_BENCH_ENGINE ?? "postgres";
const CONTRACTS = SHAPE === "b" ? 1 : Number(process.env.SQL_BENCH_CONTRACTS ?? 200);
const METRICS = ["domestic_wire", "international_wire"];

const name = `bench_sql_${process.pid}`;
const dataDir = ENGINE === "pglite" ? mkdtempSync(join(tmpdir(), "bench-sql-")) : undefined;
const db =
  dataDir !== undefined
    ? await openDatabase({ kind: "pglite", dataDir })
    : await openDatabase({ kind: "postgres", url: await createDatabase(name), poolSize: 1 });
try {
  await migrate(db);
  const company = randomUUID();
  const customer = randomUUID();
  const now = new Date();
  const month = `${now.toISOString().slice(0, 7)}-01`;
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).toISOString().slice(0, 10);
  await db.query("INSERT INTO companies (id, name, created_at) VALUES ($1, 'sql bench', now())", [company]);
  await db.query("INSERT INTO customers (company_id, id, name, created_at) VALUES ($1, $2, 'c', now())", [
    company,
    customer,
  ]);
  await db.query(
    `INSERT INTO contracts (company_id, id, contract_number, customer_id, customer_name, status, start_date, currency,
                           billing_cadence, sample, current_version, metrics, pdf_token, created_at)
     SELECT $1, 'c' || n, 'CTR-' || n, $2, 'c', 'active', $3::date, 'USD', 'monthly', false, 1, $4::text[], md5(random()::text) || n, now()
       FROM generate_series(0, $5 - 1) AS n`,
    [company, customer, month, METRICS, CONTRACTS],
  );
  await db.query(
    `INSERT INTO pricing_program_versions (company_id, contract_id, version, effective_date, applies_from, rules, created_at)
     SELECT $1, 'c' || n, 1, $2::date, $2::date, '[]'::jsonb, now() FROM generate_series(0, $3 - 1) AS n`,
    [company, month, CONTRACTS],
  );
  await db.query(
    `INSERT INTO invoices (company_id, number, seq, contract_id, status, currency, period_start, period_end,
                          issued_date, due_date, created_at, updated_at)
     SELECT $1, 'INV-' || lpad(n::text, 6, '0'), n, 'c' || n, 'draft', 'USD', $2::date, $3::date, $3::date, $3::date, now(), now()
       FROM generate_series(0, $4 - 1) AS n`,
    [company, month, end, CONTRACTS],
  );

  if (process.env.SQL_BENCH_ANALYZE === "1") await db.query("ANALYZE");
  // Experiments: SQL run after the set-up (e.g. a changed function).
  if (process.env.SQL_BENCH_SETUP) await db.query(process.env.SQL_BENCH_SETUP);
  const timestamp = now.toISOString();
  const batch = (call: number): BatchEventWrite[] =>
    Array.from({ length: EVENTS }, (_, i) => {
      const metric = METRICS[i % 2]!;
      const quantity = String((i % 5) + 1);
      const charge = new Big(quantity).times("0.2");
      return {
        id: `sql-${call}-${i}`,
        contractId: `c${i % CONTRACTS}`,
        metric,
        quantity,
        feeAmount: null,
        appliedRate: "0.2",
        sentRate: null,
        counterparty: null,
        counterpartySide: null,
        pair: null,
        ratedAmount: charge.toString(),
        ruleId: `rule-${metric}`,
        pricingVersion: 1,
        programHead: 1,
        lineKey: `usage|rule-${metric}|0.2`,
        periodStart: month,
        periodEnd: end,
        timestamp,
        kind: "usage",
        description: metric,
        unitPrice: "0.2",
        quantityDecimal: new Big(quantity),
        chargeDecimal: charge,
      };
    });

  const batches = Array.from({ length: CALLS + 5 }, (_, call) => batch(call));
  for (const b of batches.slice(0, 5)) await ingestRatedBatch(forCompany(db, company), b, new Date());
  const cpu = ENGINE === "pglite" ? null : await postgresCpu(name);
  const walls: number[] = [];
  const started = performance.now();
  for (const b of batches.slice(5)) {
    const t0 = performance.now();
    const outcome = await ingestRatedBatch(forCompany(db, company), b, new Date());
    walls.push(performance.now() - t0);
    if (outcome.stored !== "all") throw new Error(`unexpected outcome ${JSON.stringify(outcome).slice(0, 200)}`);
  }
  const seconds = (performance.now() - started) / 1000;
  if (process.env.SQL_BENCH_EXPLAIN === "1" && ENGINE !== "pglite") {
    // One more call with every statement inside the function explained into the server's log.
    for (const setting of [
      "LOAD 'auto_explain'",
      "SET auto_explain.log_min_duration = 0",
      "SET auto_explain.log_analyze = on",
      "SET auto_explain.log_nested_statements = on",
      "SET auto_explain.log_buffers = on",
      "SET auto_explain.log_timing = on",
    ]) {
      await db.query(setting);
    }
    await ingestRatedBatch(forCompany(db, company), batch(CALLS + 5), new Date());
    await db.query("SET auto_explain.log_min_duration = -1");
  }
  if (process.env.SQL_BENCH_REPORT) {
    // Experiments: a query whose rows are printed after the measured calls (e.g. timings an instrumented
    // function kept in settings of the session).
    const { rows } = await db.query(process.env.SQL_BENCH_REPORT);
    console.log(JSON.stringify(rows));
  }
  const pgSeconds = cpu ? await cpu.stop() : null;
  const { problems } = await verifyBilling(db, company);
  walls.sort((a, b) => a - b);
  const events = CALLS * EVENTS;
  const round = (n: number) => Math.round(n * 10) / 10;
  console.log(
    `${ENGINE} shape ${SHAPE}: ${CALLS} calls of ${EVENTS} events: ${Math.round(events / seconds)} ev/s on one connection, ` +
      `call p50 ${round(percentile(walls, 50))} ms p99 ${round(percentile(walls, 99))} ms` +
      (pgSeconds === null ? "" : `, PostgreSQL CPU ${round((pgSeconds / events) * 1e6)} µs/event`) +
      `, verify: ${problems.length === 0 ? "ok" : JSON.stringify(problems).slice(0, 300)}`,
  );
} finally {
  await db.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  else await dropDatabase(name);
}
