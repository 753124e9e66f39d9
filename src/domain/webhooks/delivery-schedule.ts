/**
 * When a failed delivery is tried again (docs/webhooks.md, "Delivery rules"): after the n-th failed attempt, wait the n-th
 * delay of the schedule; attempts in all = delays + 1, after which the delivery has failed. Pure.
 */
export function nextAttemptAt(attemptsMade: number, scheduleMs: readonly number[], now: Date): Date | null {
  if (attemptsMade < 1 || attemptsMade > scheduleMs.length) return null;
  return new Date(now.getTime() + scheduleMs[attemptsMade - 1]!);
}

export const maxAttempts = (scheduleMs: readonly number[]): number => scheduleMs.length + 1;
