/**
 * The service as operators run it, for the system tier's tests (test/system/): a child
 * `node --import tsx src/main.ts` on a port of its own, waited for with bounded polling (`serviceProcesses`),
 * or one that must refuse to start (`refusedStart`); the `billing` command line run from the compiled dist/
 * (`runBilling`; `ensureCliBuilt` builds it when missing or older than the sources). Every test that starts
 * the service or the command does it through here. Children started through `serviceProcesses()` are killed
 * after the suite.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after } from "node:test";
import { waitFor } from "./assertions.js";
import { closedPort } from "./webhook-receiver.js";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ServiceProcess {
  port: number;
  base: string;
  child: ChildProcess;
  pid: number;
  /** stdout and stderr, in arrival order. */
  output: string[];
  /** Resolves once the process has exited (and been reaped). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

/** A clean environment for a child: nothing of the test runner's (NODE_TEST_CONTEXT, BILLING_*, DATABASE_URL) leaks in. */
function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
}

/**
 * Starts and tracks service processes; every one still alive after the suite is SIGKILLed there.
 * Call at suite level.
 */
export function serviceProcesses() {
  const started: ServiceProcess[] = [];
  after(async () => {
    await Promise.all(started.map((s) => kill(s)));
  });

  /**
   * Starts the service with `env` (storage and the rest) on `port` (a free one when not given) and waits
   * until /healthz answers: listening comes after migrations and the bootstrap, so it is ready then.
   */
  async function start(
    env: Record<string, string>,
    options: { port?: number; readyTimeoutMs?: number } = {},
  ): Promise<ServiceProcess> {
    const port = options.port ?? (await closedPort());
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: REPO_ROOT,
      env: {
        ...baseEnv(),
        PORT: String(port),
        HOST: "127.0.0.1",
        BILLING_PUBLIC_URL: `http://127.0.0.1:${port}`,
        BILLING_RATE_LIMIT: "off",
        LOG_LEVEL: "warn",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output: string[] = [];
    child.stdout!.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const service: ServiceProcess = {
      port,
      base: `http://127.0.0.1:${port}`,
      child,
      pid: child.pid!,
      output,
      exited,
      alive: () => child.exitCode === null && child.signalCode === null,
    };
    started.push(service);
    await waitFor(
      `the service on port ${port} to be healthy`,
      async () => {
        if (!service.alive())
          assert.fail(`the service exited (${child.exitCode ?? child.signalCode}): ${output.join("")}`);
        try {
          return (await fetch(`${service.base}/healthz`, { signal: AbortSignal.timeout(2_000) })).status === 200;
        } catch {
          return false;
        }
      },
      options.readyTimeoutMs ?? 40_000,
    );
    return service;
  }

  return { start, kill, stop };
}

/** SIGKILL (no chance to clean up) and wait for the exit. */
export async function kill(service: ServiceProcess): Promise<void> {
  if (service.alive()) service.child.kill("SIGKILL");
  await service.exited;
}

/** SIGTERM and wait (bounded) for the exit; returns how it ended. */
export async function stop(
  service: ServiceProcess,
  timeoutMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (service.alive()) service.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    service.exited,
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    await kill(service);
    assert.fail(`the service did not exit within ${timeoutMs} ms of SIGTERM: ${service.output.join("")}`);
  }
  return outcome;
}

/**
 * Starts the service from the sources with `env` (on 127.0.0.1, an in-memory database unless `env` says
 * otherwise), expecting it to refuse to start: asserts exit code 1 and one line on stderr, no stack trace,
 * and returns that line.
 */
export async function refusedStart(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...baseEnv(),
      PORT: "0",
      HOST: "127.0.0.1",
      BILLING_DATA_DIR: "memory://",
      LOG_LEVEL: "silent",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
  assert.equal(code, 1);
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one line, no stack trace: ${stderr}`);
  return lines[0]!;
}

const compiledCli = join(REPO_ROOT, "dist", "src", "surfaces", "cli", "cli.js");

/** bin/billing.js runs dist/: build it when it is missing or older than the sources (as npm start does). */
export function ensureCliBuilt(): void {
  const build = spawnSync(process.execPath, [join(REPO_ROOT, "scripts", "build.mjs"), "--if-stale"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  // A type error elsewhere in src/ still emits JavaScript; only a missing CLI stops the suite.
  if (build.status !== 0) console.warn(`scripts/build.mjs exited ${build.status}:\n${build.stdout}${build.stderr}`);
  assert.ok(existsSync(compiledCli), "the build produced dist/src/surfaces/cli/cli.js");
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/billing.js ...args` with a clean environment plus `env`; 60 s at most. */
export function runBilling(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, "bin", "billing.js"), ...args], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), LOG_LEVEL: "silent", ...env },
      timeout: 60_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `billing verify` must exit 0 and print `"ok": true`; returns its report. */
export async function assertVerifyPasses(
  env: Record<string, string>,
): Promise<{ ok: boolean; events: number; problems: string[] }> {
  const run = await runBilling(["verify"], env);
  assert.equal(run.code, 0, `billing verify exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /"ok": true/);
  const report = JSON.parse(run.stdout) as { ok: boolean; events: number; problems: string[] };
  assert.equal(report.ok, true);
  assert.deepEqual(report.problems, []);
  return report;
}
