import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../kernel/money.js";
import { mergeTiers, type TierPart, type TierSum, tiersToRecord } from "./invoice-lines.js";

// mergeTiers adds an event's parts to a line's tier sums by binary search (one or two tiers an event), where it
// once rebuilt and sorted every sum per event. These hold it to that simple definition: group by terms, keep the
// order the entries came in, then a stable sort by tier order.

const key = (t: TierPart) => `${t.upTo?.toFixed() ?? ""}|${t.unit.toFixed()}|${t.flat?.toFixed() ?? ""}`;
const order = (a: TierPart, b: TierPart) => {
  if (a.upTo === null || b.upTo === null) {
    if (a.upTo !== b.upTo) return a.upTo === null ? 1 : -1;
  } else if (!a.upTo.eq(b.upTo)) return a.upTo.cmp(b.upTo);
  if (!a.unit.eq(b.unit)) return a.unit.cmp(b.unit);
  return (a.flat ?? new Big(0)).cmp(b.flat ?? new Big(0));
};
function byDefinition(sums: readonly TierSum[] | null, parts: readonly TierPart[]): TierSum[] {
  const byKey = new Map<string, TierSum>();
  for (const sum of sums ?? []) byKey.set(key(sum), sum);
  for (const part of parts) {
    const sofar = byKey.get(key(part));
    byKey.set(
      key(part),
      sofar ? { ...sofar, quantity: sofar.quantity.plus(part.quantity), amount: sofar.amount.plus(part.amount) } : part,
    );
  }
  return [...byKey.values()].sort(order);
}

const part = (upTo: string | null, unit: string, flat: string | null, quantity: string, amount: string): TierPart => ({
  upTo: upTo === null ? null : new Big(upTo),
  unit: new Big(unit),
  flat: flat === null ? null : new Big(flat),
  quantity: new Big(quantity),
  amount: new Big(amount),
});

/** A small deterministic generator (no flaky seeds). */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
}

describe("mergeTiers: a line's tier sums, an event's parts at a time", () => {
  const cases: { name: string; parts: TierPart[][] }[] = [
    { name: "the first parts of a line", parts: [[part("10", "1", null, "3", "3")]] },
    {
      name: "a part on either side of a tier bound, the last tier last",
      parts: [
        [part(null, "0.5", null, "1", "0.5"), part("10", "1", null, "10", "10")],
        [part("10", "1", null, "0", "0"), part(null, "0.5", null, "2", "1")],
      ],
    },
    {
      name: "a flat amount of 0 beside none: two entries, in the order they came",
      parts: [[part("10", "1", "0", "1", "1")], [part("10", "1", null, "1", "1")], [part("10", "1", "0", "1", "1")]],
    },
    {
      name: "a rule changed mid-month: new terms beside the old, by unit amount",
      parts: [
        [part("10", "1", null, "5", "5")],
        [part("10", "0.9", null, "1", "0.9"), part("10", "1", null, "-5", "-5")],
      ],
    },
    {
      name: "a volume event that gives back what the tier before held (a negative part)",
      parts: [
        [part("10", "1", null, "10", "10")],
        [part("10", "1", null, "-10", "-10"), part("20", "0.8", null, "11", "8.8")],
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      let sums: TierSum[] | null = null;
      let expected: TierSum[] | null = null;
      for (const parts of c.parts) {
        expected = byDefinition(expected, parts);
        sums = mergeTiers(sums, parts);
        assert.deepEqual(tiersToRecord(sums!), tiersToRecord(expected));
      }
    });

  it("agrees with the definition over 600 events of random parts across 250 tiers, terms changed on the way", () => {
    const next = random(7);
    let sums: TierSum[] | null = null;
    let expected: TierSum[] | null = null;
    for (let i = 0; i < 600; i++) {
      const parts = Array.from({ length: 1 + next(3) }, () => {
        const tier = next(251);
        return part(
          tier === 250 ? null : String((tier + 1) * 10),
          next(4) === 0 ? "0.9" : "1",
          next(5) === 0 ? (next(2) === 0 ? "0" : "2.5") : null,
          String(next(7) - 1),
          `${next(900)}.${next(100)}`,
        );
      });
      expected = byDefinition(expected, parts);
      sums = mergeTiers(sums, parts);
    }
    assert.deepEqual(tiersToRecord(sums!), tiersToRecord(expected!));
  });

  it("puts sums read from elsewhere in tier order first, and never changes the sums it was given", () => {
    const stored = [part(null, "0.5", null, "1", "0.5"), part("10", "1", null, "10", "10")];
    const copy = tiersToRecord(stored);
    const merged = mergeTiers(stored, [part("10", "1", null, "1", "1")]);
    assert.deepEqual(tiersToRecord(merged!), tiersToRecord(byDefinition(stored, [part("10", "1", null, "1", "1")])));
    assert.deepEqual(tiersToRecord(stored), copy);
    const again = mergeTiers(merged, [part(null, "0.5", null, "1", "0.5")]);
    assert.equal(tiersToRecord(merged!)[1]!.quantity, "1");
    assert.equal(tiersToRecord(again!)[1]!.quantity, "2");
  });
});
