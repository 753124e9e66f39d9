// What a child process uses, as Linux shows it in /proc: its CPU time and its resident set, and the CPU priority
// of all its threads. The one home of each, for the readers' budgeted children (budgeted-child.ts) and the
// document processes (child-pool.ts).
import { readdirSync, readFileSync } from "node:fs";
import { setPriority } from "node:os";

/**
 * Clock ticks per second in /proc (USER_HZ): 100 on every Linux architecture Node runs on, whatever the kernel's
 * own tick rate (`getconf CLK_TCK`).
 */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time a process has used, user and system, over all its threads, in milliseconds: fields 14 and 15 of
 * /proc/<pid>/stat, counted after the command name (in parentheses, and free to hold spaces and parentheses
 * itself). Undefined where /proc is absent or the process is gone.
 */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (the state): utime is field 14, stime field 15.
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** Whether this system shows a process's CPU time in /proc (Linux); elsewhere budgets count the wall clock. */
export const procShowsCpu = cpuTimeMs(process.pid) !== undefined;

/**
 * A process's scheduling so far, in milliseconds, summed over its threads: fields 1 and 2 of
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds on a CPU, exact rather than in clock ticks, and nanoseconds
 * waiting on a run queue, added when the thread gets the CPU). Only its growth means anything: a process whose
 * figure grows runs or is trying to (a busy machine gives it a CPU late); one whose figure stands still is
 * sleeping or stopped. Undefined where /proc does not show it.
 */
export function scheduledMs(pid: number): number | undefined {
  try {
    let total = 0;
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ");
        total += (Number(onCpu) + Number(waiting)) / 1e6;
      } catch {
        // A thread gone meanwhile.
      }
    }
    return Number.isFinite(total) ? total : undefined;
  } catch {
    return undefined;
  }
}

/** The resident set of a process, from /proc (pages of 4 KiB, as on x86-64 and most arm64 kernels); 0 where unknown. */
export function residentBytes(pid: number): number {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
    return pages * 4096;
  } catch {
    return 0;
  }
}

/**
 * Gives every thread of a process this CPU priority (nice). On Linux a priority belongs to a thread: setpriority
 * on a process id changes its main thread only, and the threads Node started before (V8's compiler and garbage
 * collector helpers, libuv's pool) would keep the service's priority and compete with its event loop; threads
 * started later take their creator's. Where /proc is absent, the process id alone. A thread that is gone, or a
 * priority the OS does not allow, is passed over: the budgets still hold.
 */
export function reniceProcess(pid: number, priority: number): void {
  let threads = [String(pid)];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    // No /proc: the process id, as setpriority takes it elsewhere.
  }
  for (const thread of threads) {
    try {
      setPriority(Number(thread), priority);
    } catch {
      // Gone meanwhile, or not allowed.
    }
  }
}
