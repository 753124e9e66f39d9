import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { metricsOf, normalizeRule, presentRule, type PricingRule, type RuleFields } from "./pricing-rule.js";
import { rule } from "../../../test/fixtures/pricing-rules.js";

/** The rule normalizeRule makes of `fields`, failing the test when it lists errors instead. */
function normalized(fields: RuleFields, currency = "USD"): PricingRule {
  const result = normalizeRule(fields, currency);
  assert.equal(result.errors, undefined, `unexpected errors: ${JSON.stringify(result.errors)}`);
  return result.rule!;
}

describe("normalizeRule: valid rules", () => {
  const cases: Array<{ name: string; fields: RuleFields; currency?: string; expected: Partial<PricingRule> }> = [
    {
      name: "infers a usage percentage rule from a metric and a rate of 0",
      fields: { metric: "payments", rate: 0 },
      expected: {
        type: "usage",
        model: "percentage",
        rate: "0",
        amount: null,
        metric: "payments",
        name: "payments",
        frequency: null,
      },
    },
    {
      name: "infers a flat usage rule from a metric and an amount",
      fields: { metric: "domestic_wire", amount: "20" },
      expected: { type: "usage", model: "flat", amount: "20.00", rate: null, name: "domestic_wire" },
    },
    {
      name: "infers the percentage model from a rate even when the type is given",
      fields: { type: "usage", metric: "card", rate: "0.029" },
      expected: { type: "usage", model: "percentage", rate: "0.029" },
    },
    {
      name: "pads a money amount to the currency's minor unit",
      fields: { metric: "m", amount: "20" },
      expected: { amount: "20.00" },
    },
    {
      name: "keeps a per-unit price finer than a cent",
      fields: { metric: "m", amount: 0.015 },
      expected: { amount: "0.015" },
    },
    {
      name: "drops trailing zeros beyond the minor unit",
      fields: { metric: "m", amount: "0.0150" },
      expected: { amount: "0.015" },
    },
    {
      name: "keeps an amount with two digits when it has trailing zeros",
      fields: { metric: "m", amount: "20.500" },
      expected: { amount: "20.50" },
    },
    {
      name: "accepts twelve fractional digits on an amount",
      fields: { metric: "m", amount: "0.000000000001" },
      expected: { amount: "0.000000000001" },
    },
    {
      name: "prints a rate as a plain decimal without trailing zeros",
      fields: { metric: "m", rate: "0.0500" },
      expected: { rate: "0.05" },
    },
    {
      name: "prints a tiny rate given as a number without an exponent",
      fields: { metric: "m", rate: 1e-7 },
      expected: { rate: "0.0000001" },
    },
    {
      name: "reads a money amount with surrounding spaces",
      fields: { metric: "m", amount: " 20 " },
      expected: { amount: "20.00" },
    },
    {
      name: "formats the monthly cap of a usage rule as money",
      fields: { metric: "m", amount: "10", monthly_cap: "25" },
      expected: { monthly_cap: "25.00" },
    },
    {
      name: "makes a subscription monthly and flat by default",
      fields: { type: "subscription", amount: "99.5" },
      expected: {
        type: "subscription",
        model: "flat",
        amount: "99.50",
        frequency: "monthly",
        name: "Subscription",
        metric: null,
      },
    },
    {
      name: "makes a minimum monthly by default and names it",
      fields: { type: "minimum", amount: "1000" },
      expected: { type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly", name: "Monthly minimum" },
    },
    {
      name: "accepts the sample contract's minimum rule as written in docs/decisions.md",
      fields: { type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly", currency: "USD" },
      expected: { type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly", currency: "USD" },
    },
    {
      name: "gives a one-time rule no frequency",
      fields: { type: "one_time", amount: "250" },
      expected: { type: "one_time", frequency: null, amount: "250.00", name: "One-time fee" },
    },
    {
      name: "keeps a subscription's explicit monthly frequency",
      fields: { type: "subscription", amount: "10", frequency: "monthly" },
      expected: { frequency: "monthly" },
    },
    {
      name: "formats yen amounts without decimals",
      fields: { metric: "m", amount: "20", monthly_cap: "1000" },
      currency: "JPY",
      expected: { amount: "20", monthly_cap: "1000", currency: "JPY" },
    },
    {
      name: "keeps a yen per-unit price finer than a yen",
      fields: { metric: "m", amount: "0.5" },
      currency: "JPY",
      expected: { amount: "0.5" },
    },
    {
      name: "formats dinar amounts with three decimals",
      fields: { type: "subscription", amount: "1.5" },
      currency: "KWD",
      expected: { amount: "1.500", currency: "KWD" },
    },
    {
      name: "takes the contract's currency when none is given",
      fields: { metric: "m", rate: "0.01" },
      currency: "EUR",
      expected: { currency: "EUR" },
    },
    {
      name: "accepts the contract's currency written in lower case",
      fields: { metric: "m", rate: "0.01", currency: "usd" },
      expected: { currency: "USD" },
    },
    {
      name: "keeps a supplied id and name",
      fields: { id: "rule_custom", name: "Wires", metric: "wire", amount: "20" },
      expected: { id: "rule_custom", name: "Wires" },
    },
    {
      name: "keeps the scope fields of a usage rule",
      fields: { metric: "trade", rate: "0.001", counterparty: "acme", counterparty_side: "maker", pair: "BTC/USD" },
      expected: { counterparty: "acme", counterparty_side: "maker", pair: "BTC/USD" },
    },
    {
      name: "leaves the scope fields of an unscoped rule null",
      fields: { metric: "trade", rate: "0.001" },
      expected: { counterparty: null, counterparty_side: null, pair: null, monthly_cap: null },
    },
    {
      name: "reads minus zero as zero",
      fields: { type: "subscription", amount: "-0" },
      expected: { amount: "0.00" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = normalized(c.fields, c.currency);
      for (const [key, value] of Object.entries(c.expected)) {
        assert.equal(result[key as keyof PricingRule], value, key);
      }
    });
  }

  it("generates an id when none is supplied, a different one each time", () => {
    const first = normalized({ metric: "m", rate: 0 });
    const second = normalized({ metric: "m", rate: 0 });
    assert.match(first.id, /^rule_[0-9a-f]{16}$/);
    assert.notEqual(first.id, second.id);
  });

  it("returns every field of a rule, absent ones as null", () => {
    const { id, ...rest } = normalized({ metric: "wire", amount: "20" });
    assert.ok(id);
    assert.deepEqual(rest, {
      name: "wire",
      type: "usage",
      model: "flat",
      amount: "20.00",
      rate: null,
      metric: "wire",
      frequency: null,
      monthly_cap: null,
      currency: "USD",
      counterparty: null,
      counterparty_side: null,
      pair: null,
    });
  });
});

/** A refused rule: no rule, the errors' paths in order, the first error's words when given. */
function assertRefused(c: { fields: RuleFields; currency?: string; paths: string[]; message?: RegExp }): void {
  const result = normalizeRule(c.fields, c.currency ?? "USD");
  assert.equal(result.rule, undefined);
  assert.deepEqual(
    result.errors?.map((e) => e.path),
    c.paths,
    JSON.stringify(result.errors),
  );
  if (c.message) assert.match(result.errors![0]!.message, c.message);
}

describe("normalizeRule: invalid rules", () => {
  const cases: Array<{ name: string; fields: RuleFields; currency?: string; paths: string[]; message?: RegExp }> = [
    {
      name: "requires a type when there is no metric to infer it from",
      fields: { amount: "10" },
      paths: ["type"],
      message: /is required/,
    },
    {
      name: "refuses an unknown type",
      fields: { type: "bogus", amount: "10" },
      paths: ["type"],
      message: /must be one of/,
    },
    {
      name: "refuses an unknown model",
      fields: { metric: "m", model: "tiered", amount: "1" },
      paths: ["model"],
      message: /must be one of/,
    },
    {
      name: "requires a metric on a usage rule",
      fields: { type: "usage", amount: "1" },
      paths: ["metric"],
      message: /required on a usage rule/,
    },
    {
      name: "requires a rate on a percentage rule",
      fields: { metric: "m", model: "percentage" },
      paths: ["rate"],
      message: /required on a percentage rule/,
    },
    {
      name: "requires an amount on a flat usage rule",
      fields: { metric: "m", model: "flat" },
      paths: ["amount"],
      message: /price per unit/,
    },
    {
      name: "requires an amount on a flat usage rule whose model is inferred",
      fields: { metric: "m" },
      paths: ["amount"],
    },
    {
      name: "requires an amount on a subscription",
      fields: { type: "subscription" },
      paths: ["amount"],
      message: /required on a subscription rule/,
    },
    {
      name: "requires an amount on a minimum",
      fields: { type: "minimum" },
      paths: ["amount"],
      message: /required on a minimum rule/,
    },
    {
      name: "requires an amount on a one-time rule",
      fields: { type: "one_time" },
      paths: ["amount"],
      message: /required on a one_time rule/,
    },
    {
      name: "refuses an amount on a percentage rule",
      fields: { metric: "m", rate: "0.05", amount: "1" },
      paths: ["amount"],
      message: /is for flat rules/,
    },
    {
      name: "refuses a rate on a flat rule",
      fields: { metric: "m", model: "flat", amount: "1", rate: "0.05" },
      paths: ["rate"],
      message: /is for percentage rules/,
    },
    {
      name: "refuses an explicit percentage model with an amount and no rate",
      fields: { metric: "m", model: "percentage", amount: "1" },
      paths: ["rate", "amount"],
    },
    {
      name: "refuses a percentage subscription",
      fields: { type: "subscription", model: "percentage", amount: "5" },
      paths: ["model", "amount"],
      message: /must be flat on a subscription rule/,
    },
    {
      name: "refuses a subscription priced by a rate",
      fields: { type: "subscription", rate: "0.05" },
      paths: ["model", "amount"],
    },
    {
      name: "refuses a negative amount",
      fields: { metric: "m", amount: "-1" },
      paths: ["amount"],
      message: /must not be negative/,
    },
    {
      name: "refuses a negative rate",
      fields: { metric: "m", rate: -0.01 },
      paths: ["rate"],
      message: /must not be negative/,
    },
    {
      name: "refuses a negative monthly cap",
      fields: { metric: "m", amount: "1", monthly_cap: "-5" },
      paths: ["monthly_cap"],
      message: /must not be negative/,
    },
    {
      name: "refuses an amount with thirteen decimals",
      fields: { metric: "m", amount: "0.0000000000001" },
      paths: ["amount"],
      message: /more than 12 decimal places/,
    },
    {
      name: "refuses a rate with thirteen decimals",
      fields: { metric: "m", rate: "0.0000000000001" },
      paths: ["rate"],
      message: /more than 12 decimal places/,
    },
    {
      name: "refuses a dollar cap finer than a cent",
      fields: { metric: "m", amount: "1", monthly_cap: "10.001" },
      paths: ["monthly_cap"],
      message: /more than 2 decimal places/,
    },
    {
      name: "refuses a yen cap finer than a yen",
      fields: { metric: "m", amount: "1", monthly_cap: "10.5" },
      currency: "JPY",
      paths: ["monthly_cap"],
      message: /more than 0 decimal places/,
    },
    {
      name: "refuses an amount of 10^15 or more",
      fields: { metric: "m", amount: "1000000000000000" },
      paths: ["amount"],
      message: /less than 10\^15/,
    },
    {
      name: "refuses an amount whose exponent leaves 13 decimals",
      fields: { metric: "m", amount: "1e-13" },
      paths: ["amount"],
      message: /12 decimal places/,
    },
    {
      name: "refuses an amount that is not a number",
      fields: { metric: "m", amount: "abc" },
      paths: ["amount"],
      message: /decimal number/,
    },
    {
      name: "refuses an empty amount",
      fields: { metric: "m", amount: "" },
      paths: ["amount"],
      message: /decimal number/,
    },
    {
      name: "refuses a rate of NaN",
      fields: { metric: "m", rate: Number.NaN },
      paths: ["rate"],
      message: /decimal number/,
    },
    {
      name: "refuses an infinite amount",
      fields: { metric: "m", amount: Number.POSITIVE_INFINITY },
      paths: ["amount"],
      message: /decimal number/,
    },
    {
      name: "refuses a currency other than the contract's",
      fields: { metric: "m", rate: "0.01", currency: "EUR" },
      paths: ["currency"],
      message: /contract's currency, USD/,
    },
    {
      name: "refuses an unknown currency",
      fields: { metric: "m", rate: "0.01", currency: "XYZ" },
      paths: ["currency"],
      message: /not a supported/,
    },
    {
      name: "refuses a yearly subscription",
      fields: { type: "subscription", amount: "10", frequency: "yearly" },
      paths: ["frequency"],
      message: /must be monthly/,
    },
    {
      name: "refuses a frequency on a one-time rule",
      fields: { type: "one_time", amount: "10", frequency: "monthly" },
      paths: ["frequency"],
      message: /does not apply to one_time/,
    },
    {
      name: "refuses a frequency on a usage rule",
      fields: { metric: "m", amount: "1", frequency: "monthly" },
      paths: ["frequency"],
      message: /does not apply to usage/,
    },
    {
      name: "refuses a non-monthly frequency on a usage rule twice over",
      fields: { metric: "m", amount: "1", frequency: "weekly" },
      paths: ["frequency", "frequency"],
    },
    {
      name: "refuses a monthly cap on a subscription",
      fields: { type: "subscription", amount: "10", monthly_cap: "5" },
      paths: ["monthly_cap"],
      message: /usage rules only/,
    },
    {
      name: "refuses a monthly cap on a minimum",
      fields: { type: "minimum", amount: "10", monthly_cap: "5" },
      paths: ["monthly_cap"],
      message: /usage rules only/,
    },
    {
      name: "refuses a metric on a minimum",
      fields: { type: "minimum", amount: "10", metric: "m" },
      paths: ["metric"],
      message: /usage rules only/,
    },
    {
      name: "refuses a counterparty on a subscription",
      fields: { type: "subscription", amount: "10", counterparty: "acme" },
      paths: ["counterparty"],
      message: /usage rules only/,
    },
    {
      name: "refuses a counterparty side on a one-time rule",
      fields: { type: "one_time", amount: "10", counterparty_side: "maker" },
      paths: ["counterparty"],
    },
    {
      name: "refuses a pair on a minimum",
      fields: { type: "minimum", amount: "10", pair: "BTC/USD" },
      paths: ["counterparty"],
    },
    {
      name: "lists every problem at once, in field order",
      fields: { type: "usage", amount: "-1", currency: "EUR" },
      paths: ["currency", "amount", "metric"],
    },
  ];
  for (const c of cases) it(c.name, () => assertRefused(c));
});

describe("metricsOf", () => {
  const cases: Array<{ name: string; rules: PricingRule[]; metrics: string[] }> = [
    { name: "has no metrics without rules", rules: [], metrics: [] },
    {
      name: "lists the metrics of usage rules in rule order",
      rules: [rule({ metric: "b" }), rule({ metric: "a" })],
      metrics: ["b", "a"],
    },
    {
      name: "lists a metric with several scoped rules once",
      rules: [rule({ metric: "trade" }), rule({ metric: "trade", counterparty: "acme" }), rule({ metric: "wire" })],
      metrics: ["trade", "wire"],
    },
    {
      name: "ignores rules that are not usage rules",
      rules: [
        rule({ type: "subscription", metric: null, amount: "10" }),
        rule({ type: "minimum", metric: null, amount: "1000" }),
        rule({ metric: "wire" }),
      ],
      metrics: ["wire"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(metricsOf(c.rules), c.metrics);
    });
  }
});

describe("presentRule", () => {
  const cases: Array<{
    name: string;
    rule: PricingRule;
    rate: string | null;
    amount: string | null;
    cap: string | null;
  }> = [
    {
      name: "shows the rate as a number with the stored digits",
      rule: rule({ model: "percentage", rate: "0.05" }),
      rate: "0.05",
      amount: null,
      cap: null,
    },
    {
      name: "shows a zero rate as 0",
      rule: rule({ model: "percentage", rate: "0" }),
      rate: "0",
      amount: null,
      cap: null,
    },
    {
      name: "keeps money amounts as strings",
      rule: rule({ amount: "20.00", monthly_cap: "25.00" }),
      rate: null,
      amount: "20.00",
      cap: "25.00",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const presented = presentRule(c.rule);
      assert.equal(presented.rate?.text ?? null, c.rate);
      assert.equal(presented.amount, c.amount);
      assert.equal(presented.monthly_cap, c.cap);
      assert.equal(presented.id, c.rule.id);
    });
  }
});

describe("normalizeRule: the models beyond flat and percentage", () => {
  const tiers = [
    { up_to: 1000, unit_amount: "0.10" },
    { up_to: "10000", unit_amount: 0.08, flat_amount: "5" },
    { up_to: null, unit_amount: "0.05" },
  ];

  it("stores graduated tiers exactly, money with the currency's digits, and no amount or rate", () => {
    const r = normalized({ metric: "api_calls", model: "graduated", tiers });
    assert.deepEqual(r.tiers, [
      { up_to: "1000", unit_amount: "0.10", flat_amount: null },
      { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
      { up_to: null, unit_amount: "0.05", flat_amount: null },
    ]);
    assert.deepEqual([r.model, r.amount, r.rate, r.package_size], ["graduated", null, null, undefined]);
  });

  it("takes a volume rule's tiers the same way, with a monthly cap", () => {
    const r = normalized({ metric: "m", model: "volume", tiers, monthly_cap: "500" });
    assert.deepEqual([r.model, r.tiers?.length, r.monthly_cap], ["volume", 3, "500.00"]);
  });

  it("stores a package rule's size as an integer and its amount per package", () => {
    const r = normalized({ metric: "sms", model: "package", package_size: 1000, amount: "10" });
    assert.deepEqual([r.package_size, r.amount], ["1000", "10.00"]);
  });

  it("stores a percentage rule's fixed fee and bounds; a rule without them has no such fields", () => {
    const r = normalized({ metric: "card", rate: "0.029", fixed_fee: "0.30", min_fee: 0.5, max_fee: "4000" });
    assert.deepEqual([r.fixed_fee, r.min_fee, r.max_fee], ["0.30", "0.50", "4000.00"]);
    const plain = normalized({ metric: "card", rate: "0.029" });
    assert.deepEqual(Object.keys(plain).sort(), Object.keys(rule({})).sort());
  });

  it("takes a rate above 1 only when the rule says so", () => {
    assert.equal(normalized({ metric: "m", rate: "2.35", allow_rate_above_one: true }).rate, "2.35");
    assert.equal(normalized({ metric: "m", rate: "2.35", allow_rate_above_one: true }).allow_rate_above_one, true);
    assert.equal(normalized({ metric: "m", rate: "1" }).rate, "1");
    assert.equal(normalized({ metric: "m", rate: "0.5", allow_rate_above_one: false }).allow_rate_above_one, undefined);
  });

  const refused: Array<{ name: string; fields: RuleFields; paths: string[]; message?: RegExp }> = [
    {
      name: "a rate above 1 without allow_rate_above_one: 2.35 meant as 2.35 %",
      fields: { metric: "m", rate: "2.35" },
      paths: ["rate"],
      message: /is a fraction: 0\.0235 is 2\.35 %, so 2\.35 is 235 %/,
    },
    {
      name: "a graduated rule without tiers",
      fields: { metric: "m", model: "graduated" },
      paths: ["tiers"],
      message: /is required on a graduated rule/,
    },
    { name: "empty tiers", fields: { metric: "m", model: "volume", tiers: [] }, paths: ["tiers"] },
    {
      name: "tiers out of order (or overlapping)",
      fields: {
        metric: "m",
        model: "graduated",
        tiers: [
          { up_to: 100, unit_amount: 1 },
          { up_to: 100, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
      },
      paths: ["tiers.1.up_to"],
      message: /must be above the previous tier's \(100\)/,
    },
    {
      name: "an unbounded tier before the last",
      fields: {
        metric: "m",
        model: "graduated",
        tiers: [
          { up_to: null, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
      },
      paths: ["tiers.0.up_to"],
      message: /only the last is unbounded/,
    },
    {
      name: "a last tier with an upper bound",
      fields: { metric: "m", model: "graduated", tiers: [{ up_to: 100, unit_amount: 1 }] },
      paths: ["tiers.0.up_to"],
      message: /must be null on the last tier/,
    },
    {
      name: "a tier without its unit amount, and one with a negative flat amount",
      fields: { metric: "m", model: "volume", tiers: [{ up_to: 5 }, { up_to: null, unit_amount: 1, flat_amount: -1 }] },
      paths: ["tiers.0.unit_amount", "tiers.1.flat_amount"],
    },
    {
      name: "a first tier's up_to of 0",
      fields: { metric: "m", model: "volume", tiers: [{ up_to: 0, unit_amount: 1 }, { unit_amount: 1 }] },
      paths: ["tiers.0.up_to"],
    },
    {
      name: "tiers on a flat rule, an amount on a graduated one",
      fields: { metric: "m", amount: "1", tiers: [{ up_to: null, unit_amount: 1 }] },
      paths: ["tiers"],
      message: /applies to graduated and volume rules only/,
    },
    {
      name: "an amount on a graduated rule",
      fields: { metric: "m", model: "graduated", amount: "1", tiers: [{ up_to: null, unit_amount: 1 }] },
      paths: ["amount"],
    },
    {
      name: "a package rule without its size or amount",
      fields: { metric: "m", model: "package" },
      paths: ["amount", "package_size"],
    },
    {
      name: "a package size that is not a positive integer",
      fields: { metric: "m", model: "package", amount: "1", package_size: "2.5" },
      paths: ["package_size"],
    },
    {
      name: "a package size of 0",
      fields: { metric: "m", model: "package", amount: "1", package_size: 0 },
      paths: ["package_size"],
      message: /positive integer/,
    },
    {
      name: "min_fee above max_fee",
      fields: { metric: "m", rate: "0.01", min_fee: "5", max_fee: "1" },
      paths: ["min_fee"],
      message: /must not be above max_fee \(1\)/,
    },
    {
      name: "fees on a flat rule",
      fields: { metric: "m", amount: "1", fixed_fee: "0.3", max_fee: "1" },
      paths: ["fixed_fee", "max_fee"],
      message: /applies to percentage rules only/,
    },
    {
      name: "a rate on a package rule",
      fields: { metric: "m", model: "package", amount: "1", package_size: 10, rate: "0.1" },
      paths: ["rate"],
    },
    {
      name: "a graduated subscription",
      fields: { type: "subscription", model: "graduated", amount: "1" },
      paths: ["model", "tiers", "amount"],
    },
  ];
  for (const c of refused) it(`refuses ${c.name}`, () => assertRefused(c));

  it("shows tiers' bounds and a package size as exact numbers, and omits the fields a rule does not have", () => {
    const shown = presentRule(normalized({ metric: "m", model: "graduated", tiers }));
    assert.deepEqual(
      shown.tiers?.map((t) => [t.up_to?.text ?? null, t.unit_amount, t.flat_amount]),
      [
        ["1000", "0.10", null],
        ["10000", "0.08", "5.00"],
        [null, "0.05", null],
      ],
    );
    assert.equal("package_size" in shown, false);
    assert.equal(
      presentRule(normalized({ metric: "m", model: "package", amount: 1, package_size: 25 })).package_size?.text,
      "25",
    );
  });
});
