// A child process with a budget: the one home of how the service's children are started and how the ones that
// take too much are ended: the PDF readers' (pdf-text.ts, pdf-ocr.ts), one per reading, and the document pool's
// (child-pool.ts), long-lived, with a budget per job and none while idle. The budget counts the child's CPU time
// (user + system, from /proc/<pid>/stat), not the wall clock: on a busy machine, or at nice 19 behind other work,
// a reading is slowed, never refused for it, while a file built to parse for minutes spends its CPU and is ended
// all the same. A backstop, several times the CPU budget, ends a child that is stuck: neither running nor waiting
// for a CPU (stopped, or waiting on something that never comes), read from its threads' time on a CPU and on a
// run queue in /proc/<pid>/task/<tid>/schedstat; a child starved of a CPU is waiting, not stuck. Where /proc is absent the CPU
// time is not known and the wall clock counts instead. The resident set is watched too (where /proc shows it),
// beside the heap limit the caller gives Node in `execArgv`. The children come from the launcher (launcher.ts),
// so starting one never pauses the service's event loop.
import { launch } from "./launcher.js";
import { stuckClock } from "./stuck-time.js";
import { cpuTimeMs, procShowsCpu, reniceProcess, residentBytes, scheduledMs } from "./process-usage.js";

export interface ChildBudget {
  /** CPU time (user + system, all the child's threads) the child may use, counted from the budget's start. */
  cpuMs: number;
  /**
   * The backstop: time the child was stuck since the budget's start, neither running nor waiting for a CPU (a
   * stopped child, or one waiting on something that never comes); time starved of a CPU on a busy machine is not.
   */
  wallMs: number;
  /** The child's resident set, checked where /proc shows it. */
  rssBytes: number;
}

/** How a child ended: on its own (or by `kill()`), or by the budget it went past. */
export type ChildEnd = "exited" | "cpu" | "wall" | "memory";

export interface BudgetedChild {
  /** The child's process id, once it has started (undefined before, or when it could not be started). */
  readonly pid: number | undefined;
  /** Settles with the child's process id once it has started (undefined when it could not be). */
  readonly started: Promise<number | undefined>;
  send(message: unknown): void;
  /** Starts the budget again from now (the CPU used and the time passed so far no longer count), with `budget` if given. */
  restartBudget(budget?: ChildBudget): void;
  /** Stops counting until the next `restartBudget`: an idle child of a pool spends nothing of a job's budget. */
  pauseBudget(): void;
  /** Whether messages can still reach the child. */
  readonly connected: boolean;
  /** Whether the child holds the service open (the default) or not (an idle child of a pool). */
  ref(): void;
  unref(): void;
  /** The CPU time the child used since the budget's start (where /proc is absent: the wall time). */
  cpuMs(): number;
  /** Gives the child this CPU priority (19: the lowest); where the OS refuses, the budget still holds. */
  renice(priority: number): void;
  /** Ends the child now (SIGKILL); `ended` then says `exited`. */
  kill(): void;
  /** Settles once the child has exited: why it did. Rejects when the child could not be started. */
  readonly ended: Promise<ChildEnd>;
}

export interface BudgetedChildOptions {
  budget: ChildBudget;
  /** Node's options for the child, e.g. its heap limit (`--max-old-space-size`). */
  execArgv?: string[];
  /** The child's CPU priority from its start. */
  nice?: number;
  onMessage?: (message: unknown) => void;
  /** Called at every check of the budget with the CPU used since its start: for a caller's own thresholds. */
  onCheck?: (cpuMs: number) => void;
  /** How often the budget is checked. */
  checkEveryMs?: number;
  /** Where the child's stderr goes (default: nowhere). */
  stderr?: "inherit" | "ignore";
}

/** Starts `module` (a plain JavaScript file) as a child over IPC, ended when it goes past its budget. */
export function runBudgetedChild(module: URL, options: BudgetedChildOptions): BudgetedChild {
  const child = launch(module, { execArgv: options.execArgv ?? [], stderr: options.stderr ?? "ignore" });
  const startedPid = new Promise<number | undefined>((resolve) => {
    child.once("spawn", resolve);
    child.once("exit", () => resolve(undefined));
  });
  let budget = options.budget;
  let started = Date.now();
  let cpuAtStart = 0;
  let overrun: ChildEnd | undefined;
  let paused = false;
  // The last CPU time read: a process that has just exited has no /proc entry, and counts what it used last.
  let cpuLast = 0;
  const cpuNow = (): number => {
    const cpu = child.pid === undefined ? undefined : cpuTimeMs(child.pid);
    if (cpu !== undefined) cpuLast = cpu;
    return cpuLast;
  };
  const used = () => (procShowsCpu ? cpuNow() - cpuAtStart : Date.now() - started);
  const end = (why: ChildEnd) => {
    overrun ??= why;
    child.kill();
  };
  // The backstop counts only the time the child was stuck, never the time it was starved (stuck-time.ts).
  const stuck = stuckClock(Date.now());
  const check = () => {
    if (child.pid === undefined || child.exited || paused) return;
    const cpu = used();
    if (cpu > budget.cpuMs) return end("cpu");
    if (stuck.check(Date.now(), cpu, scheduledMs(child.pid)) > budget.wallMs) return end("wall");
    if (residentBytes(child.pid) > budget.rssBytes) return end("memory");
    reniceStarted();
    options.onCheck?.(cpu);
  };
  // The watch does not hold the service open: the child does, while it is referenced (ref/unref).
  const watch = setInterval(check, options.checkEveryMs ?? 50);
  watch.unref();
  let priority: number | undefined;
  const renice = (to: number) => {
    priority = to;
    if (child.pid !== undefined) reniceProcess(child.pid, to);
  };
  if (options.nice !== undefined) {
    priority = options.nice;
    child.once("spawn", () => priority !== undefined && renice(priority));
  }
  // Node starts threads of its own while it starts: the first checks give those the child's priority too.
  let startChecks = 3;
  const reniceStarted = () => {
    if (startChecks-- > 0 && priority !== undefined && child.pid !== undefined) reniceProcess(child.pid, priority);
  };
  if (options.onMessage) child.on("message", options.onMessage);
  const ended = new Promise<ChildEnd>((resolve, reject) => {
    const stopWatching = () => {
      clearInterval(watch);
    };
    child.once("exit", (_code: number | null, _signal: string | null, startError?: string) => {
      stopWatching();
      if (startError !== undefined) reject(new Error(`the child could not be started: ${startError}`));
      else resolve(overrun ?? "exited");
    });
  });
  return {
    get pid() {
      return child.pid;
    },
    started: startedPid,
    send: (message) => {
      // A child that died before it took the message: its exit says why.
      child.send(message, (error) => {
        if (error) child.kill();
      });
    },
    restartBudget(next = budget) {
      paused = false;
      budget = next;
      started = Date.now();
      cpuAtStart = procShowsCpu ? cpuNow() : 0;
      stuck.restart(Date.now());
    },
    pauseBudget() {
      paused = true;
    },
    get connected() {
      return child.connected;
    },
    ref: () => child.ref(),
    unref: () => child.unref(),
    cpuMs: used,
    renice,
    kill: () => child.kill(),
    ended,
  };
}
