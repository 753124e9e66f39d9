import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { STUCK_AFTER_MS, stuckClock } from "./stuck-time.js";

// Checks every 50 ms, each row a child's readings: its CPU time (ms, in 10 ms ticks as /proc shows it) and its
// threads' scheduled time (on a CPU and waiting, ms; null where /proc does not show it).
const CHECK = 50;

function stuckAfter(readings: readonly (readonly [cpu: number, scheduled: number | null])[]): number {
  const clock = stuckClock(0);
  let stuck = 0;
  readings.forEach(([cpu, scheduled], i) => {
    stuck = clock.check((i + 1) * CHECK, cpu, scheduled ?? undefined);
  });
  return stuck;
}

const repeat = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

describe("stuck time", () => {
  const cases: { name: string; readings: [number, number | null][]; stuck: number }[] = [
    {
      name: "a child that runs is never stuck",
      readings: repeat(100, (i): [number, number] => [i * 10, i * 50]),
      stuck: 0,
    },
    {
      name: "a starved child (a slice now and then, its CPU ticks not moving for a while) is never stuck",
      // Scheduled time moves every third check; the CPU figure only every hundredth (5 s without a tick).
      readings: repeat(200, (i): [number, number] => [Math.floor(i / 100) * 10, Math.floor(i / 3) * 2]),
      stuck: 0,
    },
    {
      name: "a stopped child is stuck from a second after it last moved",
      readings: [[10, 5], ...repeat(60, (): [number, number] => [10, 5])],
      // Moved at check 1 (50 ms), then still until 3,050 ms: stuck from a second after, 1,050 ms.
      stuck: 3_050 - 1_050,
    },
    {
      name: "where /proc shows no scheduled time, an interval without CPU counts, after the same second",
      readings: [[10, null], ...repeat(60, (): [number, null] => [10, null])],
      stuck: 3_050 - 1_050,
    },
    {
      name: "a child that moves again stops the count, and what it counted stays",
      readings: [
        [10, 5],
        ...repeat(40, (): [number, number] => [10, 5]),
        ...repeat(20, (i): [number, number] => [20 + i * 10, 6 + i]),
      ],
      stuck: 2_050 - 1_050,
    },
  ];
  for (const c of cases) it(c.name, () => assert.equal(stuckAfter(c.readings), c.stuck));

  it("starts from nothing again when the budget restarts", () => {
    const clock = stuckClock(0);
    for (let at = CHECK; at <= 3_000; at += CHECK) clock.check(at, 0, 0);
    assert.ok(clock.check(3_050, 0, 0) > 0);
    clock.restart(3_050);
    assert.equal(clock.check(3_100, 0, 0), 0, "the first check after a restart has nothing to compare with");
    assert.equal(clock.check(3_100 + STUCK_AFTER_MS, 0, 0), 0, "nor is a second of standing still stuck yet");
  });
});
