import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { timeSlices } from "./time-slices.js";

describe("time slices", () => {
  it("lets what waits on the event loop run in the middle of a long loop that yields when its slice is due", async () => {
    let ranAt: number | undefined;
    setImmediate(() => (ranAt = step));
    const slices = timeSlices(1);
    let step = 0;
    const started = performance.now();
    // About 50 ms of work, far beyond one slice of 1 ms.
    for (; performance.now() - started < 50; step++) {
      if (slices.due()) await slices.yield();
    }
    assert.ok(ranAt !== undefined, "the waiting callback ran before the loop ended");
    assert.ok(ranAt < step, `it ran at step ${ranAt} of ${step}, not after the last`);
  });

  it("yields again and again over a long loop, once a slice, not once at its end", async () => {
    // A clock that moves 1 ms each time it is read: 40 looks at it are 40 ms of work, whatever the machine's load.
    let clock = 0;
    const slices = timeSlices(2, () => clock++);
    let yields = 0;
    for (let step = 0; step < 40 * 32; step++) {
      if (slices.due()) {
        yields++;
        await slices.yield();
      }
    }
    // Slices of 2 ms over 40 looks of 1 ms each: a yield every other look (about 20, the yields' own reads of the
    // clock counted); a loop that yielded only when done would count 0 or 1.
    assert.ok(yields >= 10 && yields <= 40, `it yielded ${yields} times over 40 looks at the clock`);
  });
});
