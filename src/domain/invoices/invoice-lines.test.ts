import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import {
  addCharge,
  applyMinimum,
  capUsedByRule,
  feeLineKey,
  type Charge,
  type Line,
  MINIMUM_LINE_KEY,
  minimumOf,
  projectLines,
  sortLines,
  totalsOf,
  usageDescription,
  usageLineKey,
} from "./invoice-lines.js";
import { rule as baseRule } from "../../../test/fixtures/pricing-rules.js";

const rule = (fields: Partial<PricingRule>): PricingRule => baseRule({ metric: "wire", ...fields });

const wire = rule({ id: "wire", name: "Wire", metric: "wire", amount: "20.00" });
const card = rule({ id: "card", name: "Card", metric: "card", model: "percentage", rate: "0.029" });

/** A usage charge at `unitPrice`; the capped part defaults to the whole charge. */
const usage = (r: PricingRule, quantity: string, unitPrice: string, charge: string, cappedCharge = charge): Charge => ({
  kind: "usage",
  rule: r,
  metric: r.metric!,
  quantity: new Big(quantity),
  unitPrice: new Big(unitPrice),
  charge: new Big(charge),
  cappedCharge: new Big(cappedCharge),
});

/** A pre-calculated fee: billed as is, never capped. */
const fee = (r: PricingRule, quantity: string, amount: string): Charge => ({
  kind: "fee",
  rule: r,
  metric: r.metric!,
  quantity: new Big(quantity),
  unitPrice: null,
  charge: new Big(amount),
  cappedCharge: new Big(0),
});

/** The lines the charges make, added one by one as rating does. */
function linesOf(charges: Charge[], currency = "USD"): Map<string, Line> {
  const lines = new Map<string, Line>();
  for (const charge of charges) {
    const key = charge.kind === "fee" ? feeLineKey(charge.metric) : usageLineKey(charge.rule.id, charge.unitPrice!);
    lines.set(key, addCharge(lines.get(key), charge, currency));
  }
  return lines;
}

/** A line with its decimals as strings, for comparing. */
const plain = (line: Line) => ({
  key: line.key,
  kind: line.kind,
  ruleId: line.ruleId,
  metric: line.metric,
  description: line.description,
  quantity: line.quantity.toFixed(),
  unitPrice: line.unitPrice.toFixed(),
  chargeTotal: line.chargeTotal.toFixed(),
  cappedTotal: line.cappedTotal.toFixed(),
  amount: line.amount.toFixed(),
});
const plainAll = (lines: Map<string, Line>) => [...lines.values()].map(plain).sort((a, b) => a.key.localeCompare(b.key));

/** A ready-made line of any kind, for the functions that only read lines. */
const line = (fields: Partial<Line> & Pick<Line, "key" | "kind">): Line => ({
  ruleId: null,
  metric: null,
  description: fields.key,
  quantity: new Big(1),
  unitPrice: new Big(fields.amount ?? 0),
  chargeTotal: new Big(fields.amount ?? 0),
  cappedTotal: new Big(0),
  amount: new Big(0),
  ...fields,
});

describe("addCharge", () => {
  const cases: Array<{
    name: string;
    charges: Charge[];
    currency?: string;
    lines: Array<{ key: string; description: string; quantity: string; unitPrice: string; chargeTotal: string; cappedTotal: string; amount: string }>;
  }> = [
    {
      name: "starts a usage line from the first charge",
      charges: [usage(wire, "3", "20", "60")],
      lines: [{ key: "usage|wire|20", description: "wire usage", quantity: "3", unitPrice: "20", chargeTotal: "60", cappedTotal: "60", amount: "60" }],
    },
    {
      name: "aggregates charges of the same rule and unit price into one line",
      charges: [usage(wire, "1", "20", "20"), usage(wire, "2", "20", "40"), usage(wire, "4", "20", "80")],
      lines: [{ key: "usage|wire|20", description: "wire usage", quantity: "7", unitPrice: "20", chargeTotal: "140", cappedTotal: "140", amount: "140" }],
    },
    {
      name: "treats 20.00 and 20 as the same unit price",
      charges: [usage(wire, "1", "20.00", "20"), usage(wire, "1", "20", "20")],
      lines: [{ key: "usage|wire|20", description: "wire usage", quantity: "2", unitPrice: "20", chargeTotal: "40", cappedTotal: "40", amount: "40" }],
    },
    {
      name: "puts charges of the same rule at another unit price on another line",
      charges: [usage(wire, "1", "20", "20"), usage(wire, "2", "7.5", "15")],
      lines: [
        { key: "usage|wire|20", description: "wire usage", quantity: "1", unitPrice: "20", chargeTotal: "20", cappedTotal: "20", amount: "20" },
        { key: "usage|wire|7.5", description: "wire usage", quantity: "2", unitPrice: "7.5", chargeTotal: "15", cappedTotal: "15", amount: "15" },
      ],
    },
    {
      name: "puts charges of another rule at the same price on another line",
      charges: [usage(wire, "1", "20", "20"), usage(rule({ id: "wire-acme", metric: "wire", counterparty: "acme" }), "1", "20", "20")],
      lines: [
        { key: "usage|wire-acme|20", description: "wire usage (acme)", quantity: "1", unitPrice: "20", chargeTotal: "20", cappedTotal: "20", amount: "20" },
        { key: "usage|wire|20", description: "wire usage", quantity: "1", unitPrice: "20", chargeTotal: "20", cappedTotal: "20", amount: "20" },
      ],
    },
    {
      name: "loses no cent: three charges of half a cent make 0.015, billed as 0.02",
      charges: [usage(card, "1", "0.005", "0.005"), usage(card, "1", "0.005", "0.005"), usage(card, "1", "0.005", "0.005")],
      lines: [{ key: "usage|card|0.005", description: "card usage", quantity: "3", unitPrice: "0.005", chargeTotal: "0.015", cappedTotal: "0.015", amount: "0.02" }],
    },
    {
      name: "rounds the line amount half-even down while the charge total keeps every digit",
      charges: [usage(card, "100", "0.029", "0.125")],
      lines: [{ key: "usage|card|0.029", description: "card usage", quantity: "100", unitPrice: "0.029", chargeTotal: "0.125", cappedTotal: "0.125", amount: "0.12" }],
    },
    {
      name: "rounds the line amount half-even up when the cent below is odd",
      charges: [usage(card, "100", "0.029", "0.135")],
      lines: [{ key: "usage|card|0.029", description: "card usage", quantity: "100", unitPrice: "0.029", chargeTotal: "0.135", cappedTotal: "0.135", amount: "0.14" }],
    },
    {
      name: "keeps twelve-digit charges exact in the total",
      charges: [usage(card, "1", "0.029", "0.123456789012"), usage(card, "1", "0.029", "0.000000000001")],
      lines: [{ key: "usage|card|0.029", description: "card usage", quantity: "2", unitPrice: "0.029", chargeTotal: "0.123456789013", cappedTotal: "0.123456789013", amount: "0.12" }],
    },
    {
      name: "rounds yen lines to whole yen, half to even",
      currency: "JPY",
      charges: [usage(wire, "1", "2.5", "2.5")],
      lines: [{ key: "usage|wire|2.5", description: "wire usage", quantity: "1", unitPrice: "2.5", chargeTotal: "2.5", cappedTotal: "2.5", amount: "2" }],
    },
    {
      name: "rounds dinar lines to three digits",
      currency: "KWD",
      charges: [usage(card, "1", "0.029", "1.0015")],
      lines: [{ key: "usage|card|0.029", description: "card usage", quantity: "1", unitPrice: "0.029", chargeTotal: "1.0015", cappedTotal: "1.0015", amount: "1.002" }],
    },
    {
      name: "adds up only the capped part of the charges as the cap total",
      charges: [usage(wire, "1", "10", "10", "10"), usage(wire, "1", "10", "5", "5"), usage(wire, "1", "10", "0", "0")],
      lines: [{ key: "usage|wire|10", description: "wire usage", quantity: "3", unitPrice: "10", chargeTotal: "15", cappedTotal: "15", amount: "15" }],
    },
    {
      name: "makes one fee line per metric whose unit price is amount over quantity",
      charges: [fee(wire, "1", "10"), fee(wire, "2", "5")],
      lines: [{ key: "fee|wire", description: "wire fees", quantity: "3", unitPrice: "5", chargeTotal: "15", cappedTotal: "0", amount: "15" }],
    },
    {
      name: "puts fees of different rules of one metric on the same fee line",
      charges: [fee(wire, "1", "10"), fee(rule({ id: "wire-acme", metric: "wire", counterparty: "acme" }), "1", "20")],
      lines: [{ key: "fee|wire", description: "wire fees", quantity: "2", unitPrice: "15", chargeTotal: "30", cappedTotal: "0", amount: "30" }],
    },
    {
      name: "keeps a fee line's unit price to twelve digits when the division does not end",
      charges: [fee(wire, "3", "10")],
      lines: [{ key: "fee|wire", description: "wire fees", quantity: "3", unitPrice: "3.333333333333", chargeTotal: "10", cappedTotal: "0", amount: "10" }],
    },
    {
      name: "divides the rounded line amount, not the exact charges, for a fee line's unit price",
      charges: [fee(wire, "10000", "12.345")],
      lines: [{ key: "fee|wire", description: "wire fees", quantity: "10000", unitPrice: "0.001234", chargeTotal: "12.345", cappedTotal: "0", amount: "12.34" }],
    },
    {
      name: "gives a fee line of zero quantity a unit price of 0",
      charges: [fee(wire, "0", "12.34")],
      lines: [{ key: "fee|wire", description: "wire fees", quantity: "0", unitPrice: "0", chargeTotal: "12.34", cappedTotal: "0", amount: "12.34" }],
    },
    {
      name: "keeps usage and fees of one metric on separate lines",
      charges: [usage(wire, "1", "20", "20"), fee(wire, "1", "3")],
      lines: [
        { key: "fee|wire", description: "wire fees", quantity: "1", unitPrice: "3", chargeTotal: "3", cappedTotal: "0", amount: "3" },
        { key: "usage|wire|20", description: "wire usage", quantity: "1", unitPrice: "20", chargeTotal: "20", cappedTotal: "20", amount: "20" },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = plainAll(linesOf(c.charges, c.currency)).map(({ kind: _k, ruleId: _r, metric: _m, ...rest }) => rest);
      assert.deepEqual(got, c.lines);
    });
  }

  it("does not change the line it adds to", () => {
    const first = addCharge(undefined, usage(wire, "1", "20", "20"), "USD");
    const before = plain(first);
    addCharge(first, usage(wire, "1", "20", "20"), "USD");
    assert.deepEqual(plain(first), before);
  });

  it("records the rule, metric and kind on the line", () => {
    const usageLine = addCharge(undefined, usage(card, "1", "0.029", "0.029"), "USD");
    const feeLine = addCharge(undefined, fee(card, "1", "1"), "USD");
    assert.deepEqual([usageLine.kind, usageLine.ruleId, usageLine.metric], ["usage", "card", "card"]);
    assert.deepEqual([feeLine.kind, feeLine.ruleId, feeLine.metric], ["fee", "card", "card"]);
  });
});

describe("usageDescription", () => {
  const cases: Array<{ name: string; rule: PricingRule; description: string }> = [
    { name: "names an unscoped rule's line after its metric", rule: rule({}), description: "wire usage" },
    { name: "adds the counterparty of a scoped rule", rule: rule({ counterparty: "acme" }), description: "wire usage (acme)" },
    {
      name: "adds every scope field in order",
      rule: rule({ counterparty: "acme", counterparty_side: "maker", pair: "BTC/USD" }),
      description: "wire usage (acme, maker, BTC/USD)",
    },
    { name: "adds a pair alone", rule: rule({ pair: "BTC/USD" }), description: "wire usage (BTC/USD)" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(usageDescription(c.rule, "wire"), c.description);
    });
  }
});

describe("capUsedByRule", () => {
  it("adds up the capped totals of each rule across its unit prices", () => {
    const lines = linesOf([
      usage(wire, "1", "20", "20", "20"),
      usage(wire, "1", "7.5", "7.5", "7.5"),
      usage(card, "1", "0.029", "1", "0.5"),
    ]);
    const used = capUsedByRule(lines.values());
    assert.deepEqual(
      [...used].map(([id, total]) => [id, total.toFixed()]),
      [
        ["wire", "27.5"],
        ["card", "0.5"],
      ],
    );
  });

  it("does not count fees against a cap", () => {
    const used = capUsedByRule(linesOf([fee(wire, "1", "100")]).values());
    assert.equal(used.size, 0);
  });

  it("ignores subscription and minimum lines", () => {
    const used = capUsedByRule([
      line({ key: "subscription|s", kind: "subscription", ruleId: "s", amount: new Big(10) }),
      line({ key: MINIMUM_LINE_KEY, kind: "minimum", amount: new Big(10) }),
    ]);
    assert.equal(used.size, 0);
  });
});

describe("applyMinimum", () => {
  const cases: Array<{ name: string; others: string[]; stale?: string; minimum: string | null; currency?: string; trueUp: string | null }> = [
    { name: "adds the shortfall when the other lines fall short of the minimum", others: ["400", "0.02"], minimum: "1000", trueUp: "599.98" },
    { name: "adds the whole minimum when there is nothing else", others: [], minimum: "1000", trueUp: "1000" },
    { name: "adds nothing when the other lines reach the minimum exactly", others: ["600", "400"], minimum: "1000", trueUp: null },
    { name: "adds nothing when the other lines exceed the minimum", others: ["1200"], minimum: "1000", trueUp: null },
    { name: "adds nothing when there is no minimum", others: ["10"], minimum: null, trueUp: null },
    { name: "replaces a stale true-up with the current shortfall", others: ["700"], stale: "1000", minimum: "1000", trueUp: "300" },
    { name: "removes a stale true-up once the minimum is reached", others: ["1000"], stale: "940", minimum: "1000", trueUp: null },
    { name: "removes a stale true-up when the minimum is gone", others: ["10"], stale: "990", minimum: null, trueUp: null },
    { name: "does not count a stale true-up towards the minimum", others: [], stale: "1000", minimum: "1000", trueUp: "1000" },
    { name: "rounds a minimum with sub-cent digits half-even before comparing", others: ["999.99"], minimum: "1000.005", trueUp: "0.01" },
    { name: "rounds a yen minimum to whole yen", others: ["100"], minimum: "1000.5", currency: "JPY", trueUp: "900" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const lines = new Map<string, Line>();
      c.others.forEach((amount, i) => lines.set(`usage|r${i}|1`, line({ key: `usage|r${i}|1`, kind: "usage", amount: new Big(amount) })));
      if (c.stale !== undefined) lines.set(MINIMUM_LINE_KEY, line({ key: MINIMUM_LINE_KEY, kind: "minimum", amount: new Big(c.stale) }));
      applyMinimum(lines, c.minimum === null ? null : new Big(c.minimum), c.currency ?? "USD");

      const trueUp = lines.get(MINIMUM_LINE_KEY);
      assert.equal(trueUp === undefined ? null : trueUp.amount.toFixed(), c.trueUp);
      assert.equal(lines.size, c.others.length + (c.trueUp === null ? 0 : 1));
      if (trueUp) {
        assert.deepEqual(plain(trueUp), {
          key: MINIMUM_LINE_KEY,
          kind: "minimum",
          ruleId: null,
          metric: null,
          description: "Monthly minimum",
          quantity: "1",
          unitPrice: c.trueUp,
          chargeTotal: c.trueUp,
          cappedTotal: "0",
          amount: c.trueUp,
        });
      }
    });
  }
});

describe("minimumOf", () => {
  const cases: Array<{ name: string; rules: PricingRule[]; minimum: string | null }> = [
    { name: "has no minimum without minimum rules", rules: [wire, rule({ id: "s", type: "subscription", metric: null, amount: "50.00" })], minimum: null },
    { name: "takes the amount of the one minimum rule", rules: [wire, rule({ id: "min", type: "minimum", metric: null, amount: "1000.00" })], minimum: "1000" },
    {
      name: "adds up several minimum rules",
      rules: [rule({ id: "a", type: "minimum", metric: null, amount: "1000.00" }), rule({ id: "b", type: "minimum", metric: null, amount: "250.50" })],
      minimum: "1250.5",
    },
    { name: "has a zero minimum from a minimum rule of 0", rules: [rule({ id: "z", type: "minimum", metric: null, amount: "0.00" })], minimum: "0" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const minimum = minimumOf(c.rules);
      assert.equal(minimum === null ? null : minimum.toFixed(), c.minimum);
    });
  }
});

describe("projectLines", () => {
  const subscription = rule({ id: "sub", name: "Platform fee", type: "subscription", metric: null, amount: "99.50", frequency: "monthly" });
  const support = rule({ id: "support", name: "Support", type: "subscription", metric: null, amount: "10.00", frequency: "monthly" });
  const setup = rule({ id: "setup", name: "Setup fee", type: "one_time", metric: null, amount: "250.00" });
  const minimum = rule({ id: "min", name: "Monthly minimum", type: "minimum", metric: null, amount: "1000.00", frequency: "monthly" });

  const cases: Array<{
    name: string;
    existing: Line[];
    rules: PricingRule[];
    billedElsewhere?: string[];
    lines: Array<{ key: string; kind: string; description: string; amount: string }>;
    minimum: string | null;
  }> = [
    {
      name: "adds one line per subscription rule at its monthly amount",
      existing: [],
      rules: [wire, subscription, support],
      lines: [
        { key: "subscription|sub", kind: "subscription", description: "Platform fee", amount: "99.5" },
        { key: "subscription|support", kind: "subscription", description: "Support", amount: "10" },
      ],
      minimum: null,
    },
    {
      name: "adds a one-time rule that is not billed elsewhere",
      existing: [],
      rules: [setup],
      lines: [{ key: "one_time|setup", kind: "one_time", description: "Setup fee", amount: "250" }],
      minimum: null,
    },
    {
      name: "skips a one-time rule billed on another invoice",
      existing: [],
      rules: [setup, subscription],
      billedElsewhere: ["setup"],
      lines: [{ key: "subscription|sub", kind: "subscription", description: "Platform fee", amount: "99.5" }],
      minimum: null,
    },
    {
      name: "keeps the usage and fee lines already rated onto the draft",
      existing: [...linesOf([usage(wire, "3", "20", "60"), fee(card, "1", "5")]).values()],
      rules: [wire, card],
      lines: [
        { key: "fee|card", kind: "fee", description: "card fees", amount: "5" },
        { key: "usage|wire|20", kind: "usage", description: "wire usage", amount: "60" },
      ],
      minimum: null,
    },
    {
      name: "adds a true-up of the minimum less every other line",
      existing: [...linesOf([usage(wire, "3", "20", "60")]).values()],
      rules: [wire, subscription, setup, minimum],
      lines: [
        { key: "minimum", kind: "minimum", description: "Monthly minimum", amount: "590.5" },
        { key: "one_time|setup", kind: "one_time", description: "Setup fee", amount: "250" },
        { key: "subscription|sub", kind: "subscription", description: "Platform fee", amount: "99.5" },
        { key: "usage|wire|20", kind: "usage", description: "wire usage", amount: "60" },
      ],
      minimum: "1000",
    },
    {
      name: "adds no true-up when usage already exceeds the minimum",
      existing: [...linesOf([usage(wire, "60", "20", "1200")]).values()],
      rules: [wire, minimum],
      lines: [{ key: "usage|wire|20", kind: "usage", description: "wire usage", amount: "1200" }],
      minimum: "1000",
    },
    {
      name: "drops the subscription line of a rule no longer in the program",
      existing: [line({ key: "subscription|old", kind: "subscription", ruleId: "old", amount: new Big(42) })],
      rules: [subscription],
      lines: [{ key: "subscription|sub", kind: "subscription", description: "Platform fee", amount: "99.5" }],
      minimum: null,
    },
    {
      name: "drops a one-time line once its rule is billed elsewhere",
      existing: [line({ key: "one_time|setup", kind: "one_time", ruleId: "setup", amount: new Big(250) })],
      rules: [setup],
      billedElsewhere: ["setup"],
      lines: [],
      minimum: null,
    },
    {
      name: "replaces a stale true-up with the current shortfall",
      existing: [...linesOf([usage(wire, "10", "20", "200")]).values(), line({ key: MINIMUM_LINE_KEY, kind: "minimum", amount: new Big(1000) })],
      rules: [wire, minimum],
      lines: [
        { key: "minimum", kind: "minimum", description: "Monthly minimum", amount: "800" },
        { key: "usage|wire|20", kind: "usage", description: "wire usage", amount: "200" },
      ],
      minimum: "1000",
    },
    {
      name: "rounds a subscription amount finer than the minor unit half-even",
      existing: [],
      rules: [rule({ id: "odd", name: "Odd", type: "subscription", metric: null, amount: "9.125", frequency: "monthly" })],
      lines: [{ key: "subscription|odd", kind: "subscription", description: "Odd", amount: "9.12" }],
      minimum: null,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const projected = projectLines(c.existing, c.rules, new Set(c.billedElsewhere ?? []), "USD");
      assert.deepEqual(
        plainAll(projected.lines).map((l) => ({ key: l.key, kind: l.kind, description: l.description, amount: l.amount })),
        c.lines,
      );
      assert.equal(projected.minimum === null ? null : projected.minimum.toFixed(), c.minimum);
    });
  }

  it("is idempotent: projecting its own output again gives the same lines", () => {
    const rules = [wire, card, subscription, setup, minimum];
    const existing = [...linesOf([usage(wire, "3", "20", "60"), usage(card, "3", "0.005", "0.015"), fee(card, "2", "7")]).values()];
    const first = projectLines(existing, rules, new Set(), "USD");
    const second = projectLines([...first.lines.values()], rules, new Set(), "USD");
    const third = projectLines([...second.lines.values()], rules, new Set(), "USD");
    assert.deepEqual(plainAll(second.lines), plainAll(first.lines));
    assert.deepEqual(plainAll(third.lines), plainAll(first.lines));
    assert.equal(totalsOf(first.lines.values()).total.toFixed(), "1000");
  });

  it("keeps the true-up equal to what is still short after later usage", () => {
    const rules = [wire, minimum];
    const first = projectLines([...linesOf([usage(wire, "3", "20", "60")]).values()], rules, new Set(), "USD");
    assert.equal(first.lines.get(MINIMUM_LINE_KEY)?.amount.toFixed(), "940");

    // Later usage is rated onto the projected draft, then the draft is projected again.
    const key = usageLineKey("wire", new Big(20));
    first.lines.set(key, addCharge(first.lines.get(key), usage(wire, "2", "20", "40"), "USD"));
    const second = projectLines([...first.lines.values()], rules, new Set(), "USD");
    assert.equal(second.lines.get(key)?.quantity.toFixed(), "5");
    assert.equal(second.lines.get(MINIMUM_LINE_KEY)?.amount.toFixed(), "900");
    assert.equal(totalsOf(second.lines.values()).total.toFixed(), "1000");
  });

  it("does not change the lines it is given", () => {
    const existing = [...linesOf([usage(wire, "3", "20", "60")]).values()];
    const before = existing.map(plain);
    projectLines(existing, [wire, subscription, minimum], new Set(), "USD");
    assert.deepEqual(existing.map(plain), before);
  });
});

describe("totalsOf", () => {
  const cases: Array<{ name: string; amounts: string[]; subtotal: string }> = [
    { name: "totals nothing to zero", amounts: [], subtotal: "0" },
    { name: "adds up the line amounts", amounts: ["60", "99.5", "840.5"], subtotal: "1000" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const totals = totalsOf(c.amounts.map((amount, i) => line({ key: `l${i}`, kind: "usage", amount: new Big(amount) })));
      assert.equal(totals.subtotal.toFixed(), c.subtotal);
      assert.equal(totals.tax.toFixed(), "0");
      assert.equal(totals.total.toFixed(), c.subtotal);
    });
  }

  it("adds the rounded line amounts, not the exact charge totals", () => {
    // Each line's 0.005 rounds half-even to 0.00; the exact sum, 0.01, is not what the lines show.
    const lines = linesOf([usage(wire, "1", "0.005", "0.005"), usage(card, "1", "0.005", "0.005")]);
    assert.deepEqual(
      [...lines.values()].map((l) => l.amount.toFixed()),
      ["0", "0"],
    );
    assert.equal(totalsOf(lines.values()).subtotal.toFixed(), "0");
  });

  it("keeps a subtotal that matches the sum of what the lines show", () => {
    const lines = linesOf([usage(wire, "1", "0.015", "0.015"), usage(card, "1", "0.135", "0.135"), fee(wire, "1", "0.125")]);
    const shown = [...lines.values()].reduce((sum, l) => sum.plus(l.amount), new Big(0));
    assert.equal(shown.toFixed(), "0.28");
    assert.equal(totalsOf(lines.values()).total.toFixed(), "0.28");
  });
});

describe("sortLines", () => {
  it("orders subscriptions, one-time fees, usage, fees, then the minimum, each by description", () => {
    const lines = [
      { key: MINIMUM_LINE_KEY, kind: "minimum" as const, description: "Monthly minimum" },
      { key: "fee|wire", kind: "fee" as const, description: "wire fees" },
      { key: "usage|wire|20", kind: "usage" as const, description: "wire usage" },
      { key: "usage|card|0.029", kind: "usage" as const, description: "card usage" },
      { key: "one_time|setup", kind: "one_time" as const, description: "Setup fee" },
      { key: "subscription|support", kind: "subscription" as const, description: "Support" },
      { key: "subscription|sub", kind: "subscription" as const, description: "Platform fee" },
    ];
    assert.deepEqual(
      sortLines(lines).map((l) => l.key),
      ["subscription|sub", "subscription|support", "one_time|setup", "usage|card|0.029", "usage|wire|20", "fee|wire", MINIMUM_LINE_KEY],
    );
  });

  it("orders lines with the same kind and description by key", () => {
    const lines = [
      { key: "usage|wire|7.5", kind: "usage" as const, description: "wire usage" },
      { key: "usage|wire|20", kind: "usage" as const, description: "wire usage" },
    ];
    assert.deepEqual(
      sortLines(lines).map((l) => l.key),
      ["usage|wire|20", "usage|wire|7.5"],
    );
  });

  it("returns a new array and leaves the input in its order", () => {
    const lines = [
      { key: "b", kind: "fee" as const, description: "b" },
      { key: "a", kind: "subscription" as const, description: "a" },
    ];
    const sorted = sortLines(lines);
    assert.notEqual(sorted, lines);
    assert.deepEqual(
      lines.map((l) => l.key),
      ["b", "a"],
    );
  });
});
