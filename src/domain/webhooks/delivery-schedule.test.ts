import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSchedule } from "../../config.js";
import { maxAttempts, nextAttemptAt } from "./delivery-schedule.js";

const schedule = parseSchedule("1m,5m,30m,2h,6h,12h,24h");
const now = new Date("2026-03-15T12:00:00.000Z");
const minutes = (n: number) => n * 60_000;

describe("nextAttemptAt", () => {
  const cases: Array<{ name: string; attempts: number; delayMs: number | null }> = [
    { name: "retries the first failure after 1 minute", attempts: 1, delayMs: minutes(1) },
    { name: "retries the second failure after 5 minutes", attempts: 2, delayMs: minutes(5) },
    { name: "retries the third failure after 30 minutes", attempts: 3, delayMs: minutes(30) },
    { name: "retries the fourth failure after 2 hours", attempts: 4, delayMs: minutes(120) },
    { name: "retries the fifth failure after 6 hours", attempts: 5, delayMs: minutes(360) },
    { name: "retries the sixth failure after 12 hours", attempts: 6, delayMs: minutes(720) },
    { name: "retries the seventh failure after 24 hours", attempts: 7, delayMs: minutes(1440) },
    { name: "gives up after the eighth attempt", attempts: 8, delayMs: null },
    { name: "has nothing to schedule before any attempt", attempts: 0, delayMs: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const next = nextAttemptAt(c.attempts, schedule, now);
      assert.equal(next === null ? null : next.getTime() - now.getTime(), c.delayMs);
    });
  }

  it("makes 8 attempts in all with the default schedule", () => {
    assert.equal(maxAttempts(schedule), 8);
  });

  it("follows a short schedule given in milliseconds and seconds", () => {
    const short = parseSchedule("50ms,2s");
    assert.equal(maxAttempts(short), 3);
    assert.equal(nextAttemptAt(1, short, now)!.getTime() - now.getTime(), 50);
    assert.equal(nextAttemptAt(2, short, now)!.getTime() - now.getTime(), 2000);
    assert.equal(nextAttemptAt(3, short, now), null);
  });
});
