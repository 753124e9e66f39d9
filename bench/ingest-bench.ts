/**
 * `npm run bench`: usage ingestion against the database's own ceiling (issue: performance).
 *
 * In one run, side by side:
 *   ceiling   the same events inserted straight into PostgreSQL (INSERT … SELECT FROM unnest … ON CONFLICT
 *             DO NOTHING, 100 rows a transaction, 8 connections) into a table with the service's indexes;
 *   (a)       the service (a separate process on the same PostgreSQL), 16 clients, 100-event batches,
 *             events spread over many contracts;
 *   (b)       every event on one contract (one hot draft invoice);
 *   (f)       single-contract batches: each 100-event batch for one contract, 64 contracts, 16 clients (the
 *             shape an independent benchmark sends; (a) and (f) are the two batch shapes every A/B runs);
 *   (g)       as (a), over 64 contracts whose two wire rules are graduated (three tiers): every event priced on
 *             its month's running quantity, on the locking path;
 *   (h)       as (g), each contract with two credit grants (one for one wire metric at priority 10, one for
 *             every metric): every event also burns credit, under the grants' row locks;
 *   (c)       4 clients;
 *   (d)       replays of events already stored;
 *   (e)       the service on its embedded PGlite database;
 *   startup   `npm start` on the embedded database to /readyz: the first start, and restarts after a crash.
 * Each case reports events/s, request latency p50/p99/max, the service's peak RSS, CPU per event of the
 * service, PostgreSQL and the benchmark's own process, and the ratio to the
 * ceiling, then checks the stored data (counts, charges = invoice lines), so a fast wrong run cannot pass.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_SECONDS
 * (default 10 per case), BENCH_SMOKE=1 (a few seconds in all, correctness only, run by `npm test`),
 * BENCH_CASES=a,b (a subset), BENCH_SERVICE=tsx (run the service from source instead of dist/), BENCH_RESULTS
 * (the folder for the results file, default bench/results: A/B runs can go elsewhere).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { migrate } from "../src/db/migrate.js";
import {
  agent,
  cpuSeconds,
  createDatabase,
  dropDatabase,
  GIVEN_URL,
  MALLOC_ENV,
  percentile,
  postgresCpu,
  request,
  SMOKE,
  startService,
  timeToReady,
} from "./bench-kit.js";
import { openDatabase } from "../src/db/open-database.js";
import { verifyBilling } from "../src/domain/invariants/verify.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? (SMOKE ? 1.5 : 10));
// The smoke run inside `npm test` uses PostgreSQL only when the tests have one.
const CASES = new Set(
  (process.env.BENCH_CASES ?? (SMOKE && !GIVEN_URL ? "e" : "ceiling,a,f,g,h,b,c,d,e,startup")).split(","),
);
const SKIP_PGLITE = process.env.BENCH_SKIP_PGLITE === "1";
const FROM_SOURCE = process.env.BENCH_SERVICE === "tsx" || SMOKE;
const API_KEY = `sk_bench_${randomBytes(12).toString("hex")}`;
const CONTRACTS = SMOKE ? 10 : 200;
/** Contracts of case (f), whose batches each hold one contract's events. */
const SINGLE_CONTRACTS = SMOKE ? 4 : 64;
/** Contracts of case (g), whose wire rules are graduated. */
const GRADUATED_CONTRACTS = SMOKE ? 4 : 64;
/** Case (g)'s tiers: the wires cost less per unit as a contract's month grows. */
const GRADUATED_TIERS = [
  { up_to: 1000, unit_amount: "20" },
  { up_to: 10000, unit_amount: "15", flat_amount: "100" },
  { up_to: null, unit_amount: "10" },
];
const BATCH = 100;

export interface CaseResult {
  name: string;
  clients: number;
  requests: number;
  events: number;
  seconds: number;
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  peakRssMb: number | null;
  ratio: number | null;
  verified: string;
  /** CPU per event sent, in µs, from /proc: the service process, and the PostgreSQL backends of its database. */
  serviceCpuUsPerEvent?: number | null;
  postgresCpuUsPerEvent?: number | null;
  /** The benchmark's own process (the load generator, or the ceiling's client), on the same cores. */
  generatorCpuUsPerEvent?: number | null;
}

// ---------------------------------------------------------------------------------------------------------
// Events

const timestamp = new Date().toISOString();
const metrics = ["domestic_wire", "international_wire"];

/** How a batch's events are spread: over the contracts in turn, or every event of a batch on one contract. */
type Shape = "spread" | "single";

function batchBody(prefix: string, contracts: string[], seq: number, shape: Shape = "spread"): string {
  const events: string[] = [];
  for (let i = 0; i < BATCH; i++) {
    const contract =
      shape === "single" ? contracts[seq % contracts.length]! : contracts[(seq * BATCH + i) % contracts.length]!;
    events.push(
      `{"external_contract_id":"${contract}","event_id":"${prefix}-${seq}-${i}","metric":"${metrics[i % 2]}","quantity":${(i % 5) + 1},"timestamp":"${timestamp}"}`,
    );
  }
  return `{"events":[${events.join(",")}]}`;
}

// ---------------------------------------------------------------------------------------------------------
// The ceiling: the database alone

async function runCeiling(url: string, database: string, companyId: string): Promise<CaseResult> {
  const connections = 8;
  const pool = new pg.Pool({ connectionString: url, max: connections });
  // An idle connection ended by the server (the database is dropped with FORCE right after) must not crash the run.
  pool.on("error", () => {});
  const sql = `INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty,
                 counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number, line_key,
                 service_period_start, service_period_end, event_timestamp, ingested_at, status)
               SELECT $1, v.id, v.contract_id, v.metric, v.quantity, NULL, v.applied_rate, NULL, NULL, NULL, v.rated_amount,
                      'rule', 1, 'INV-000001', 'usage|rule|20', date_trunc('month', now())::date,
                      (date_trunc('month', now()) + interval '1 month - 1 day')::date, now(), now(), 'rated'
                 FROM unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::numeric[], $7::numeric[])
                      AS v(id, contract_id, metric, quantity, applied_rate, rated_amount)
               ON CONFLICT (company_id, id) DO NOTHING`;
  const latencies: number[] = [];
  let events = 0;
  // Open the connections first, so that the CPU of their backends is measured from the start.
  await Promise.all(Array.from({ length: connections }, () => pool.connect())).then((clients) =>
    clients.forEach((c) => {
      c.release();
    }),
  );
  const pgCpu = await postgresCpu(database);
  const ownCpu = process.cpuUsage();
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, worker) => {
      for (let seq = 0; performance.now() < deadline; seq++) {
        const ids: string[] = [];
        const contracts: string[] = [];
        const ms: string[] = [];
        const qs: string[] = [];
        for (let i = 0; i < BATCH; i++) {
          ids.push(`ceiling-${worker}-${seq}-${i}`);
          contracts.push(`c${i % CONTRACTS}`);
          ms.push(metrics[i % 2]!);
          qs.push(String((i % 5) + 1));
        }
        const t0 = performance.now();
        await pool.query(sql, [
          companyId,
          ids,
          contracts,
          ms,
          qs,
          qs.map(() => "20"),
          qs.map((q) => String(Number(q) * 20)),
        ]);
        latencies.push(performance.now() - t0);
        events += BATCH;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const generatorCpuUsPerEvent = cpuUsPerEvent(process.cpuUsage(ownCpu), events);
  const postgresCpuUsPerEvent = Math.round(((await pgCpu.stop()) / events) * 1e6 * 10) / 10;
  const { rows } = await pool.query("SELECT count(*)::int AS n FROM usage_events WHERE id LIKE 'ceiling-%'");
  await pool.end();
  return {
    ...summarize(
      "ceiling (PostgreSQL alone, 8 conns)",
      connections,
      latencies,
      events,
      seconds,
      null,
      rows[0].n === events ? "count ok" : `count ${rows[0].n} != ${events}`,
    ),
    postgresCpuUsPerEvent,
    generatorCpuUsPerEvent,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The service, as its own process

/** Customers and sample contracts through the API; returns the contract ids. */
async function setupContracts(port: number, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const customer = await request(
      port,
      "POST",
      "/v1/billing/customers",
      JSON.stringify({ name: `${tag} customer ${i}` }),
    );
    if (customer.status !== 201) throw new Error(`customer: ${customer.status} ${customer.body}`);
    const contract = await request(
      port,
      "POST",
      "/v1/billing/contracts",
      JSON.stringify({ customer_id: JSON.parse(customer.body).id }),
    );
    if (contract.status !== 201) throw new Error(`contract: ${contract.status} ${contract.body}`);
    ids.push(JSON.parse(contract.body).id);
  }
  return ids;
}

/** Two credit grants per contract: 50,000.00 for domestic wires first (priority 10), 100,000.00 for everything. */
async function grantCredits(port: number, contracts: string[]): Promise<void> {
  for (const id of contracts) {
    for (const grant of [
      { amount: "50000.00", type: "promotional", metrics: ["domestic_wire"], priority: 10, starts_on: "2000-01-01" },
      { amount: "100000.00", type: "prepaid", starts_on: "2000-01-01" },
    ]) {
      const res = await request(port, "POST", `/v1/billing/contracts/${id}/credits`, JSON.stringify(grant));
      if (res.status !== 201) throw new Error(`credit: ${res.status} ${res.body}`);
    }
  }
}

/** Makes the wire rules of these contracts graduated (GRADUATED_TIERS). */
async function graduateWires(port: number, contracts: string[]): Promise<void> {
  for (const id of contracts) {
    const pricing = await request(port, "GET", `/v1/billing/contracts/${id}/pricing`);
    if (pricing.status !== 200) throw new Error(`pricing: ${pricing.status} ${pricing.body}`);
    const rules = (JSON.parse(pricing.body) as { rules: { id: string; metric: string | null }[] }).rules;
    for (const rule of rules.filter((r) => r.metric !== null && metrics.includes(r.metric))) {
      const body = JSON.stringify({ model: "graduated", amount: null, tiers: GRADUATED_TIERS });
      const res = await request(port, "PUT", `/v1/billing/contracts/${id}/pricing-rules/${rule.id}`, body);
      if (res.status !== 200) throw new Error(`graduate ${rule.id}: ${res.status} ${res.body}`);
    }
  }
}

/**
 * The steady state a running service is in: every contract's draft for this month exists, and the tables
 * have planner statistics. PostgreSQL's autovacuum analyzes tables of this size within a minute of their
 * filling up; a 10-second case started right after the set-up would otherwise measure plans made for
 * tables never analyzed (docs/performance.md, step 14). The warm-up events are not counted in any case.
 */
async function warmUp(port: number, url: string, contracts: string[]): Promise<void> {
  for (let seq = 0; seq * BATCH < contracts.length; seq++) {
    const res = await request(port, "POST", "/v1/billing/usage", batchBody("warmup", contracts, seq));
    if (res.status !== 200) throw new Error(`warm-up: ${res.status} ${res.body.slice(0, 300)}`);
  }
  const db = await openDatabase({ kind: "postgres", url });
  try {
    await db.query("ANALYZE");
  } finally {
    await db.close();
  }
}

interface LoadOutcome {
  latencies: number[];
  events: number;
  /** CPU of this process while it generated the load, in µs per event. */
  generatorCpuUsPerEvent: number;
  accepted: number;
  duplicates: number;
  seconds: number;
  bodies: string[];
}

/** `clients` loops sending 100-event batches for SECONDS (or replaying `replay` bodies). */
async function load(
  port: number,
  clients: number,
  prefix: string,
  contracts: string[],
  replay?: string[],
  shape: Shape = "spread",
): Promise<LoadOutcome> {
  const latencies: number[] = [];
  const bodies: string[] = [];
  let events = 0;
  let accepted = 0;
  let duplicates = 0;
  let next = 0;
  const ownCpu = process.cpuUsage();
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const seq = next++;
        let body: string;
        if (replay) {
          if (replay.length === 0) return;
          body = replay[seq % replay.length]!;
        } else {
          body = batchBody(prefix, contracts, seq, shape);
          bodies.push(body);
        }
        const t0 = performance.now();
        const res = await request(port, "POST", "/v1/billing/usage", body);
        latencies.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`usage: ${res.status} ${res.body.slice(0, 300)}`);
        const result = JSON.parse(res.body) as { accepted: number; events: { duplicate?: boolean }[] };
        events += BATCH;
        accepted += result.accepted;
        duplicates += result.events.filter((e) => e.duplicate).length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    latencies,
    events,
    generatorCpuUsPerEvent: cpuUsPerEvent(process.cpuUsage(ownCpu), events),
    accepted,
    duplicates,
    seconds,
    bodies,
  };
}

function cpuUsPerEvent(usage: NodeJS.CpuUsage, events: number): number {
  return Math.round(((usage.user + usage.system) / events) * 10) / 10;
}

function summarize(
  name: string,
  clients: number,
  latencies: number[],
  events: number,
  seconds: number,
  peakRssMb: number | null,
  verified: string,
): CaseResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    name,
    clients,
    requests: latencies.length,
    events,
    seconds: round(seconds),
    eventsPerSecond: Math.round(events / seconds),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
    peakRssMb,
    ratio: null,
    verified,
  };
}

/** Stored data must match what was acknowledged, and every invariant must hold. */
async function verify(url: string | { dataDir: string }, expectedNew: number, prefixes: string[]): Promise<string> {
  const db = await openDatabase(
    typeof url === "string" ? { kind: "postgres", url } : { kind: "pglite", dataDir: url.dataDir },
  );
  try {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM usage_events WHERE ${prefixes.map((_, i) => `id LIKE $${i + 1}`).join(" OR ")}`,
      prefixes.map((p) => `${p}-%`),
    );
    const stored = Number(rows[0]!.n);
    if (stored !== expectedNew) throw new Error(`stored ${stored} events, but ${expectedNew} were acknowledged as new`);
    const report = await verifyBilling(db);
    if (!report.ok) throw new Error(`invariants broken:\n${report.problems.slice(0, 10).join("\n")}`);
    return `ok: ${stored} stored, charges = lines`;
  } finally {
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!FROM_SOURCE) {
    const build = spawnSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
    if (build.status !== 0) throw new Error("build failed");
  }
  const stamp = Date.now().toString(36);
  const results: CaseResult[] = [];
  const print = (r: CaseResult) =>
    console.log(
      `${r.name.padEnd(44)} ${String(r.eventsPerSecond).padStart(8)} ev/s  p50 ${String(r.p50Ms).padStart(6)} ms  p99 ${String(r.p99Ms).padStart(6)} ms  max ${String(r.maxMs).padStart(6)} ms  rss ${String(r.peakRssMb ?? "-").padStart(4)} MB  cpu/event µs: service ${r.serviceCpuUsPerEvent ?? "-"} pg ${r.postgresCpuUsPerEvent ?? "-"} generator ${r.generatorCpuUsPerEvent ?? "-"}  ${r.verified}`,
    );

  let ceiling: CaseResult | undefined;
  if (CASES.has("ceiling")) {
    const name = `billing_bench_ceiling_${stamp}`;
    const url = await createDatabase(name);
    try {
      const db = await openDatabase({ kind: "postgres", url });
      await migrate(db);
      const companyId = "00000000-0000-4000-8000-000000000001";
      await db.query("INSERT INTO companies (id, name, created_at) VALUES ($1, 'ceiling', now())", [companyId]);
      await db.close();
      ceiling = await runCeiling(url, name, companyId);
      results.push(ceiling);
      print(ceiling);
    } finally {
      await dropDatabase(name);
    }
  }

  const serviceCases = ["a", "f", "g", "h", "b", "c", "d"].filter((c) => CASES.has(c));
  if (serviceCases.length > 0) {
    const name = `billing_bench_service_${stamp}`;
    const url = await createDatabase(name);
    const service = await startService({ DATABASE_URL: url }, API_KEY);
    try {
      const spread = await setupContracts(service.port, CONTRACTS, "spread");
      const [hot] = await setupContracts(service.port, 1, "hot");
      const single = CASES.has("f") ? await setupContracts(service.port, SINGLE_CONTRACTS, "single") : [];
      const graduated = CASES.has("g") ? await setupContracts(service.port, GRADUATED_CONTRACTS, "graduated") : [];
      await graduateWires(service.port, graduated);
      const credited = CASES.has("h") ? await setupContracts(service.port, GRADUATED_CONTRACTS, "credited") : [];
      await graduateWires(service.port, credited);
      await grantCredits(service.port, credited);
      await warmUp(service.port, url, [...spread, hot!, ...single, ...graduated, ...credited]);
      let acceptedNew = 0;
      const prefixes: string[] = [];
      let stored: string[] = [];
      const runCase = async (
        label: string,
        key: string,
        clients: number,
        contracts: string[],
        replay?: string[],
        shape: Shape = "spread",
      ) => {
        const prefix = `${key}${stamp}`;
        const serviceCpu = cpuSeconds(service.child.pid!);
        const pgCpu = await postgresCpu(name);
        const outcome = await load(service.port, clients, prefix, contracts, replay, shape);
        const perEvent = (seconds: number) => Math.round((seconds / outcome.events) * 1e6 * 10) / 10;
        const cpu = {
          serviceCpuUsPerEvent: perEvent(cpuSeconds(service.child.pid!) - serviceCpu),
          postgresCpuUsPerEvent: perEvent(await pgCpu.stop()),
          generatorCpuUsPerEvent: outcome.generatorCpuUsPerEvent,
        };
        const fresh = outcome.accepted - outcome.duplicates;
        if (!replay) {
          prefixes.push(prefix);
          acceptedNew += fresh;
          stored = stored.concat(outcome.bodies);
        } else if (fresh !== 0) {
          throw new Error(`replays stored ${fresh} new events`);
        }
        const verified = await verify(url, acceptedNew, prefixes);
        const result = {
          ...summarize(
            label,
            clients,
            outcome.latencies,
            outcome.events,
            outcome.seconds,
            service.peakRssMb(),
            verified,
          ),
          ...cpu,
        };
        results.push(result);
        print(result);
      };
      if (CASES.has("a")) await runCase(`(a) service, 16 clients, ${CONTRACTS} contracts`, "a", 16, spread);
      if (CASES.has("f"))
        await runCase(
          `(f) service, 16 clients, ${SINGLE_CONTRACTS} contracts, one per batch`,
          "f",
          16,
          single,
          undefined,
          "single",
        );
      if (CASES.has("g"))
        await runCase(`(g) service, 16 clients, ${GRADUATED_CONTRACTS} contracts, graduated`, "g", 16, graduated);
      if (CASES.has("h"))
        await runCase(
          `(h) service, 16 clients, ${GRADUATED_CONTRACTS} contracts, graduated, credits`,
          "h",
          16,
          credited,
        );
      if (CASES.has("b")) await runCase("(b) service, 16 clients, one contract", "b", 16, [hot!]);
      if (CASES.has("c")) await runCase(`(c) service, 4 clients, ${CONTRACTS} contracts`, "c", 4, spread);
      if (CASES.has("d")) await runCase("(d) service, 16 clients, replays", "d", 16, spread, stored);
    } finally {
      await service.stop();
      await dropDatabase(name);
    }
  }

  if (CASES.has("e") && !SKIP_PGLITE) {
    const dataDir = mkdtempSync(join(tmpdir(), "billing-bench-"));
    try {
      // The first start creates the database (initdb runs in the same WebAssembly heap and keeps its
      // memory); measure a service started on an existing data folder, as it runs day to day.
      await (await startService({ BILLING_DATA_DIR: dataDir }, API_KEY)).stop();
      const service = await startService({ BILLING_DATA_DIR: dataDir }, API_KEY);
      let outcome: LoadOutcome;
      let rss: number | null;
      let serviceCpuUsPerEvent: number;
      const prefix = `e${stamp}`;
      try {
        const spread = await setupContracts(service.port, CONTRACTS, "pglite");
        const serviceCpu = cpuSeconds(service.child.pid!);
        outcome = await load(service.port, 16, prefix, spread);
        // The service's process, PGlite's thread included (there is no separate database process here).
        serviceCpuUsPerEvent =
          Math.round(((cpuSeconds(service.child.pid!) - serviceCpu) / outcome.events) * 1e6 * 10) / 10;
        rss = service.peakRssMb();
      } finally {
        await service.stop();
      }
      const verified = await verify({ dataDir }, outcome.accepted - outcome.duplicates, [prefix]);
      const result = {
        ...summarize(
          `(e) service on PGlite, 16 clients, ${CONTRACTS} contracts`,
          16,
          outcome.latencies,
          outcome.events,
          outcome.seconds,
          rss,
          verified,
        ),
        serviceCpuUsPerEvent,
        generatorCpuUsPerEvent: outcome.generatorCpuUsPerEvent,
      };
      results.push(result);
      print(result);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  let startup: { firstStartMs: number; restartAfterCrashMs: number[]; builtServiceRestartMs: number[] } | undefined;
  if (CASES.has("startup") && !SMOKE) {
    // As a user runs it: `npm start` (its prestart checks whether the build is current) on the embedded
    // database, to the first 200 of /readyz. The first start creates the database; each restart follows a
    // SIGKILL of the one before (npm and the service), on the same data folder.
    const dataDir = mkdtempSync(join(tmpdir(), "billing-startup-"));
    try {
      const env = { ...MALLOC_ENV, BILLING_DATA_DIR: dataDir };
      const first = await timeToReady("npm", ["start", "--silent"], env);
      await first.stop("SIGKILL");
      const restartAfterCrashMs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const run = await timeToReady("npm", ["start", "--silent"], env);
        restartAfterCrashMs.push(run.ms);
        await run.stop("SIGKILL");
      }
      const builtServiceRestartMs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const run = await timeToReady(process.execPath, ["dist/src/main.js"], env);
        builtServiceRestartMs.push(run.ms);
        await run.stop("SIGKILL");
      }
      startup = { firstStartMs: first.ms, restartAfterCrashMs, builtServiceRestartMs };
      console.log(
        `start-up (embedded database, to /readyz 200): first npm start ${first.ms} ms; npm start after a crash ${restartAfterCrashMs.join(" / ")} ms; node dist/src/main.js after a crash ${builtServiceRestartMs.join(" / ")} ms`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  if (ceiling) for (const r of results) r.ratio = Math.round((r.eventsPerSecond / ceiling.eventsPerSecond) * 100) / 100;
  console.log(
    "\n| case | events/s | p50 ms | p99 ms | max ms | peak RSS MB | ÷ ceiling | CPU µs/event: service / PostgreSQL / generator | stored data |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---|---|");
  for (const r of results) {
    const cpu = [r.serviceCpuUsPerEvent, r.postgresCpuUsPerEvent, r.generatorCpuUsPerEvent]
      .map((v) => v ?? "-")
      .join(" / ");
    console.log(
      `| ${r.name} | ${r.eventsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${r.peakRssMb ?? "-"} | ${r.ratio ?? "-"} | ${cpu} | ${r.verified} |`,
    );
  }
  if (!SMOKE) {
    const dir = process.env.BENCH_RESULTS ?? "bench/results";
    mkdirSync(dir, { recursive: true });
    const file = `${dir}/${new Date().toISOString().slice(0, 19).replace(/:/g, "-")}.json`;
    writeFileSync(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version }, seconds: SECONDS, results, startup }, null, 2)}\n`,
    );
    console.log(`\nwritten to ${file}`);
  }
  agent.destroy();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
