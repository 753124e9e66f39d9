import { minimumTermsOf, termsTotal } from "../contracts/minimum-terms.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import {
  addCharge,
  ruleTotals,
  type Charge,
  type Line,
  lineFromRecord,
  mergeTiers,
  projectLines,
  tiersFromRecord,
  tiersToRecord,
  type TierPart,
  usageDescription,
} from "./invoice-lines.js";
import { feeCharge as fee, linesOf, usageCharge as usage } from "../../../test/fixtures/invoice-charges.js";
import { rule as baseRule } from "../../../test/fixtures/pricing-rules.js";

// The stored state of a draft: exact sums only. Every figure an invoice shows (amounts, fee unit prices, the
// minimum true-up, totals, order) is derived from it by billInvoice, tested in invoice-figures.test.ts.

const rule = (fields: Partial<PricingRule>): PricingRule => baseRule({ metric: "wire", ...fields });

const wire = rule({ id: "wire", metric: "wire", amount: "20.00" });
const card = rule({ id: "card", metric: "card", model: "percentage", rate: "0.029" });

/** A line with its decimals as strings, for comparing. */
const plain = (line: Line) => ({
  key: line.key,
  kind: line.kind,
  ruleId: line.ruleId,
  metric: line.metric,
  description: line.description,
  quantity: line.quantity.toFixed(),
  rate: line.rate === null ? null : line.rate.toFixed(),
  chargeTotal: line.chargeTotal.toFixed(),
  cappedTotal: line.cappedTotal.toFixed(),
});
const plainAll = (lines: Map<string, Line>) =>
  [...lines.values()].map(plain).sort((a, b) => a.key.localeCompare(b.key));

/** A stored line of any kind, for the functions that only read lines. */
const line = (fields: Partial<Line> & Pick<Line, "key" | "kind">): Line => ({
  ruleId: null,
  metric: null,
  description: fields.key,
  quantity: new Big(1),
  rate: null,
  chargeTotal: new Big(0),
  cappedTotal: new Big(0),
  tiers: null,
  ...fields,
});

describe("addCharge", () => {
  type Expected = {
    key: string;
    kind: string;
    description: string;
    quantity: string;
    rate: string | null;
    chargeTotal: string;
    cappedTotal: string;
  };
  const cases: Array<{ name: string; charges: Charge[]; lines: Expected[] }> = [
    {
      name: "starts a usage line from the first charge, at the charge's rate",
      charges: [usage(wire, "3", "20", "60")],
      lines: [
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "3",
          rate: "20",
          chargeTotal: "60",
          cappedTotal: "60",
        },
      ],
    },
    {
      name: "aggregates charges of the same rule and unit price into one line",
      charges: [usage(wire, "1", "20", "20"), usage(wire, "2", "20", "40"), usage(wire, "4", "20", "80")],
      lines: [
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "7",
          rate: "20",
          chargeTotal: "140",
          cappedTotal: "140",
        },
      ],
    },
    {
      name: "treats 20.00 and 20 as the same unit price",
      charges: [usage(wire, "1", "20.00", "20"), usage(wire, "1", "20", "20")],
      lines: [
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "2",
          rate: "20",
          chargeTotal: "40",
          cappedTotal: "40",
        },
      ],
    },
    {
      name: "puts charges of the same rule at another unit price on another line",
      charges: [usage(wire, "1", "20", "20"), usage(wire, "2", "7.5", "15")],
      lines: [
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "1",
          rate: "20",
          chargeTotal: "20",
          cappedTotal: "20",
        },
        {
          key: "usage|wire|7.5",
          kind: "usage",
          description: "wire usage",
          quantity: "2",
          rate: "7.5",
          chargeTotal: "15",
          cappedTotal: "15",
        },
      ],
    },
    {
      name: "puts charges of another rule at the same price on another line",
      charges: [
        usage(wire, "1", "20", "20"),
        usage(rule({ id: "wire-acme", metric: "wire", counterparty: "acme" }), "1", "20", "20"),
      ],
      lines: [
        {
          key: "usage|wire-acme|20",
          kind: "usage",
          description: "wire usage (acme)",
          quantity: "1",
          rate: "20",
          chargeTotal: "20",
          cappedTotal: "20",
        },
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "1",
          rate: "20",
          chargeTotal: "20",
          cappedTotal: "20",
        },
      ],
    },
    {
      name: "loses no cent: three charges of half a cent sum to exactly 0.015, not to three rounded cents",
      charges: [
        usage(card, "1", "0.005", "0.005"),
        usage(card, "1", "0.005", "0.005"),
        usage(card, "1", "0.005", "0.005"),
      ],
      lines: [
        {
          key: "usage|card|0.005",
          kind: "usage",
          description: "card usage",
          quantity: "3",
          rate: "0.005",
          chargeTotal: "0.015",
          cappedTotal: "0.015",
        },
      ],
    },
    {
      name: "keeps a half-cent total as is: rounding is left to the invoice's figures",
      charges: [usage(card, "100", "0.029", "0.125")],
      lines: [
        {
          key: "usage|card|0.029",
          kind: "usage",
          description: "card usage",
          quantity: "100",
          rate: "0.029",
          chargeTotal: "0.125",
          cappedTotal: "0.125",
        },
      ],
    },
    {
      name: "keeps twelve-digit charges exact in the total",
      charges: [usage(card, "1", "0.029", "0.123456789012"), usage(card, "1", "0.029", "0.000000000001")],
      lines: [
        {
          key: "usage|card|0.029",
          kind: "usage",
          description: "card usage",
          quantity: "2",
          rate: "0.029",
          chargeTotal: "0.123456789013",
          cappedTotal: "0.123456789013",
        },
      ],
    },
    {
      name: "adds up the capped charges as the cap runs out: the cap total is what counts against the cap",
      charges: [usage(wire, "1", "10", "10", "10"), usage(wire, "1", "10", "5", "5"), usage(wire, "1", "10", "0", "0")],
      lines: [
        {
          key: "usage|wire|10",
          kind: "usage",
          description: "wire usage",
          quantity: "3",
          rate: "10",
          chargeTotal: "15",
          cappedTotal: "15",
        },
      ],
    },
    {
      name: "makes one fee line per metric, with no rate and nothing capped",
      charges: [fee(wire, "1", "10"), fee(wire, "2", "5")],
      lines: [
        {
          key: "fee|wire",
          kind: "fee",
          description: "wire fees",
          quantity: "3",
          rate: null,
          chargeTotal: "15",
          cappedTotal: "0",
        },
      ],
    },
    {
      name: "puts fees of different rules of one metric on the same fee line",
      charges: [fee(wire, "1", "10"), fee(rule({ id: "wire-acme", metric: "wire", counterparty: "acme" }), "1", "20")],
      lines: [
        {
          key: "fee|wire",
          kind: "fee",
          description: "wire fees",
          quantity: "2",
          rate: null,
          chargeTotal: "30",
          cappedTotal: "0",
        },
      ],
    },
    {
      name: "keeps the exact sum of sub-cent fees",
      charges: [fee(wire, "10000", "12.345"), fee(wire, "1", "0.000000000001")],
      lines: [
        {
          key: "fee|wire",
          kind: "fee",
          description: "wire fees",
          quantity: "10001",
          rate: null,
          chargeTotal: "12.345000000001",
          cappedTotal: "0",
        },
      ],
    },
    {
      name: "keeps a fee of zero quantity",
      charges: [fee(wire, "0", "12.34")],
      lines: [
        {
          key: "fee|wire",
          kind: "fee",
          description: "wire fees",
          quantity: "0",
          rate: null,
          chargeTotal: "12.34",
          cappedTotal: "0",
        },
      ],
    },
    {
      name: "keeps usage and fees of one metric on separate lines",
      charges: [usage(wire, "1", "20", "20"), fee(wire, "1", "3")],
      lines: [
        {
          key: "fee|wire",
          kind: "fee",
          description: "wire fees",
          quantity: "1",
          rate: null,
          chargeTotal: "3",
          cappedTotal: "0",
        },
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "1",
          rate: "20",
          chargeTotal: "20",
          cappedTotal: "20",
        },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = plainAll(linesOf(c.charges)).map(({ ruleId: _r, metric: _m, ...rest }) => rest);
      assert.deepEqual(got, c.lines);
    });
  }

  it("does not change the line it adds to", () => {
    const first = addCharge(undefined, usage(wire, "1", "20", "20"));
    const before = plain(first);
    const second = addCharge(first, usage(wire, "1", "20", "20"));
    assert.deepEqual(plain(first), before);
    assert.equal(second.chargeTotal.toFixed(), "40");
  });

  it("records the rule, metric and kind on the line", () => {
    const usageLine = addCharge(undefined, usage(card, "1", "0.029", "0.029"));
    const feeLine = addCharge(undefined, fee(card, "1", "1"));
    assert.deepEqual([usageLine.kind, usageLine.ruleId, usageLine.metric], ["usage", "card", "card"]);
    assert.deepEqual([feeLine.kind, feeLine.ruleId, feeLine.metric], ["fee", "card", "card"]);
  });

  it("gives a fee line no rate even when its charge carries one", () => {
    const feeLine = addCharge(undefined, { ...fee(wire, "2", "3"), unitPrice: new Big("1.5") });
    assert.equal(feeLine.rate, null);
    assert.equal(feeLine.key, "fee|wire");
  });
});

describe("usageDescription", () => {
  const cases: Array<{ name: string; rule: PricingRule; description: string }> = [
    { name: "names an unscoped rule's line after its metric", rule: rule({}), description: "wire usage" },
    {
      name: "adds the counterparty of a scoped rule",
      rule: rule({ counterparty: "acme" }),
      description: "wire usage (acme)",
    },
    {
      name: "adds every scope field in order",
      rule: rule({ counterparty: "acme", counterparty_side: "maker", pair: "BTC/USD" }),
      description: "wire usage (acme, maker, BTC/USD)",
    },
    { name: "adds a pair alone", rule: rule({ pair: "BTC/USD" }), description: "wire usage (BTC/USD)" },
    { name: "names a named rule's line after the rule", rule: rule({ name: "ACH debits" }), description: "ACH debits" },
    {
      name: "names a named scoped rule's line after the rule alone (its name names its scope)",
      rule: rule({ name: "Wires to Acme", counterparty: "acme" }),
      description: "Wires to Acme",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(usageDescription(c.rule, "wire"), c.description);
    });
  }
});

describe("ruleTotals", () => {
  it("adds up the capped totals of each rule across its unit prices", () => {
    const lines = linesOf([
      usage(wire, "1", "20", "20", "20"),
      usage(wire, "1", "7.5", "7.5", "7.5"),
      usage(card, "1", "0.029", "1", "0.5"),
    ]);
    const used = ruleTotals(lines.values());
    assert.deepEqual(
      [...used].map(([id, total]) => [id, total.capped.toFixed(), total.quantity.toFixed()]),
      [
        ["wire", "27.5", "0"],
        ["card", "0.5", "0"],
      ],
    );
  });

  it("does not count fees against a cap", () => {
    const used = ruleTotals(linesOf([fee(wire, "1", "100")]).values());
    assert.equal(used.size, 0);
  });

  it("ignores subscription and one-time lines", () => {
    const used = ruleTotals([
      line({
        key: "subscription|s",
        kind: "subscription",
        ruleId: "s",
        chargeTotal: new Big(10),
        cappedTotal: new Big(10),
      }),
      line({ key: "one_time|o", kind: "one_time", ruleId: "o", chargeTotal: new Big(10), cappedTotal: new Big(10) }),
    ]);
    assert.equal(used.size, 0);
  });
});

describe("minimumTermsOf", () => {
  const cases: Array<{ name: string; rules: PricingRule[]; minimum: string | null }> = [
    {
      name: "has no minimum without minimum rules",
      rules: [wire, rule({ id: "s", type: "subscription", metric: null, amount: "50.00" })],
      minimum: null,
    },
    {
      name: "takes the amount of the one minimum rule",
      rules: [wire, rule({ id: "min", type: "minimum", metric: null, amount: "1000.00" })],
      minimum: "1000",
    },
    {
      name: "adds up several minimum rules",
      rules: [
        rule({ id: "a", type: "minimum", metric: null, amount: "1000.00" }),
        rule({ id: "b", type: "minimum", metric: null, amount: "250.50" }),
      ],
      minimum: "1250.5",
    },
    {
      name: "has a zero minimum from a minimum rule of 0",
      rules: [rule({ id: "z", type: "minimum", metric: null, amount: "0.00" })],
      minimum: "0",
    },
    {
      name: "keeps a minimum finer than the minor unit exact",
      rules: [rule({ id: "odd", type: "minimum", metric: null, amount: "1000.005" })],
      minimum: "1000.005",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const minimum = termsTotal(minimumTermsOf(c.rules));
      assert.equal(minimum === null ? null : minimum.toFixed(), c.minimum);
    });
  }
});

describe("projectLines", () => {
  const subscription = rule({
    id: "sub",
    name: "Platform fee",
    type: "subscription",
    metric: null,
    amount: "99.50",
    frequency: "monthly",
  });
  const support = rule({
    id: "support",
    name: "Support",
    type: "subscription",
    metric: null,
    amount: "10.00",
    frequency: "monthly",
  });
  const setup = rule({ id: "setup", name: "Setup fee", type: "one_time", metric: null, amount: "250.00" });
  const minimum = rule({
    id: "min",
    name: "Monthly minimum",
    type: "minimum",
    metric: null,
    amount: "1000.00",
    frequency: "monthly",
  });

  type Expected = {
    key: string;
    kind: string;
    description: string;
    quantity: string;
    rate: string | null;
    chargeTotal: string;
  };
  const cases: Array<{
    name: string;
    existing: Line[];
    rules: PricingRule[];
    billedElsewhere?: string[];
    lines: Expected[];
    minimum: string | null;
  }> = [
    {
      name: "adds one line per subscription rule: quantity 1, no rate, the rule's monthly amount",
      existing: [],
      rules: [wire, subscription, support],
      lines: [
        {
          key: "subscription|sub",
          kind: "subscription",
          description: "Platform fee",
          quantity: "1",
          rate: null,
          chargeTotal: "99.5",
        },
        {
          key: "subscription|support",
          kind: "subscription",
          description: "Support",
          quantity: "1",
          rate: null,
          chargeTotal: "10",
        },
      ],
      minimum: null,
    },
    {
      name: "adds a one-time rule that is not billed elsewhere",
      existing: [],
      rules: [setup],
      lines: [
        {
          key: "one_time|setup",
          kind: "one_time",
          description: "Setup fee",
          quantity: "1",
          rate: null,
          chargeTotal: "250",
        },
      ],
      minimum: null,
    },
    {
      name: "skips a one-time rule billed on another invoice",
      existing: [],
      rules: [setup, subscription],
      billedElsewhere: ["setup"],
      lines: [
        {
          key: "subscription|sub",
          kind: "subscription",
          description: "Platform fee",
          quantity: "1",
          rate: null,
          chargeTotal: "99.5",
        },
      ],
      minimum: null,
    },
    {
      name: "keeps the usage and fee lines already rated onto the draft",
      existing: [...linesOf([usage(wire, "3", "20", "60"), fee(card, "1", "5")]).values()],
      rules: [wire, card],
      lines: [
        { key: "fee|card", kind: "fee", description: "card fees", quantity: "1", rate: null, chargeTotal: "5" },
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "3",
          rate: "20",
          chargeTotal: "60",
        },
      ],
      minimum: null,
    },
    {
      name: "stores the program's minimum beside the lines, with no true-up line among them",
      existing: [...linesOf([usage(wire, "3", "20", "60")]).values()],
      rules: [wire, subscription, setup, minimum],
      lines: [
        {
          key: "one_time|setup",
          kind: "one_time",
          description: "Setup fee",
          quantity: "1",
          rate: null,
          chargeTotal: "250",
        },
        {
          key: "subscription|sub",
          kind: "subscription",
          description: "Platform fee",
          quantity: "1",
          rate: null,
          chargeTotal: "99.5",
        },
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "3",
          rate: "20",
          chargeTotal: "60",
        },
      ],
      minimum: "1000",
    },
    {
      name: "keeps the minimum when usage already exceeds it",
      existing: [...linesOf([usage(wire, "60", "20", "1200")]).values()],
      rules: [wire, minimum],
      lines: [
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "60",
          rate: "20",
          chargeTotal: "1200",
        },
      ],
      minimum: "1000",
    },
    {
      name: "drops the subscription line of a rule no longer in the program",
      existing: [line({ key: "subscription|old", kind: "subscription", ruleId: "old", chargeTotal: new Big(42) })],
      rules: [subscription],
      lines: [
        {
          key: "subscription|sub",
          kind: "subscription",
          description: "Platform fee",
          quantity: "1",
          rate: null,
          chargeTotal: "99.5",
        },
      ],
      minimum: null,
    },
    {
      name: "brings a subscription line to the rule's current amount and name",
      existing: [
        line({
          key: "subscription|sub",
          kind: "subscription",
          ruleId: "sub",
          description: "Old name",
          chargeTotal: new Big(42),
        }),
      ],
      rules: [subscription],
      lines: [
        {
          key: "subscription|sub",
          kind: "subscription",
          description: "Platform fee",
          quantity: "1",
          rate: null,
          chargeTotal: "99.5",
        },
      ],
      minimum: null,
    },
    {
      name: "drops a one-time line once its rule is billed elsewhere",
      existing: [line({ key: "one_time|setup", kind: "one_time", ruleId: "setup", chargeTotal: new Big(250) })],
      rules: [setup],
      billedElsewhere: ["setup"],
      lines: [],
      minimum: null,
    },
    {
      name: "has no minimum once the program's minimum rule is gone",
      existing: [...linesOf([usage(wire, "10", "20", "200")]).values()],
      rules: [wire],
      lines: [
        {
          key: "usage|wire|20",
          kind: "usage",
          description: "wire usage",
          quantity: "10",
          rate: "20",
          chargeTotal: "200",
        },
      ],
      minimum: null,
    },
    {
      name: "keeps a subscription amount finer than the minor unit exact (it is rounded when billed)",
      existing: [],
      rules: [
        rule({ id: "odd", name: "Odd", type: "subscription", metric: null, amount: "9.125", frequency: "monthly" }),
      ],
      lines: [
        {
          key: "subscription|odd",
          kind: "subscription",
          description: "Odd",
          quantity: "1",
          rate: null,
          chargeTotal: "9.125",
        },
      ],
      minimum: null,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const projected = projectLines(c.existing, c.rules, new Set(c.billedElsewhere ?? []));
      assert.deepEqual(
        plainAll(projected.lines).map((l) => ({
          key: l.key,
          kind: l.kind,
          description: l.description,
          quantity: l.quantity,
          rate: l.rate,
          chargeTotal: l.chargeTotal,
        })),
        c.lines,
      );
      assert.equal(termsTotal(projected.minimum)?.toFixed() ?? null, c.minimum);
    });
  }

  it("is idempotent: projecting its own output again gives the same lines and minimum", () => {
    const rules = [wire, card, subscription, setup, minimum];
    const existing = [
      ...linesOf([usage(wire, "3", "20", "60"), usage(card, "3", "0.005", "0.015"), fee(card, "2", "7")]).values(),
    ];
    const first = projectLines(existing, rules, new Set());
    const second = projectLines([...first.lines.values()], rules, new Set());
    const third = projectLines([...second.lines.values()], rules, new Set());
    assert.equal(first.lines.size, 5);
    assert.deepEqual(plainAll(second.lines), plainAll(first.lines));
    assert.deepEqual(plainAll(third.lines), plainAll(first.lines));
    assert.equal(termsTotal(second.minimum)?.toFixed(), termsTotal(first.minimum)?.toFixed());
    assert.equal(termsTotal(third.minimum)?.toFixed(), "1000");
  });

  it("does not change the lines it is given", () => {
    const existing = [
      ...linesOf([usage(wire, "3", "20", "60")]).values(),
      line({
        key: "subscription|sub",
        kind: "subscription",
        ruleId: "sub",
        description: "Old name",
        chargeTotal: new Big(42),
      }),
    ];
    const before = existing.map(plain);
    const projected = projectLines(existing, [wire, subscription, minimum], new Set());
    assert.equal(projected.lines.get("subscription|sub")?.chargeTotal.toFixed(), "99.5");
    assert.deepEqual(existing.map(plain), before);
  });
});

describe("lineFromRecord", () => {
  it("reads a stored usage line's decimals exactly, rate included", () => {
    const read = lineFromRecord({
      key: "usage|card|0.029",
      kind: "usage",
      rule_id: "card",
      metric: "card",
      description: "card usage",
      quantity: "1000.000000000001",
      rate: "0.029000",
      charge_total: "29.000000000000029",
      capped_total: "12.500000000000",
    });
    assert.deepEqual(plain(read), {
      key: "usage|card|0.029",
      kind: "usage",
      ruleId: "card",
      metric: "card",
      description: "card usage",
      quantity: "1000.000000000001",
      rate: "0.029",
      chargeTotal: "29.000000000000029",
      cappedTotal: "12.5",
    });
  });

  it("reads a stored fee or flat line with no rate as null", () => {
    const read = lineFromRecord({
      key: "subscription|sub",
      kind: "subscription",
      rule_id: "sub",
      metric: null,
      description: "Platform fee",
      quantity: "1",
      rate: null,
      charge_total: "99.50",
      capped_total: "0",
    });
    assert.equal(read.rate, null);
    assert.deepEqual(
      [read.kind, read.ruleId, read.metric, read.chargeTotal.toFixed()],
      ["subscription", "sub", null, "99.5"],
    );
  });
});

describe("tier sums: a charge's tier parts merged into its line", () => {
  const part = (
    upTo: string | null,
    unit: string,
    flat: string | null,
    quantity: string,
    amount: string,
  ): TierPart => ({
    upTo: upTo === null ? null : new Big(upTo),
    unit: new Big(unit),
    flat: flat === null ? null : new Big(flat),
    quantity: new Big(quantity),
    amount: new Big(amount),
  });
  const rows = (tiers: readonly TierPart[] | null) => (tiers === null ? null : tiersToRecord(tiers));
  const graduated = rule({ id: "g", name: "G", metric: "api", model: "graduated", amount: null });
  const charge = (quantity: string, amount: string, tiers?: TierPart[]): Charge => ({
    kind: "usage",
    rule: graduated,
    metric: "api",
    quantity: new Big(quantity),
    unitPrice: null,
    charge: new Big(amount),
    cappedCharge: new Big(amount),
    ...(tiers ? { tiers } : {}),
  });

  it("sums the parts of the same tier's terms and keeps the tiers in tier order, the last tier last", () => {
    let line = addCharge(undefined, charge("600", "60", [part("1000", "0.10", null, "600", "60")]));
    line = addCharge(
      line,
      charge("10000", "735.000000000001", [
        part(null, "0.05", null, "9600", "480.000000000001"),
        part("1000", "0.1", null, "400", "40"),
        part("10000", "0.08", "5", "0", "5"),
      ]),
    );
    assert.equal(line.key, "usage|g");
    assert.deepEqual(rows(line.tiers), [
      { up_to: "1000", unit_amount: "0.1", flat_amount: null, quantity: "1000", amount: "100" },
      { up_to: "10000", unit_amount: "0.08", flat_amount: "5", quantity: "0", amount: "5" },
      { up_to: null, unit_amount: "0.05", flat_amount: null, quantity: "9600", amount: "480.000000000001" },
    ]);
    assert.equal(line.chargeTotal.toFixed(), "795.000000000001");
  });

  it("a rule changed mid-month adds entries with its new terms beside the old ones", () => {
    const merged = mergeTiers(
      [part("1000", "0.1", null, "500", "50")],
      [part("1000", "0.09", null, "100", "9"), part("1000", "0.1", null, "-500", "-50")],
    );
    assert.deepEqual(rows(merged), [
      { up_to: "1000", unit_amount: "0.09", flat_amount: null, quantity: "100", amount: "9" },
      { up_to: "1000", unit_amount: "0.1", flat_amount: null, quantity: "0", amount: "0" },
    ]);
  });

  it("a line without tier parts has none (null); a charge without parts leaves a line's tiers as they are", () => {
    assert.equal(addCharge(undefined, charge("3", "3")).tiers, null);
    const line = addCharge(undefined, charge("3", "3", [part(null, "1", null, "3", "3")]));
    assert.deepEqual(rows(addCharge(line, charge("0", "0")).tiers), rows(line.tiers));
  });

  it("a line stored without tiers (before lines kept them) does not gain tiers that would miss its earlier charges", () => {
    const old = line({ key: "usage|g", kind: "usage", ruleId: "g", metric: "api", quantity: new Big(5) });
    assert.equal(addCharge(old, charge("3", "3", [part(null, "1", null, "3", "3")])).tiers, null);
  });

  it("reads and writes tier sums exactly, decimals as text", () => {
    const stored = [
      {
        up_to: "1000",
        unit_amount: "0.100",
        flat_amount: null,
        quantity: "1000.000000000001",
        amount: "100.0000000000001",
      },
    ];
    const read = lineFromRecord({
      key: "usage|g",
      kind: "usage",
      rule_id: "g",
      metric: "api",
      description: "api usage",
      quantity: "1000.000000000001",
      rate: null,
      charge_total: "100.0000000000001",
      capped_total: "100.0000000000001",
      tiers: stored,
    });
    assert.deepEqual(tiersToRecord(read.tiers!), [{ ...stored[0], unit_amount: "0.1" }]);
    assert.deepEqual(rows(tiersFromRecord(tiersToRecord(read.tiers!))), rows(read.tiers));
  });
});
