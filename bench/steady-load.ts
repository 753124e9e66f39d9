/**
 * Company B's steady load for `npm run bench:stalls`, in a worker thread of its own: RATE requests a second,
 * alternately a one-event `POST /v1/billing/usage` and `GET /v1/billing/invoices?limit=10`, each timed from the
 * moment it was due to be sent (an open loop: a request held anywhere counts its wait). The worker keeps B's
 * clock apart from the bench's main thread, which sends A's heavy requests: building and reading those (15
 * multipart uploads at once) held the main thread's loop for up to 174 ms, time that B's requests then counted
 * as the service's although no part of the service was involved.
 */
import { randomBytes } from "node:crypto";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { percentile, request } from "./bench-kit.js";

export interface Latencies {
  n: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface Settings {
  port: number;
  key: string;
  contract: string;
  rate: number;
}

/** A one-unit event of `metric` now, to one contract, with an id of its own. */
export function usageEvent(contract: string, metric = "domestic_wire"): Record<string, unknown> {
  return {
    external_contract_id: contract,
    event_id: `evt-${randomBytes(8).toString("hex")}`,
    metric,
    quantity: 1,
    timestamp: new Date().toISOString(),
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Starts B's load in a worker thread; `stop` ends it once every request sent has been answered. */
export function steadyLoad(port: number, key: string, contract: string, rate: number): { stop(): Promise<Latencies> } {
  // This file is TypeScript: the worker registers tsx's loader, as the bench itself runs with it, then loads it.
  const boot = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})
    .then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(boot, { eval: true, workerData: { port, key, contract, rate } satisfies Settings });
  const result = new Promise<Latencies>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    async stop() {
      worker.postMessage("stop");
      const latencies = await result;
      await worker.terminate();
      return latencies;
    },
  };
}

/** The worker: sends until told to stop, then reports the latencies. */
function run({ port, key, contract, rate }: Settings) {
  const samples: number[] = [];
  let errors = 0;
  let sent = 0;
  let stopped = false;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const interval = 1000 / rate;
  const send = (due: number, k: number) => {
    const req =
      k % 2 === 0
        ? request(port, "POST", "/v1/billing/usage", JSON.stringify({ events: [usageEvent(contract)] }), key)
        : request(port, "GET", "/v1/billing/invoices?limit=10", undefined, key);
    const timed = req
      .then(
        (res) => {
          if (res.status >= 300) errors++;
        },
        () => {
          errors++;
        },
      )
      .then(() => {
        samples.push(performance.now() - due);
        inFlight.delete(timed);
      });
    inFlight.add(timed);
  };
  const tick = () => {
    if (stopped) return;
    // Every request whose time has come is sent now, late or not: a late one counts its lateness.
    while (started + sent * interval <= performance.now()) send(started + sent * interval, sent++);
    setTimeout(tick, Math.max(0, started + sent * interval - performance.now()));
  };
  tick();
  parentPort?.once("message", async () => {
    stopped = true;
    await Promise.all(inFlight);
    const sorted = samples.sort((a, b) => a - b);
    parentPort?.postMessage({
      n: sorted.length,
      errors,
      p50Ms: round1(percentile(sorted, 50)),
      p99Ms: round1(percentile(sorted, 99)),
      maxMs: round1(sorted.at(-1) ?? 0),
    } satisfies Latencies);
  });
}

if (!isMainThread && (workerData as Settings | undefined)?.port !== undefined) run(workerData as Settings);
