import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ProgramSegment } from "../contracts/program-timeline.js";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import { billInvoice } from "./invoice-figures.js";
import { prepaidLine, projectLines, type Line } from "./invoice-lines.js";
import { billProjected, projectedParts, rulesForPeriod } from "./projected-bill.js";
import { linesOf, usageCharge as usage } from "../../../test/fixtures/invoice-charges.js";
import { rule as baseRule } from "../../../test/fixtures/pricing-rules.js";

// A draft's month as projection would bill it, without storing anything: the table of what the `projected`
// block of a draft says.

const rule = (fields: Partial<PricingRule>): PricingRule => baseRule({ metric: "wire", ...fields });
const wire = rule({ id: "wire", metric: "wire", amount: "20.00" });
const platform = rule({ id: "sub", name: "Platform fee", type: "subscription", metric: null, amount: "500.00" });
const setup = rule({ id: "setup", name: "Setup fee", type: "one_time", metric: null, amount: "250.00" });
const minimum = rule({ id: "min", name: "Monthly minimum", type: "minimum", metric: null, amount: "1000.00" });

const usageLines = (quantity: string): Line[] => [
  ...linesOf([usage(wire, quantity, "20", new Big(quantity).times(20).toFixed())]).values(),
];

interface Case {
  name: string;
  stored: Line[];
  rules: PricingRule[];
  billedElsewhere?: string[];
  subscriptions: string;
  oneTimeFees: string;
  minimumTopUp: string;
  total: string;
  lines: string[];
}

const cases: Case[] = [
  {
    name: "usage only, a subscription and a minimum: the subscription, then the top-up to the minimum",
    stored: usageLines("3.5"),
    rules: [wire, platform, minimum],
    subscriptions: "500",
    oneTimeFees: "0",
    minimumTopUp: "430",
    total: "1000",
    lines: ["subscription Platform fee 500", "minimum Monthly minimum: $1,000.00 committed, $570.00 counted 430"],
  },
  {
    name: "usage past the minimum: no top-up",
    stored: usageLines("40"),
    rules: [wire, platform, minimum],
    subscriptions: "500",
    oneTimeFees: "0",
    minimumTopUp: "0",
    total: "1300",
    lines: ["subscription Platform fee 500"],
  },
  {
    name: "a one-time fee not billed yet is billed, but does not count toward the minimum",
    stored: [],
    rules: [platform, setup, minimum],
    subscriptions: "500",
    oneTimeFees: "250",
    minimumTopUp: "500",
    total: "1250",
    lines: [
      "subscription Platform fee 500",
      "one_time Setup fee 250",
      "minimum Monthly minimum: $1,000.00 committed, $500.00 counted 500",
    ],
  },
  {
    name: "a one-time fee billed on another invoice is not billed again",
    stored: [],
    rules: [platform, setup],
    billedElsewhere: ["setup"],
    subscriptions: "500",
    oneTimeFees: "0",
    minimumTopUp: "0",
    total: "500",
    lines: ["subscription Platform fee 500"],
  },
  {
    name: "a prepaid purchase stays on the draft and is no one-time fee of a rule",
    stored: [prepaidLine("g1", "Prepaid credits", new Big("300"))],
    rules: [platform],
    subscriptions: "500",
    oneTimeFees: "0",
    minimumTopUp: "0",
    total: "800",
    lines: ["subscription Platform fee 500"],
  },
  {
    name: "nothing to project: the draft as it is",
    stored: usageLines("2"),
    rules: [wire],
    subscriptions: "0",
    oneTimeFees: "0",
    minimumTopUp: "0",
    total: "40",
    lines: [],
  },
];

describe("billProjected and projectedParts", () => {
  for (const c of cases) {
    it(c.name, () => {
      const billed = billProjected(c.stored, c.rules, new Set(c.billedElsewhere ?? []), "USD");
      const parts = projectedParts(billed);
      assert.deepEqual(
        {
          subscriptions: parts.subscriptions.toFixed(),
          oneTimeFees: parts.oneTimeFees.toFixed(),
          minimumTopUp: parts.minimumTopUp.toFixed(),
          total: billed.total.toFixed(),
          lines: parts.lines.map((l) => `${l.kind} ${l.description} ${l.amount.toFixed()}`),
        },
        {
          subscriptions: c.subscriptions,
          oneTimeFees: c.oneTimeFees,
          minimumTopUp: c.minimumTopUp,
          total: c.total,
          lines: c.lines,
        },
      );
    });
  }

  it("is exactly what projection stores and the invoice calculations bill", () => {
    for (const c of cases) {
      const billedElsewhere = new Set(c.billedElsewhere ?? []);
      const stored = projectLines(c.stored, c.rules, billedElsewhere);
      assert.deepEqual(
        billProjected(c.stored, c.rules, billedElsewhere, "USD"),
        billInvoice(stored.lines.values(), stored.minimum, "USD"),
        c.name,
      );
    }
  });
});

describe("rulesForPeriod", () => {
  const segment = (from: string, rules: PricingRule[]): ProgramSegment => ({
    from,
    version: 1,
    effective_date: from,
    rules,
  });
  it("bills by the version in force on the month's last day", () => {
    const programs = [segment("2026-01-01", [wire]), segment("2026-12-15", [wire, platform])];
    assert.deepEqual(rulesForPeriod(programs, "2026-11-30"), [wire]);
    assert.deepEqual(rulesForPeriod(programs, "2026-12-31"), [wire, platform]);
  });
  it("a contract without a program: no rules", () => {
    assert.deepEqual(rulesForPeriod(null, "2026-12-31"), []);
  });
});
