/** What the benchmarks share: throwaway databases, the service as a child process, an HTTP client. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { createServer } from "node:net";
import { cpus, loadavg, totalmem } from "node:os";
import pg from "pg";

export const GIVEN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
export const BASE_URL = GIVEN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const SMOKE = process.env.BENCH_SMOKE === "1";
const FROM_SOURCE = process.env.BENCH_SERVICE === "tsx" || SMOKE;

// ---------------------------------------------------------------------------------------------------------
// Databases

export async function createDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: BASE_URL });
  admin.on("error", () => {});
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: BASE_URL });
  admin.on("error", () => {});
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** A command started in its own process group, and how long it took until /readyz answered 200. */
export interface Started {
  ms: number;
  /** Stops the whole group: SIGTERM (a graceful stop) or SIGKILL (a crash: npm and the service with it). */
  stop(signal: "SIGTERM" | "SIGKILL"): Promise<void>;
}

/** Starts `command` on a free port with `env` and times it to the first 200 of /readyz (polled every 10 ms). */
export async function timeToReady(command: string, args: string[], env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${command} ${args.join(" ")} exited before it was ready`);
    try {
      if ((await request(port, "GET", "/readyz")).status === 200) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 120_000)
      throw new Error(`${command} ${args.join(" ")} was not ready within 2 minutes`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = Math.round(performance.now() - started);
  return {
    ms,
    async stop(signal) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
      await exited;
      // npm exits first; wait until every process of the group (the service) is gone too.
      for (;;) {
        try {
          process.kill(-child.pid!, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

export interface Service {
  port: number;
  child: ChildProcess;
  peakRssMb(): number | null;
  stop(): Promise<void>;
}

/**
 * The C allocator's settings `npm start` gives the service (package.json): glibc hands memory freed by V8's
 * compilers (PGlite's WebAssembly is compiled at start-up, partly on background threads) back to the system
 * instead of keeping it in per-thread arenas (docs/performance.md, step 18). A setting already in the
 * environment wins, as in the start script.
 */
export const MALLOC_ENV = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "32768",
  MALLOC_TRIM_THRESHOLD_: "32768",
} as const;

export async function startService(env: Record<string, string>, apiKey: string): Promise<Service> {
  currentKey = apiKey;
  // BENCH_PROFILE=dir writes a V8 CPU profile of the service there (node --cpu-prof), to find the real cost.
  const profile = process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const args = [...profile, ...(FROM_SOURCE ? ["--import", "tsx", "src/main.ts"] : ["dist/src/main.js"])];
  // A free port can be taken by another process before the service binds it (tests run side by side): the
  // service is ours only when it knows this run's random key; a service that could not bind is started again.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, args, {
      env: {
        ...MALLOC_ENV,
        ...process.env,
        ...env,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        BILLING_RATE_LIMIT: "off", // one key drives all the load here
        BILLING_BOOTSTRAP_COMPANY: "bench",
        BILLING_BOOTSTRAP_API_KEY: apiKey,
      },
      stdio: ["ignore", "inherit", "inherit"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let up = false;
    for (let i = 0; i <= 600 && child.exitCode === null; i++) {
      try {
        const res = await request(port, "GET", "/v1/billing/customers?limit=1", undefined, apiKey);
        if (res.status === 200) {
          up = true;
          break;
        }
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!up) {
      child.kill("SIGKILL");
      await exited;
      if (attempt < 2) continue;
      throw new Error("the service did not start");
    }
    return service(port, child, exited);
  }
}

function service(port: number, child: ChildProcess, exited: Promise<void>): Service {
  return {
    port,
    child,
    peakRssMb() {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
        const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
        return Number.isFinite(kb) ? Math.round(kb / 1024) : null;
      } catch {
        return null;
      }
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

let currentKey = "";
export const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function request(
  port: number,
  method: string,
  path: string,
  body?: string,
  apiKey = currentKey,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body !== undefined
            ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc; 0 when it is gone or unknown. */
export function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces, hence the last ')'): utime and stime are 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = 100; // getconf CLK_TCK on Linux

/**
 * CPU used by the PostgreSQL backends serving one database between start() and stop(), read from /proc:
 * the share of the database's work the service's queries cost (not the WAL writer or checkpointer).
 * Other databases' backends (tests running beside the benchmark) are not counted.
 */
export async function postgresCpu(database: string): Promise<{ stop(): Promise<number> }> {
  const pids = async () => {
    const admin = new pg.Client({ connectionString: BASE_URL });
    admin.on("error", () => {});
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [
        database,
      ]);
      return rows.map((r) => r.pid);
    } finally {
      await admin.end();
    }
  };
  const before = new Map((await pids()).map((pid) => [pid, cpuSeconds(pid)]));
  return {
    async stop() {
      let used = 0;
      for (const pid of await pids()) used += cpuSeconds(pid) - (before.get(pid) ?? 0);
      return used;
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

// ---------------------------------------------------------------------------------------------------------
// Companies and files, as operators and clients send them

/** An operator's POST to the admin API (the service started with BILLING_ADMIN_TOKEN): its JSON answer. */
export async function adminPost(
  port: number,
  adminToken: string,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A new company, made through the admin API, and an API key of it with every scope. */
export async function companyWithKey(port: number, adminToken: string, name: string): Promise<string> {
  const company = await adminPost(port, adminToken, "/admin/v1/companies", { name });
  return String((await adminPost(port, adminToken, `/admin/v1/companies/${String(company.id)}/api-keys`, {})).key);
}

/**
 * A PDF sent as the multipart part `file` (then `fields`, each a part of its own), as a browser or fetch sends
 * it: the answer's status, its JSON body (its `code` on a refusal) and the time it took.
 */
export async function postPdf(
  port: number,
  key: string,
  path: string,
  pdf: Buffer,
  fields: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(pdf)], { type: "application/pdf" }), "agreement.pdf");
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, ms: performance.now() - started };
}

/** The machine a run measured, for its results file: figures compare only within one machine and hour. */
export function machine() {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadAverage1m: loadavg()[0],
  };
}
