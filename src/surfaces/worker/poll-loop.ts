/**
 * A worker's loop: runs `step` again and again, at once while it finds work, else after `intervalMs` (or
 * sooner when nudged), until stopped. `stop` waits for the step in progress.
 */
export function createPollLoop(step: () => Promise<number>, intervalMs: number) {
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  return {
    start(): void {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          const done = await step();
          if (done > 0 || !running) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, intervalMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      })();
    },
    /** Looks for work now instead of at the next interval. */
    nudge(): void {
      wake?.();
    },
    async stop(): Promise<void> {
      running = false;
      wake?.();
      await loop;
    },
  };
}
