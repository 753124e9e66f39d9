// Work whose cost grows with its input, run on the event loop in slices: the caller asks `due()` between two
// steps of its loop and awaits `yield` when it says so, so that no stretch of it holds the loop for longer than a
// slice and every other request waiting meanwhile is served in between (docs/architecture.md, "Heavy work").

/** How long one slice may hold the event loop, in milliseconds. */
const SLICE_MS = 4;

/** Steps between two looks at the clock: a look costs far more than a step of cheap work. */
const STEPS_PER_LOOK = 32;

export interface TimeSlices {
  /** Whether this slice is over: the caller should `await slices.yield()` before its next step. */
  due(): boolean;
  /** Lets every callback waiting on the loop run (setImmediate), then starts a new slice. */
  yield(): Promise<void>;
}

export function timeSlices(sliceMs = SLICE_MS, now: () => number = () => performance.now()): TimeSlices {
  let started = now();
  let steps = 0;
  return {
    due() {
      if (++steps < STEPS_PER_LOOK) return false;
      steps = 0;
      return now() - started >= sliceMs;
    },
    async yield() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      started = now();
    },
  };
}
