// How long a child process has been stuck: the time in which it neither ran nor waited for a CPU (stopped, or
// waiting on something that never comes), as budgeted-child.ts's backstop counts it. Time starved of a CPU on a
// busy machine is not stuck time: a starved child is slowed, never ended for it. Pure: the caller reads the
// clock and /proc, and hands each check's readings in.

/**
 * How long nothing of a child may move (no CPU, no slice waited for) before that time counts as stuck: a starved
 * thread can go tens of milliseconds without a slice, and /proc's CPU time moves in 10 ms ticks.
 */
export const STUCK_AFTER_MS = 1_000;

export interface StuckClock {
  /**
   * One check's readings: the time now, the child's CPU time, and its threads' scheduled time (on a CPU and
   * waiting for one; undefined where /proc does not show it). Returns the stuck time so far.
   */
  check(now: number, cpuMs: number, scheduledMs: number | undefined): number;
  /** Starts counting again from `now` (a new budget). */
  restart(now: number): void;
}

export function stuckClock(now: number): StuckClock {
  let stuck = 0;
  let lastCheck = now;
  let lastActive = now;
  let lastCpu = -1;
  let lastScheduled: number | undefined;
  return {
    check(at, cpuMs, scheduledMs) {
      const moved =
        cpuMs > lastCpu || (scheduledMs !== undefined && lastScheduled !== undefined && scheduledMs > lastScheduled);
      if (moved) lastActive = at;
      else if (at - lastActive > STUCK_AFTER_MS) stuck += at - lastCheck;
      lastCheck = at;
      lastCpu = cpuMs;
      lastScheduled = scheduledMs;
      return stuck;
    },
    restart(at) {
      stuck = 0;
      lastCheck = at;
      lastActive = at;
      lastCpu = -1;
      lastScheduled = undefined;
    },
  };
}
