// A few long-lived child processes that do the service's heavy work (rendering a PDF, decoding an image) off its
// event loop, so that one company's large document never holds another company's one-event request back. Jobs
// are queued by an opaque key (fair-queue.ts: each key in turn, bounded per key and overall; past a bound a job
// is refused at once with QueueFullError); each runs in a warm child at a lower CPU priority (nice), within a
// budget: the child's CPU time (utime + stime in /proc/<pid>/stat), its resident set (/proc/<pid>/statm), and a
// generous wall-clock backstop, watched by budgeted-child.ts (the one home of children's budgets), counted from
// the job's start and paused while the child is idle. A child over budget is killed, as is one that dies on its
// own: its job is refused with a ChildJobError and the next job gets a new child. No business rule: the jobs are
// the entry's.
//
// The child's entry serves jobs with serveChildJobs (child-jobs.ts). Messages use the "advanced" serialization
// (structured clone): Dates, Uint8Arrays and Buffers cross as such, class instances do not. The children come from
// the launcher (launcher.ts), so replacing one never pauses the service's event loop.
import { type BudgetedChild, type ChildBudget, type ChildEnd, runBudgetedChild } from "./budgeted-child.js";
import type { ChildReply, ChildRequest } from "./child-jobs.js";
import { createFairQueue, type FairQueueLimits } from "./fair-queue.js";

export interface ChildPoolOptions {
  /** The child's module. A `.ts` file (the service run from source, tests) is started with tsx's loader. */
  entry: URL;
  /** Children kept, each running one job at a time: the queue's slots. */
  children: number;
  /** The queue's bounds but its slots (which are `children`). */
  queue: Omit<FairQueueLimits, "slots">;
  budget: {
    /** CPU time one job may take in its child. */
    cpuMs: number;
    /** Wall-clock time one job may take: a backstop for a child that waits rather than computes. */
    wallMs: number;
    /** The child's resident set. */
    rssBytes: number;
    /** V8's old space, in MiB (--max-old-space-size). */
    heapMb: number;
  };
  /** The children's niceness (0–19): above the service's own, so that its main thread keeps its core. */
  nice: number;
}

/** Why a job did not answer: over a budget, its child died, or the job threw (its message). */
export type ChildJobFailure = "cpu" | "memory" | "time" | "exited" | "failed";

/** A job refused by its child or by the pool's budgets; the child, if it was at fault, is replaced. */
export class ChildJobError extends Error {
  constructor(
    readonly reason: ChildJobFailure,
    message: string,
  ) {
    super(message);
    this.name = "ChildJobError";
  }
}

export interface ChildPool {
  /** Runs the job `kind` on `input` in a child, in `key`'s turn; QueueFullError past a bound, ChildJobError if it fails. */
  run<T>(key: string, kind: string, input: unknown): Promise<T>;
  /** The bound a job of `key` would be refused by now, or undefined. */
  refusal(key: string): "key" | "total" | undefined;
  /** Jobs running and waiting now. */
  load(): { running: number; waiting: number };
  /**
   * Takes one of `key`'s turns without a child until `release` is called: `started` settles when the turn starts,
   * or rejects (QueueFullError) at once past a bound. A job that holds its company's place as long as its caller
   * says (tests prove the queue's fairness with it, without timing).
   */
  hold(key: string): { started: Promise<void>; release: () => void };
  /** The children's process ids (for operators and tests). */
  pids(): number[];
  /** Kills the children; jobs running are refused (`exited`). */
  close(): void;
}

interface Running {
  id: number;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Child {
  process: BudgetedChild;
  job: Running | undefined;
  /** Settles when the child says it is ready (or is gone): a job's CPU is counted from there. */
  ready: Promise<void>;
}

/** Why a budget ended a child, as a job's failure. */
const FAILURE_OF: Record<ChildEnd, ChildJobFailure> = { cpu: "cpu", memory: "memory", wall: "time", exited: "exited" };

export function createChildPool(options: ChildPoolOptions): ChildPool {
  const queue = createFairQueue({ ...options.queue, slots: options.children });
  const fromSource = options.entry.pathname.endsWith(".ts");
  const execArgv = [
    `--max-old-space-size=${options.budget.heapMb}`,
    ...(fromSource ? ["--import", import.meta.resolve("tsx")] : []),
  ];
  const jobBudget: ChildBudget = {
    cpuMs: options.budget.cpuMs,
    wallMs: options.budget.wallMs,
    rssBytes: options.budget.rssBytes,
  };
  const children = new Set<Child>();
  /** What a child's "ready" does: set when it is started. */
  const readyOf = new WeakMap<Child, () => void>();
  let nextId = 1;
  let closed = false;

  function spawn(): Child {
    let ready = () => {};
    const child: Child = {
      // Idle from the start: its budget counts only while it runs a job (from the job's start, once it is ready).
      process: runBudgetedChild(options.entry, {
        budget: jobBudget,
        execArgv,
        nice: options.nice,
        stderr: "inherit",
        onMessage: (reply) => answered(child, reply as ChildReply),
      }),
      job: undefined,
      ready: new Promise<void>((resolve) => (ready = resolve)),
    };
    child.process.pauseBudget();
    children.add(child);
    readyOf.set(child, () => {
      // Once loaded, the threads Node started meanwhile take the child's priority too.
      child.process.renice(options.nice);
      ready();
    });
    const gone = (why: ChildEnd) => {
      ready();
      if (!children.delete(child)) return;
      const job = child.job;
      child.job = undefined;
      job?.reject(
        new ChildJobError(
          FAILURE_OF[why],
          why === "exited"
            ? "the child process exited during the job"
            : `the job went over its ${FAILURE_OF[why]} budget`,
        ),
      );
    };
    child.process.ended.then(gone, () => gone("exited"));
    idle(child);
    return child;
  }

  function answered(child: Child, reply: ChildReply): void {
    if ("ready" in reply) {
      readyOf.get(child)?.();
      return;
    }
    const job = child.job;
    if (job === undefined || reply.id !== job.id) return;
    child.job = undefined;
    child.process.pauseBudget();
    idle(child);
    if (reply.ok) job.resolve(reply.value);
    else job.reject(new ChildJobError("failed", reply.message));
  }

  // An idle child never holds the service open; a busy one does, until it answers.
  function idle(child: Child) {
    child.process.unref();
  }
  function busy(child: Child) {
    child.process.ref();
  }

  /** Runs one job in a free child (the queue never starts more jobs than there are children). */
  function inChild<T>(kind: string, input: unknown): Promise<T> {
    if (closed) return Promise.reject(new ChildJobError("exited", "the pool is closed"));
    const child = [...children].find((c) => c.job === undefined && c.process.connected) ?? spawn();
    return new Promise<T>((resolve, reject) => {
      const job: Running = { id: nextId++, resolve: (value) => resolve(value as T), reject };
      child.job = job;
      busy(child);
      const request: ChildRequest = { id: job.id, kind, input };
      void child.ready.then(() => {
        if (child.job !== job) return; // gone before it was ready: the job is refused already
        child.process.restartBudget(jobBudget);
        child.process.send(request);
      });
    });
  }

  return {
    run: (key, kind, input) => queue.run(key, () => inChild(kind, input)),
    refusal: (key) => queue.refusal(key),
    load: () => queue.load(),
    hold(key) {
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      const started = new Promise<void>((resolve, reject) => {
        queue
          .run(key, () => {
            resolve();
            return released;
          })
          .catch(reject);
      });
      return { started, release };
    },
    pids: () => [...children].flatMap((c) => (c.process.pid === undefined ? [] : [c.process.pid])),
    close() {
      closed = true;
      for (const child of children) child.process.kill();
    },
  };
}
