// What a child process uses, as Linux shows it in /proc: its CPU time and its resident set. The one home of how
// both are read, for the readers' budgeted children (budgeted-child.ts) and the document processes (child-pool.ts).
import { readFileSync } from "node:fs";

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

/** The resident set of a process, from /proc (pages of 4 KiB, as on x86-64 and most arm64 kernels); 0 where unknown. */
export function residentBytes(pid: number): number {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
    return pages * 4096;
  } catch {
    return 0;
  }
}
