import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { diffRules, versionHistoryDiff, type RuleDiff } from "./pricing-diff.js";
import { presentRule, type PresentedRule, type PricingRule } from "./pricing-rule.js";
import { rule } from "../../../test/fixtures/pricing-rules.js";
import { toJsonDecimal } from "../kernel/money.js";

const presented = (fields: Partial<PricingRule>): PresentedRule => presentRule(rule(fields));

/** Three tiers, the first at `first` per unit. */
const tiers = (first: string) => [
  { up_to: "1000", unit_amount: first, flat_amount: null },
  { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
  { up_to: null, unit_amount: "0.05", flat_amount: null },
];

/** A diff in a compact form a table row can state: "added a", "removed b", "changed c: amount 1.00 → 2.00". */
function summary(diffs: RuleDiff[]): string[] {
  return diffs.map((d) => {
    if (d.kind === "changed")
      return `changed ${d.after.id}: ${d.changes.map((c) => `${c.field} ${c.before ?? "∅"} → ${c.after ?? "∅"}`).join(", ")}`;
    return `${d.kind} ${d.rule.id}`;
  });
}

describe("diffRules", () => {
  const cases: Array<{
    name: string;
    before: PresentedRule[];
    after: PresentedRule[];
    expected: string[];
    unchanged: number;
  }> = [
    {
      name: "lists every rule as added when there was no version before",
      before: [],
      after: [presented({ id: "a" }), presented({ id: "b" })],
      expected: ["added a", "added b"],
      unchanged: 0,
    },
    {
      name: "finds nothing when the rules are the same",
      before: [presented({ id: "a", amount: "1.00" })],
      after: [presented({ id: "a", amount: "1.00" })],
      expected: [],
      unchanged: 1,
    },
    {
      name: "lists a new rule as added and keeps the others unchanged",
      before: [presented({ id: "a" })],
      after: [presented({ id: "a" }), presented({ id: "b", metric: "wire" })],
      expected: ["added b"],
      unchanged: 1,
    },
    {
      name: "lists a rule missing from the new version as removed",
      before: [presented({ id: "a" }), presented({ id: "b" })],
      after: [presented({ id: "b" })],
      expected: ["removed a"],
      unchanged: 1,
    },
    {
      name: "names each changed field with its old and new value",
      before: [presented({ id: "a", amount: "20.00", name: "Wire" })],
      after: [presented({ id: "a", amount: "25.00", name: "Domestic wire" })],
      expected: ["changed a: name Wire → Domestic wire, amount 20.00 → 25.00"],
      unchanged: 0,
    },
    {
      name: "shows a field that was cleared or set as absent on one side",
      before: [presented({ id: "a", monthly_cap: "100.00" })],
      after: [presented({ id: "a", monthly_cap: null, counterparty: "ACME" })],
      expected: ["changed a: monthly_cap 100.00 → ∅, counterparty ∅ → ACME"],
      unchanged: 0,
    },
    {
      name: "shows a model switch as changes to model, amount and rate",
      before: [presented({ id: "a", model: "flat", amount: "1.00" })],
      after: [presented({ id: "a", model: "percentage", amount: null, rate: "0.05" })],
      expected: ["changed a: model flat → percentage, amount 1.00 → ∅, rate ∅ → 0.05"],
      unchanged: 0,
    },
    {
      name: "shows a change of tiers as their lines",
      before: [presented({ id: "a", model: "graduated", amount: null, tiers: tiers("0.10") })],
      after: [presented({ id: "a", model: "graduated", amount: null, tiers: tiers("0.09") })],
      expected: ["changed a: tiers 1000 0.10; 10000 0.08 5.00; - 0.05 → 1000 0.09; 10000 0.08 5.00; - 0.05"],
      unchanged: 0,
    },
    {
      name: "finds nothing when the tiers are the same",
      before: [presented({ id: "a", model: "volume", amount: null, tiers: tiers("0.10") })],
      after: [presented({ id: "a", model: "volume", amount: null, tiers: tiers("0.10") })],
      expected: [],
      unchanged: 1,
    },
    {
      name: "shows a change of package size",
      before: [presented({ id: "a", model: "package", amount: "10.00", package_size: "1000" })],
      after: [presented({ id: "a", model: "package", amount: "10.00", package_size: "500" })],
      expected: ["changed a: package_size 1000 → 500"],
      unchanged: 0,
    },
    {
      name: "shows fees set, changed and cleared, and a rate allowed above one",
      before: [
        presented({ id: "a", model: "percentage", amount: null, rate: "0.029", fixed_fee: "0.30", max_fee: "5.00" }),
      ],
      after: [
        presented({
          id: "a",
          model: "percentage",
          amount: null,
          rate: "1.5",
          fixed_fee: "0.25",
          min_fee: "0.50",
          allow_rate_above_one: true,
        }),
      ],
      expected: [
        "changed a: rate 0.029 → 1.5, fixed_fee 0.30 → 0.25, min_fee ∅ → 0.50, max_fee 5.00 → ∅, allow_rate_above_one ∅ → true",
      ],
      unchanged: 0,
    },
    {
      name: "matches rules by id, not by position",
      before: [presented({ id: "a" }), presented({ id: "b" })],
      after: [presented({ id: "b" }), presented({ id: "a" })],
      expected: [],
      unchanged: 2,
    },
    {
      name: "puts added and changed rules first in the new order, then removed ones",
      before: [presented({ id: "a" }), presented({ id: "b", amount: "1.00" })],
      after: [presented({ id: "c" }), presented({ id: "b", amount: "2.00" })],
      expected: ["added c", "changed b: amount 1.00 → 2.00", "removed a"],
      unchanged: 0,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { diffs, unchanged } = diffRules(c.before, c.after);
      assert.deepEqual(summary(diffs), c.expected);
      assert.equal(unchanged, c.unchanged);
    });
  }

  it("compares the same rate in two versions (exact JSON numbers, not the same object) as equal", () => {
    const before = { ...presented({ id: "a", model: "percentage" }), rate: toJsonDecimal("0.05") };
    const after = { ...presented({ id: "a", model: "percentage" }), rate: toJsonDecimal("0.05") };
    assert.deepEqual(diffRules([before], [after]).diffs, []);
  });
});

describe("versionHistoryDiff", () => {
  const v1 = {
    version: 1,
    effective_date: "2026-03-01",
    created_at: "2026-03-01T00:00:00.000Z",
    rules: [presented({ id: "a", amount: "20.00" })],
  };
  const v2 = {
    version: 2,
    effective_date: "2026-03-10",
    created_at: "2026-03-10T09:00:00.000Z",
    rules: [presented({ id: "a", amount: "25.00" })],
  };
  const v3 = {
    version: 3,
    effective_date: "2026-03-12",
    created_at: "2026-03-12T09:00:00.000Z",
    rules: [presented({ id: "a", amount: "25.00" }), presented({ id: "b" })],
  };

  it("lists versions newest first, each compared with the version before it", () => {
    const history = versionHistoryDiff([v1, v2, v3]);
    assert.deepEqual(
      history.map((h) => h.version),
      [3, 2, 1],
    );
    assert.deepEqual(summary(history[0]!.diffs), ["added b"]);
    assert.equal(history[0]!.unchanged, 1);
    assert.deepEqual(summary(history[1]!.diffs), ["changed a: amount 20.00 → 25.00"]);
    assert.deepEqual(summary(history[2]!.diffs), ["added a"]);
  });

  it("keeps each version's effective date and creation time", () => {
    const [latest] = versionHistoryDiff([v1, v2]);
    assert.equal(latest!.effective_date, "2026-03-10");
    assert.equal(latest!.created_at, "2026-03-10T09:00:00.000Z");
  });

  it("orders versions by number whatever order they come in", () => {
    assert.deepEqual(
      versionHistoryDiff([v3, v1, v2]).map((h) => [h.version, summary(h.diffs)]),
      [
        [3, ["added b"]],
        [2, ["changed a: amount 20.00 → 25.00"]],
        [1, ["added a"]],
      ],
    );
  });

  it("gives an empty history for a program without versions", () => {
    assert.deepEqual(versionHistoryDiff([]), []);
  });
});
