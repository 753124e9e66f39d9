/**
 * `npm run bench:stalls`: no request of one company waits on another company's heavy work (docs/performance.md,
 * "Stalls"). On each engine (the service on PostgreSQL, then on its embedded PGlite), company B (the bystander)
 * sends a steady, open-loop load of small requests: one-event usage and a list of its invoices, alternately,
 * RATE a second, each timed from the moment it was due to be sent, so that time spent queued shows. First alone
 * (the baseline), then during each heavy operation of company A (the attacker) in turn. The target per row: B's
 * p99 within 3× its baseline p99 and B's slowest request within 500 ms. A missed target is printed MISSED, and
 * the exit code stays 0: this is a measurement.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_SMOKE=1 (short
 * phases, small counts, the service from source), BENCH_SERVICE=tsx (the service from source instead of dist/),
 * BENCH_ENGINES (default `postgres,pglite`), BENCH_TIERS (tiers of the graduated rule, default the most a rule
 * takes, 250), BENCH_PREVIEW_EVENTS (events of the month the preview prices, default the most a preview takes,
 * 100,000; 1,000 in smoke), BENCH_ROWS (the rows to run by name, comma-separated; default all).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCanvas } from "@napi-rs/canvas";
import { openDatabase } from "../src/db/open-database.js";
import { verifyBilling } from "../src/domain/invariants/verify.js";
import { MAX_RULE_TIERS } from "../src/domain/contracts/pricing-rule.js";
import { MAX_PREVIEW_EVENTS } from "../src/domain/usage/pricing-preview.js";
import { noisePage, storedScan } from "../test/support/agreement-files.js";
import { startSmtpReceiver } from "../test/support/smtp-receiver.js";
import { bombPdf, uploadTerms } from "../test/support/uploads.js";
import {
  SMOKE,
  companyWithKey,
  createDatabase,
  dropDatabase,
  machine,
  postPdf,
  request,
  type Service,
  startService,
} from "./bench-kit.js";
import { type Latencies, steadyLoad, usageEvent } from "./steady-load.js";

/** Tiers of the graduated rule: the most the API accepts. */
const TIERS = Number(process.env.BENCH_TIERS ?? MAX_RULE_TIERS);
/** Events of the month the pricing preview prices, sent before its phase: the most a preview takes. */
const PREVIEW_EVENTS = Number(process.env.BENCH_PREVIEW_EVENTS ?? (SMOKE ? 1_000 : MAX_PREVIEW_EVENTS));
const ENGINES = (process.env.BENCH_ENGINES ?? "postgres,pglite").split(",") as Engine[];
/** Each phase lasts at least this long (B's load runs the whole phase); repeatable operations repeat within it. */
const PHASE_MS = SMOKE ? 2_000 : 10_000;
/** B's requests a second, usage and reads alternately. */
const RATE = 20;
const INVOICE_PDFS = SMOKE ? 2 : 6;
const HOSTED_PDFS_AT_ONCE = SMOKE ? 2 : 4;
const EMAILS = SMOKE ? 2 : 8;
const OCR_BOMBS = SMOKE ? 2 : 10;
const UPLOAD_BOMBS = SMOKE ? 3 : 15;
const TIERED_USAGE_BATCHES = SMOKE ? 2 : 5;
/** BENCH_ROWS: the rows to run, by name, comma-separated (default: every row), for an A/B of one row. */
const ROWS = process.env.BENCH_ROWS ? process.env.BENCH_ROWS.split(",") : null;
/** The largest logo the API takes: 4000 pixels a side (and at most 1 MiB, which a flat image stays well under). */
const LOGO_SIDE = 4000;
const TARGET_P99_RATIO = 3;
const TARGET_MAX_MS = 500;

const API_KEY = `sk_bench_${randomBytes(12).toString("hex")}`; // company A: the bootstrap company
const ADMIN_TOKEN = randomBytes(24).toString("hex");

type Engine = "postgres" | "pglite";

interface Row {
  name: string;
  /** What A did, and how its requests were answered (status and code → count). */
  operation: string;
  operationMs: number;
  rounds: number;
  answers: Record<string, number>;
  notes: string[];
  b: Latencies;
  p99Ratio: number | null;
  met: boolean | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const thisMonth = () => {
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0));
  return { start: start.toISOString().slice(0, 10), end: end.toISOString().slice(0, 10) };
};

/** The answers of A's requests, counted by status and code. */
class Tally {
  readonly counts: Record<string, number> = {};
  add(status: number, code?: unknown): void {
    const key = code ? `${status} ${String(code)}` : String(status);
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The API, as a client calls it

/** A JSON call that must answer `expected`; its parsed body. */
async function call(
  port: number,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  expected = [200, 201, 202],
): Promise<Record<string, unknown>> {
  const res = await request(port, method, path, body === undefined ? undefined : JSON.stringify(body), key);
  if (!expected.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return res.body ? JSON.parse(res.body) : {};
}

/** A customer (emailed its invoices when `email`) and a sample contract of it: the contract's id. */
async function contractOf(port: number, key: string, name: string, email = false): Promise<string> {
  const customer = await call(port, key, "POST", "/v1/billing/customers", {
    name,
    ...(email ? { email: `ap-${randomBytes(4).toString("hex")}@customer.example`, invoice_delivery: "email" } : {}),
  });
  return String((await call(port, key, "POST", "/v1/billing/contracts", { customer_id: customer.id })).id);
}

/** A contract with one event of this month: its draft invoice's number. */
async function draftOf(port: number, key: string, name: string, email = false): Promise<string> {
  const contract = await contractOf(port, key, name, email);
  await call(port, key, "POST", "/v1/billing/usage", { events: [usageEvent(contract)] });
  const invoices = await call(port, key, "GET", `/v1/billing/invoices?contract=${encodeURIComponent(contract)}`);
  return String((invoices.data as { number: string }[])[0]?.number);
}

/** A raw-bodied request of A's (a logo, a PDF download), on its own connection: status and code. */
async function raw(
  port: number,
  method: string,
  path: string,
  body?: { bytes: Buffer; type: string },
): Promise<{ status: number; code?: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body ? { "content-type": body.type } : {}) },
    ...(body ? { body: new Uint8Array(body.bytes) } : {}),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const code = res.headers.get("content-type")?.includes("json") ? JSON.parse(bytes.toString()).code : undefined;
  return { status: res.status, code };
}

// ---------------------------------------------------------------------------------------------------------
// A's heavy operations

interface Operation {
  name: string;
  /** What A does, in the table's words. */
  does: string;
  /** Runs once before B's load starts (not timed): files made, invoices issued. */
  prepare?(): Promise<void>;
  /** One round of the operation; a repeatable one runs again until the phase's time is up. */
  round(tally: Tally, notes: string[]): Promise<void>;
  repeat: boolean;
}

/** A 4000 × 4000 RGBA PNG, a disc on a transparent ground (127 KiB of file for 64 MB of pixels): the largest logo accepted. */
function largestLogo(): Buffer {
  const canvas = createCanvas(LOGO_SIDE, LOGO_SIDE);
  const context = canvas.getContext("2d");
  context.fillStyle = "rgba(20, 80, 160, 0.8)";
  context.beginPath();
  context.arc(LOGO_SIDE / 2, LOGO_SIDE / 2, LOGO_SIDE / 3, 0, 2 * Math.PI);
  context.fill();
  return canvas.toBuffer("image/png");
}

/** A graduated rule of TIERS tiers, as wide as needed for PREVIEW_EVENTS one-unit events to cross every one. */
function tieredRule(): Record<string, unknown> {
  const width = Math.max(1, Math.ceil(PREVIEW_EVENTS / TIERS));
  return {
    name: "API calls",
    metric: "api_calls",
    model: "graduated",
    tiers: Array.from({ length: TIERS }, (_, i) => ({
      up_to: i === TIERS - 1 ? null : (i + 1) * width,
      unit_amount: (1 / (i + 1)).toFixed(6),
      ...(i % 10 === 0 ? { flat_amount: "1.00" } : {}),
    })),
  };
}

async function operations(port: number, keyB: string, smtp: { received: unknown[] }): Promise<Operation[]> {
  const key = API_KEY;
  const pdfDrafts: string[] = [];
  for (let i = 0; i < INVOICE_PDFS; i++) pdfDrafts.push(await draftOf(port, key, `PDF customer ${i}`));
  const hosted = await draftOf(port, key, "Hosted customer");
  const emailed: string[] = [];
  for (let i = 0; i < EMAILS; i++) emailed.push(await draftOf(port, key, `Emailed customer ${i}`, true));
  const tiered = await contractOf(port, key, "Tiered customer");
  // The usage half of the tiers row goes to a contract of its own with the same rule, so that the previewed month
  // stays at the largest a preview takes however many rounds run.
  const tieredUsage = await contractOf(port, key, "Tiered usage customer");

  let logo: Buffer = Buffer.alloc(0);
  let hostedPath = "";
  let tiersAccepted = false;
  const tiersRule = tieredRule();
  let noise: Buffer[] = [];
  let scan: Buffer = Buffer.alloc(0);
  let bomb: Buffer = Buffer.alloc(0);

  return [
    {
      name: "logo × PDF",
      does: `PUT the largest logo (${LOGO_SIDE}×${LOGO_SIDE} RGBA PNG), then ${INVOICE_PDFS} invoice PDFs at once`,
      async prepare() {
        logo = largestLogo();
      },
      async round(tally) {
        const put = await raw(port, "PUT", "/v1/billing/account/logo", { bytes: logo, type: "image/png" });
        tally.add(put.status, put.code);
        const pdfs = await Promise.all(pdfDrafts.map((n) => raw(port, "GET", `/v1/billing/invoices/${n}/pdf`)));
        for (const pdf of pdfs) tally.add(pdf.status, pdf.code);
      },
      repeat: true,
    },
    {
      name: "hosted PDF",
      does: `GET /i/{token}/pdf of an issued invoice with the logo, ${HOSTED_PDFS_AT_ONCE} at a time`,
      async prepare() {
        const invoice = await call(port, key, "POST", `/v1/billing/invoices/${hosted}/finalize`);
        hostedPath = new URL(String(invoice.hosted_url)).pathname;
      },
      async round(tally) {
        const pdfs = await Promise.all(
          Array.from({ length: HOSTED_PDFS_AT_ONCE }, () => raw(port, "GET", `${hostedPath}/pdf`)),
        );
        for (const pdf of pdfs) tally.add(pdf.status, pdf.code);
      },
      repeat: true,
    },
    {
      name: "email batch",
      does: `finalize ${EMAILS} invoices with email delivery at once; the mail worker renders and sends each PDF`,
      async round(tally, notes) {
        const before = smtp.received.length;
        const answers = await Promise.all(
          emailed.map((n) => request(port, "POST", `/v1/billing/invoices/${n}/finalize`, undefined, key)),
        );
        for (const answer of answers) tally.add(answer.status);
        const deadline = performance.now() + 180_000;
        while (smtp.received.length < before + EMAILS && performance.now() < deadline) await sleep(50);
        notes.push(`${smtp.received.length - before} of ${EMAILS} emails received`);
      },
      repeat: false,
    },
    {
      name: "tiers × preview and usage",
      does: `POST …/pricing/preview of a month of ${PREVIEW_EVENTS} events under a ${TIERS}-tier graduated rule, and ${TIERED_USAGE_BATCHES} 100-event batches to that rule, at once`,
      async prepare() {
        const res = await request(
          port,
          "POST",
          `/v1/billing/contracts/${tiered}/pricing-rules`,
          JSON.stringify(tiersRule),
          key,
        );
        const usageRule = await request(
          port,
          "POST",
          `/v1/billing/contracts/${tieredUsage}/pricing-rules`,
          JSON.stringify(tiersRule),
          key,
        );
        tiersAccepted = (res.status === 201 || res.status === 200) && usageRule.status === 201;
        if (!tiersAccepted) {
          console.log(`REFUSED: a graduated rule of ${TIERS} tiers: ${res.status} ${res.body.slice(0, 300)}`);
          return;
        }
        const batches = Array.from({ length: Math.ceil(PREVIEW_EVENTS / 100) }, (_, i) =>
          Array.from({ length: Math.min(100, PREVIEW_EVENTS - i * 100) }, () => usageEvent(tiered, "api_calls")),
        );
        for (let i = 0; i < batches.length; i += 4)
          await Promise.all(
            batches.slice(i, i + 4).map((events) => call(port, key, "POST", "/v1/billing/usage", { events })),
          );
      },
      async round(tally, notes) {
        if (!tiersAccepted) {
          if (notes.length === 0) notes.push(`the API refused a graduated rule of ${TIERS} tiers: nothing to run`);
          return;
        }
        const month = thisMonth();
        const preview = request(
          port,
          "POST",
          `/v1/billing/contracts/${tiered}/pricing/preview`,
          JSON.stringify({ rules: [tiersRule], billing_period_start: month.start, billing_period_end: month.end }),
          key,
        );
        const usage = Array.from({ length: TIERED_USAGE_BATCHES }, () =>
          request(
            port,
            "POST",
            "/v1/billing/usage",
            JSON.stringify({ events: Array.from({ length: 100 }, () => usageEvent(tieredUsage, "api_calls")) }),
            key,
          ),
        );
        for (const answer of await Promise.all([preview, ...usage]))
          tally.add(answer.status, answer.status >= 300 ? JSON.parse(answer.body).code : undefined);
      },
      repeat: true,
    },
    {
      name: "OCR bombs",
      does: `${OCR_BOMBS} scans of noise pages to POST …/contracts/extract at once; B sends one real scanned agreement during it`,
      async prepare() {
        noise = await Promise.all(Array.from({ length: OCR_BOMBS }, (_, i) => noisePage(100 + i)));
        scan = storedScan("prose-200dpi");
      },
      async round(tally, notes) {
        const bombs = noise.map((pdf) => postPdf(port, key, "/v1/billing/contracts/extract", pdf));
        const mine = postPdf(port, keyB, "/v1/billing/contracts/extract", scan);
        for (const answer of await Promise.all(bombs)) tally.add(answer.status, answer.body.code);
        const answer = await mine;
        const terms = (answer.body.terms ?? {}) as Record<string, unknown>;
        const warnings = ((answer.body.warnings ?? []) as { code: string }[]).map((w) => w.code);
        notes.push(
          `B's scanned agreement: ${answer.status} in ${Math.round(answer.ms)} ms, terms: ${
            Object.keys(terms).join(", ") || "none"
          }, warnings: ${warnings.join(", ") || "none"}`,
        );
      },
      repeat: false,
    },
    {
      name: "upload bombs",
      does: `${UPLOAD_BOMBS} decompression bombs (1 GiB of page content each) to POST …/contracts/upload at once`,
      async prepare() {
        bomb = bombPdf(1024 * 1024 * 1024, { into: "page" });
      },
      async round(tally) {
        const answers = await Promise.all(
          Array.from({ length: UPLOAD_BOMBS }, () =>
            postPdf(port, key, "/v1/billing/contracts/upload", bomb, { terms: JSON.stringify(uploadTerms()) }),
          ),
        );
        for (const answer of answers) tally.add(answer.status, answer.body.code);
      },
      repeat: true,
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Phases

/** B's load for at least PHASE_MS, and through `operation` (repeated within the phase when repeatable). */
async function phase(
  service: Service,
  keyB: string,
  contractB: string,
  operation: Operation | null,
  baseline: Latencies | null,
): Promise<Row> {
  await operation?.prepare?.();
  const tally = new Tally();
  const notes: string[] = [];
  let rounds = 0;
  const load = steadyLoad(service.port, keyB, contractB, RATE);
  const started = performance.now();
  if (operation) {
    try {
      do {
        await operation.round(tally, notes);
        rounds++;
      } while (operation.repeat && performance.now() - started < PHASE_MS);
    } catch (error) {
      notes.push(`failed: ${(error as Error).message}`);
    }
  }
  const operationMs = Math.round(performance.now() - started);
  await sleep(PHASE_MS - (performance.now() - started));
  const b = await load.stop();
  const p99Ratio = baseline ? Math.round((b.p99Ms / Math.max(baseline.p99Ms, 0.1)) * 100) / 100 : null;
  return {
    name: operation?.name ?? "baseline (B alone)",
    operation: operation?.does ?? "nothing",
    operationMs: operation ? operationMs : 0,
    rounds,
    answers: tally.counts,
    notes,
    b,
    p99Ratio,
    met: p99Ratio === null ? null : p99Ratio <= TARGET_P99_RATIO && b.maxMs <= TARGET_MAX_MS && b.errors === 0,
  };
}

/** The invariants over everything the phases stored (`billing verify`): a fast but wrong service fails the run. */
async function verifyStored(storage: { kind: "postgres"; url: string } | { kind: "pglite"; dataDir: string }) {
  const db = await openDatabase(storage);
  try {
    const report = await verifyBilling(db);
    return report.ok ? "clean" : `BROKEN: ${report.problems.slice(0, 5).join("; ")}`;
  } finally {
    await db.close();
  }
}

async function runEngine(engine: Engine): Promise<{ rows: Row[]; peakServiceRssMb: number | null; verified: string }> {
  const smtp = await startSmtpReceiver();
  const database = `billing_bench_stalls_${Date.now().toString(36)}`;
  const dataDir = engine === "pglite" ? mkdtempSync(join(tmpdir(), "billing-stalls-")) : null;
  // An empty DATABASE_URL is unset to the service: its embedded database, in a fresh data folder.
  const storage: Record<string, string> = dataDir
    ? { DATABASE_URL: "", BILLING_DATA_DIR: dataDir }
    : { DATABASE_URL: await createDatabase(database) };
  const service = await startService(
    {
      ...storage,
      BILLING_ADMIN_TOKEN: ADMIN_TOKEN,
      BILLING_SMTP_URL: smtp.url,
      BILLING_MAIL_FROM: "Bench Billing <billing@seller.example>",
      BILLING_MAIL_POLL_INTERVAL: "1s",
    },
    API_KEY,
  );
  try {
    const keyB = await companyWithKey(service.port, ADMIN_TOKEN, "Company B");
    const contractB = await contractOf(service.port, keyB, "Bystander customer");
    // B's draft exists before the baseline, so that no phase pays for creating it.
    await call(service.port, keyB, "POST", "/v1/billing/usage", { events: [usageEvent(contractB)] });
    const ops = await operations(service.port, keyB, smtp);
    // A warm-up of B's load, not counted: the first requests of a process pay for compiling its code paths.
    const warmUp = steadyLoad(service.port, keyB, contractB, RATE);
    await sleep(SMOKE ? 1_000 : 3_000);
    await warmUp.stop();
    const rows: Row[] = [];
    const baseline = await phase(service, keyB, contractB, null, null);
    rows.push(baseline);
    printRow(engine, baseline);
    for (const operation of ops.filter((op) => ROWS === null || ROWS.includes(op.name))) {
      const row = await phase(service, keyB, contractB, operation, baseline.b);
      rows.push(row);
      printRow(engine, row);
    }
    const peakServiceRssMb = service.peakRssMb();
    await service.stop();
    const verified = await verifyStored(
      dataDir ? { kind: "pglite", dataDir } : { kind: "postgres", url: storage.DATABASE_URL! },
    );
    console.log(`[${engine}] billing verify: ${verified}`);
    return { rows, peakServiceRssMb, verified };
  } finally {
    await service.stop();
    await smtp.close();
    if (engine === "postgres") await dropDatabase(database);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Report

const verdict = (row: Row) => (row.met === null ? "-" : row.met ? "met" : "**MISSED**");

function printRow(engine: Engine, row: Row): void {
  console.log(
    `[${engine}] ${row.name}: B p50 ${row.b.p50Ms} ms, p99 ${row.b.p99Ms} ms, max ${row.b.maxMs} ms (${row.b.n} requests, ${row.b.errors} errors)` +
      (row.met === null ? "" : `; A ${row.operationMs} ms, ${row.rounds} round(s); ${row.met ? "met" : "MISSED"}`),
  );
}

function table(engine: Engine, rows: Row[]): string {
  const answers = (row: Row) =>
    Object.entries(row.answers)
      .map(([answer, count]) => `${count}× ${answer}`)
      .join(", ");
  const lines = [
    `${engine}:`,
    "",
    "| row | A's operation: time, rounds, answers | B p50 ms | B p99 ms | B max ms | B p99 ÷ baseline | target |",
    "|---|---|---:|---:|---:|---:|---|",
    ...rows.map((row) => {
      const a =
        row.met === null
          ? "-"
          : [`${row.operationMs} ms`, `${row.rounds} round(s)`, answers(row), ...row.notes].filter(Boolean).join("; ");
      const errors = row.b.errors > 0 ? ` (${row.b.errors} of ${row.b.n} failed)` : "";
      return `| ${row.name} | ${a} | ${row.b.p50Ms} | ${row.b.p99Ms} | ${row.b.maxMs}${errors} | ${row.p99Ratio ?? "-"} | ${verdict(row)} |`;
    }),
  ];
  return lines.join("\n");
}

async function main(): Promise<void> {
  if (!SMOKE && process.env.BENCH_SERVICE !== "tsx") {
    const build = spawnSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
    if (build.status !== 0) throw new Error("build failed");
  }
  const results = {
    date: new Date().toISOString(),
    smoke: SMOKE,
    machine: machine(),
    settings: {
      phaseMs: PHASE_MS,
      bRequestsPerSecond: RATE,
      tiers: TIERS,
      previewEvents: PREVIEW_EVENTS,
      invoicePdfs: INVOICE_PDFS,
      hostedPdfsAtOnce: HOSTED_PDFS_AT_ONCE,
      emails: EMAILS,
      ocrBombs: OCR_BOMBS,
      uploadBombs: UPLOAD_BOMBS,
      target: { p99Ratio: TARGET_P99_RATIO, maxMs: TARGET_MAX_MS },
    },
    engines: {} as Record<string, Awaited<ReturnType<typeof runEngine>>>,
  };
  for (const engine of ENGINES) results.engines[engine] = await runEngine(engine);

  console.log(
    `\nB's latency (${RATE} requests/s, one-event usage and an invoice list alternately) alone and during A's operations; target: p99 ≤ ${TARGET_P99_RATIO}× baseline and max ≤ ${TARGET_MAX_MS} ms, no errors\n`,
  );
  for (const [engine, result] of Object.entries(results.engines))
    console.log(`${table(engine as Engine, result.rows)}\n`);
  const missed = Object.values(results.engines).flatMap((r) => r.rows.filter((row) => row.met === false));
  console.log(missed.length > 0 ? `MISSED: ${missed.length} row(s) past the target` : "every row met the target");
  mkdirSync("bench/results", { recursive: true });
  const file = `bench/results/stalls-${SMOKE ? "smoke-" : ""}${results.date.slice(0, 19).replace(/:/g, "-")}.json`;
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results: ${file}`);
}

await main();
