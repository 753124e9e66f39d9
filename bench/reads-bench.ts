/**
 * `npm run bench:reads`: reads at scale (issue: performance). With 1,000,000 stored events for one company,
 * one client measures the first and the 1000th page of GET /v1/billing/usage (100 items, filtered by
 * contract and month), GET /v1/billing/invoices/{number} and the list of invoices, and the query plans
 * behind them are printed.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_EVENTS
 * (default 1000000), BENCH_SERVICE=tsx (run the service from source instead of dist/).
 */
import { forCompany } from "../src/db/company-scope.js";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import type { Queryable } from "../src/db/database.js";
import { openDatabase } from "../src/db/open-database.js";
import { findInvoice } from "../src/domain/invoices/invoice-read-repository.js";
import { verifyBilling } from "../src/domain/invariants/verify.js";
import { findUsageEvent, listUsageEvents } from "../src/domain/usage/usage-read-repository.js";
import { agent, createDatabase, dropDatabase, percentile, request, startService } from "./bench-kit.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const CONTRACTS = 5;
const MONTHS = [
  { start: "2026-11-01", end: "2026-11-30", ts: "2026-11-25T12:00:00Z" },
  { start: "2026-12-01", end: "2026-12-31", ts: "2026-12-15T12:00:00Z" },
];
const API_KEY = `sk_bench_${randomBytes(12).toString("hex")}`;

const round = (n: number) => Math.round(n * 100) / 100;

function stats(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? 0),
  };
}

async function timed(port: number, path: string): Promise<{ ms: number; body: string }> {
  const t0 = performance.now();
  const res = await request(port, "GET", path);
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body.slice(0, 200)}`);
  return { ms, body: res.body };
}

/** A Queryable that answers EXPLAIN ANALYZE of whatever a repository function sends. */
function explainer(db: Queryable, plans: string[]): Queryable {
  return {
    async query<Row>(sql: string, params?: readonly unknown[]) {
      const { rows } = await db.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
      plans.push(rows.map((r) => r["QUERY PLAN"]).join("\n"));
      return { rows: [] as Row[], rowCount: 0 };
    },
  };
}

async function main(): Promise<void> {
  if (process.env.BENCH_SERVICE !== "tsx") {
    const build = spawnSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
    if (build.status !== 0) throw new Error("build failed");
  }
  const name = `billing_bench_reads_${Date.now().toString(36)}`;
  const url = await createDatabase(name);
  const service = await startService({ DATABASE_URL: url }, API_KEY);
  const db = await openDatabase({ kind: "postgres", url });
  try {
    // Contracts, and one real event per contract and month, so that drafts, lines and keys are the service's own.
    const contracts: string[] = [];
    for (let i = 0; i < CONTRACTS; i++) {
      const customer = await request(
        service.port,
        "POST",
        "/v1/billing/customers",
        JSON.stringify({ name: `reads customer ${i}` }),
      );
      const contract = await request(
        service.port,
        "POST",
        "/v1/billing/contracts",
        JSON.stringify({ customer_id: JSON.parse(customer.body).id }),
      );
      contracts.push(JSON.parse(contract.body).id);
    }
    const seed = contracts.flatMap((c) =>
      MONTHS.map((m, j) => ({
        external_contract_id: c,
        event_id: `seed-${c}-${j}`,
        metric: "domestic_wire",
        quantity: 1,
        timestamp: m.ts,
      })),
    );
    const seeded = await request(service.port, "POST", "/v1/billing/usage", JSON.stringify({ events: seed }));
    if (JSON.parse(seeded.body).accepted !== seed.length) throw new Error(`seed refused: ${seeded.body}`);

    // The bulk: copies of the seed events, spread evenly over contracts and months, then the lines and
    // totals recomputed from them, as the service would have left them.
    const t0 = performance.now();
    await db.query(
      `INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty,
                                 counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number, line_key,
                                 service_period_start, service_period_end, event_timestamp, ingested_at, status)
       WITH seed AS MATERIALIZED (
         SELECT *, (row_number() OVER (ORDER BY id) - 1)::int AS k FROM usage_events WHERE id LIKE 'seed-%'
       )
       SELECT s.company_id, 'bulk-' || g, s.contract_id, s.metric, 1 + g % 5, NULL, s.applied_rate, NULL, NULL, NULL,
              s.applied_rate * (1 + g % 5), s.rule_id, s.pricing_version, s.invoice_number, s.line_key,
              s.service_period_start, s.service_period_end, s.event_timestamp, now(), 'rated'
         FROM generate_series(1, $1::int) AS g
         JOIN seed AS s ON s.k = g % $2`,
      [EVENTS, seed.length],
    );
    await db.query(
      `UPDATE invoice_lines l SET quantity = e.quantity, charge_total = e.charge
         FROM (SELECT company_id, invoice_number, line_key, sum(quantity) AS quantity, sum(rated_amount) AS charge
                 FROM usage_events GROUP BY 1, 2, 3) AS e
        WHERE l.company_id = e.company_id AND l.invoice_number = e.invoice_number AND l.line_key = e.line_key`,
    );
    await db.query("VACUUM ANALYZE usage_events");
    await db.query("VACUUM ANALYZE invoices");
    await db.query("VACUUM ANALYZE invoice_lines");
    const loadSeconds = round((performance.now() - t0) / 1000);
    const verifyStart = performance.now();
    const report = await verifyBilling(db);
    const verifySeconds = round((performance.now() - verifyStart) / 1000);
    if (!report.ok) throw new Error(`invariants broken after the load:\n${report.problems.slice(0, 5).join("\n")}`);
    console.log(`loaded ${report.events} events in ${loadSeconds} s; invariants checked in ${verifySeconds} s`);

    const contract = contracts[0]!;
    const month = MONTHS[0]!;
    const listPath = (after?: string) =>
      `/v1/billing/usage?contract=${contract}&from=${month.start}&to=${month.end}&limit=100${after ? `&starting_after=${after}` : ""}`;

    for (let i = 0; i < 20; i++) await timed(service.port, listPath()); // warm-up
    const firstPage: number[] = [];
    for (let i = 0; i < 300; i++) firstPage.push((await timed(service.port, listPath())).ms);

    const walk: number[] = [];
    let after: string | undefined;
    let pages = 0;
    for (; pages < 1000; pages++) {
      const { ms, body } = await timed(service.port, listPath(after));
      walk.push(ms);
      const page = JSON.parse(body) as { data: { id: string }[]; has_more: boolean };
      if (pages < 999) after = page.data.at(-1)?.id;
      if (!page.has_more) break;
    }
    if (pages < 999) throw new Error(`only ${pages + 1} pages: load more events`);
    const thousandth: number[] = [];
    for (let i = 0; i < 300; i++) thousandth.push((await timed(service.port, listPath(after))).ms);

    const invoices = JSON.parse((await timed(service.port, `/v1/billing/invoices?contract=${contract}`)).body) as {
      data: { number: string }[];
    };
    const number = invoices.data.at(-1)!.number;
    const invoice: number[] = [];
    for (let i = 0; i < 300; i++) invoice.push((await timed(service.port, `/v1/billing/invoices/${number}`)).ms);
    // Every invoice of the company (its figures derived from each one's lines, as every read does).
    const invoiceList: number[] = [];
    for (let i = 0; i < 300; i++) invoiceList.push((await timed(service.port, "/v1/billing/invoices?limit=100")).ms);

    const companyId = (await db.query<{ company_id: string }>("SELECT company_id FROM usage_events LIMIT 1")).rows[0]!
      .company_id;
    const plans: string[] = [];
    const filter = { contractId: contract, from: month.start, to: month.end };
    await listUsageEvents(forCompany(explainer(db, plans), companyId), filter, undefined, 100);
    const cursorSeq = (await findUsageEvent(forCompany(db, companyId), after!))!.seq;
    await listUsageEvents(forCompany(explainer(db, plans), companyId), filter, cursorSeq, 100);
    await findInvoice(forCompany(explainer(db, plans), companyId), number);

    const results = {
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpu: cpus()[0]?.model,
        memoryGb: Math.round(totalmem() / 2 ** 30),
        node: process.version,
      },
      events: report.events,
      loadSeconds,
      verifySeconds,
      firstPage: stats(firstPage),
      walkToPage1000: stats(walk),
      page1000: stats(thousandth),
      invoiceGet: stats(invoice),
      invoiceList: stats(invoiceList),
      plans: { firstPage: plans[0], page1000: plans[1], invoiceGet: plans[2] },
    };
    console.log("\n| read (one client) | requests | p50 ms | p99 ms | max ms |");
    console.log("|---|---:|---:|---:|---:|");
    for (const [label, s] of [
      ["usage page 1 (contract + month, 100 items)", results.firstPage],
      ["usage pages 1..1000, walked with starting_after", results.walkToPage1000],
      ["usage page 1000", results.page1000],
      ["invoice get with line items", results.invoiceGet],
      [`invoice list (all ${MONTHS.length * CONTRACTS} invoices)`, results.invoiceList],
    ] as const) {
      console.log(`| ${label} | ${s.n} | ${s.p50Ms} | ${s.p99Ms} | ${s.maxMs} |`);
    }
    console.log(`\nplan, page 1:\n${plans[0]}\n\nplan, page 1000:\n${plans[1]}\n\nplan, invoice get:\n${plans[2]}`);
    mkdirSync("bench/results", { recursive: true });
    const file = `bench/results/reads-${new Date().toISOString().slice(0, 19).replace(/:/g, "-")}.json`;
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nwritten to ${file}`);
  } finally {
    await db.close();
    await service.stop();
    await dropDatabase(name);
    agent.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
