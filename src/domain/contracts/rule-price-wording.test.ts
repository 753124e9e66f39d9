import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../kernel/money.js";
import { JsonNumber } from "../../platform/exact-json.js";
import {
  decimalWords,
  fractionOfPercent,
  percentOfFraction,
  moneyWords,
  percentWords,
  rulePriceWords,
  type PricedRule,
} from "./rule-price-wording.js";

describe("rulePriceWords", () => {
  const cases: Array<{ name: string; rule: PricedRule; currency?: string; words: string }> = [
    {
      name: "a flat usage rule charges per unit",
      rule: { type: "usage", model: "flat", amount: "20.00", currency: "USD" },
      words: "$20.00 per unit",
    },
    {
      name: "a percentage rule takes a share of the event's value",
      rule: { type: "usage", model: "percentage", rate: new JsonNumber("0.029"), currency: "USD" },
      words: "2.9% of the event's value",
    },
    {
      name: "a subscription is a flat amount",
      rule: { type: "subscription", model: "flat", amount: "500", currency: "USD" },
      words: "$500.00",
    },
    {
      name: "a minimum groups thousands",
      rule: { type: "minimum", model: "flat", amount: "1000.00", currency: "USD" },
      words: "$1,000.00",
    },
    {
      name: "a one-time fee is a flat amount",
      rule: { type: "one_time", model: "flat", amount: "99.5", currency: "EUR" },
      words: "€99.50",
    },
    {
      name: "a zero-decimal currency prints no minor unit",
      rule: { type: "usage", model: "flat", amount: "1500", currency: "JPY" },
      words: "¥1,500 per unit",
    },
    {
      name: "every digit of a small per-unit price stays",
      rule: { type: "usage", model: "flat", amount: "0.0025", currency: "USD" },
      words: "$0.0025 per unit",
    },
    {
      name: "a rule without a currency takes the contract's",
      rule: { type: "usage", model: "flat", amount: "19.5" },
      currency: "USD",
      words: "$19.50 per unit",
    },
    {
      name: "a percentage rule without a rate has no price",
      rule: { type: "usage", model: "percentage", rate: null },
      words: "—",
    },
    {
      name: "a flat rule without an amount has no price",
      rule: { type: "usage", model: "flat", amount: null, currency: "USD" },
      words: "—",
    },
    {
      name: "text that is not a number is shown as given",
      rule: { type: "one_time", model: "flat", amount: "abc", currency: "USD" },
      words: "abc USD",
    },
    {
      name: "a percentage rule's fees follow its share, the fixed fee first",
      rule: {
        type: "usage",
        model: "percentage",
        rate: new JsonNumber("0.029"),
        fixed_fee: "0.30",
        min_fee: "0.50",
        max_fee: "4000",
        currency: "USD",
      },
      words: "2.9% of the event's value + $0.30 per event, at least $0.50, at most $4,000.00",
    },
    {
      name: "a percentage rule with a bound only",
      rule: { type: "usage", model: "percentage", rate: "0.0235", max_fee: "0.0025", currency: "USD" },
      words: "2.35% of the event's value, at most $0.0025",
    },
    {
      name: "a graduated rule words each tier, its flat amount on entering it",
      rule: {
        type: "usage",
        model: "graduated",
        tiers: [
          { up_to: new JsonNumber("1000"), unit_amount: "0.10", flat_amount: null },
          { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
          { up_to: null, unit_amount: "0.05", flat_amount: null },
        ],
        currency: "USD",
      },
      words:
        "graduated: $0.10 per unit up to 1,000; $0.08 per unit up to 10,000 + $5.00 on entering; $0.05 per unit above 10,000",
    },
    {
      name: "a volume rule prices every unit at the tier the total reaches",
      rule: {
        type: "usage",
        model: "volume",
        tiers: [
          { up_to: "1000", unit_amount: "0.10" },
          { up_to: "10000", unit_amount: "0.08", flat_amount: "5" },
          { unit_amount: "0.05" },
        ],
      },
      currency: "USD",
      words: "volume: every unit at $0.10 up to 1,000; at $0.08 up to 10,000 + $5.00; at $0.05 above 10,000",
    },
    {
      name: "a single unbounded tier has no bound to word",
      rule: { type: "usage", model: "graduated", tiers: [{ up_to: null, unit_amount: "0.0025" }], currency: "EUR" },
      words: "graduated: €0.0025 per unit",
    },
    {
      name: "every digit of a tier's bound and price stays",
      rule: {
        type: "usage",
        model: "volume",
        tiers: [
          { up_to: "0.5", unit_amount: "1500", flat_amount: "100" },
          { up_to: null, unit_amount: "0.000001" },
        ],
        currency: "JPY",
      },
      words: "volume: every unit at ¥1,500 up to 0.5 + ¥100; at ¥0.000001 above 0.5",
    },
    {
      name: "a package rule charges per started package",
      rule: { type: "usage", model: "package", amount: "10.00", package_size: new JsonNumber("1000"), currency: "USD" },
      words: "$10.00 per started 1,000 units",
    },
    {
      name: "a package of one unit",
      rule: { type: "usage", model: "package", amount: "2", package_size: "1", currency: "USD" },
      words: "$2.00 per started 1 unit",
    },
    {
      name: "a tiered rule without tiers has no price",
      rule: { type: "usage", model: "graduated", tiers: [], currency: "USD" },
      words: "—",
    },
    {
      name: "a package rule without a size has no price",
      rule: { type: "usage", model: "package", amount: "10.00", currency: "USD" },
      words: "—",
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(rulePriceWords(c.rule, c.currency), c.words));
  }
});

describe("moneyWords, percentWords and decimalWords", () => {
  it("never shows exponent notation or a float's tail", () => {
    assert.equal(percentWords(0.029), "2.9%");
    assert.equal(percentWords("0.0125"), "1.25%");
    assert.equal(decimalWords(3e-7), "0.0000003");
    assert.equal(decimalWords(1e21), "1,000,000,000,000,000,000,000");
    assert.equal(decimalWords(-1234.5, 2), "-1,234.50");
  });

  it("keeps the minor units of the currency and says so when there is none", () => {
    assert.equal(moneyWords("1.5", "KWD"), "KWD\u00a01.500");
    assert.equal(moneyWords("12.5", undefined), "12.50 —");
  });
});

describe("fractionOfPercent", () => {
  const cases: Array<[string, string | undefined]> = [
    ["2.35", "0.0235"],
    ["235", "2.35"],
    ["100", "1"],
    ["0", "0"],
    ["0.0001", "0.000001"],
    ["12.50", "0.125"],
    [".5", "0.005"],
    [" 5 ", "0.05"],
    ["999999999999999.123456789012", "9999999999999.99123456789012"],
    ["-1", "-0.01"],
    ["abc", undefined],
    ["2,35", undefined],
    ["1e2", undefined],
    ["2.35%", undefined],
    ["", undefined],
  ];
  for (const [percent, fraction] of cases) {
    it(`reads ${JSON.stringify(percent)} % as ${String(fraction)}`, () =>
      assert.equal(fractionOfPercent(percent), fraction));
  }
});

describe("percentOfFraction", () => {
  const cases: Array<[string, string | undefined]> = [
    ["0.0235", "2.35"],
    ["0.029", "2.9"],
    ["2.35", "235"],
    ["1", "100"],
    ["0", "0"],
    ["0.000000000001", "0.0000000001"],
    ["abc", undefined],
    ["", undefined],
  ];
  for (const [fraction, percent] of cases) {
    it(`shows ${JSON.stringify(fraction)} as ${String(percent)} %`, () => {
      assert.equal(percentOfFraction(fraction), percent);
      if (percent !== undefined) assert.equal(fractionOfPercent(percent), new Big(fraction).toFixed(), "and back");
    });
  }
});
