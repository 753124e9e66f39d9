import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonNumber } from "../../platform/exact-json.js";
import { decimalWords, moneyWords, percentWords, rulePriceWords, type PricedRule } from "./rule-price-wording.js";

describe("rulePriceWords", () => {
  const cases: Array<{ name: string; rule: PricedRule; currency?: string; words: string }> = [
    { name: "a flat usage rule charges per unit", rule: { type: "usage", model: "flat", amount: "20.00", currency: "USD" }, words: "$20.00 per unit" },
    { name: "a percentage rule takes a share of the event's value", rule: { type: "usage", model: "percentage", rate: new JsonNumber("0.029"), currency: "USD" }, words: "2.9% of the event's value" },
    { name: "a subscription is a flat amount", rule: { type: "subscription", model: "flat", amount: "500", currency: "USD" }, words: "$500.00" },
    { name: "a minimum groups thousands", rule: { type: "minimum", model: "flat", amount: "1000.00", currency: "USD" }, words: "$1,000.00" },
    { name: "a one-time fee is a flat amount", rule: { type: "one_time", model: "flat", amount: "99.5", currency: "EUR" }, words: "€99.50" },
    { name: "a zero-decimal currency prints no minor unit", rule: { type: "usage", model: "flat", amount: "1500", currency: "JPY" }, words: "¥1,500 per unit" },
    { name: "every digit of a small per-unit price stays", rule: { type: "usage", model: "flat", amount: "0.0025", currency: "USD" }, words: "$0.0025 per unit" },
    { name: "a rule without a currency takes the contract's", rule: { type: "usage", model: "flat", amount: "19.5" }, currency: "USD", words: "$19.50 per unit" },
    { name: "a percentage rule without a rate has no price", rule: { type: "usage", model: "percentage", rate: null }, words: "—" },
    { name: "a flat rule without an amount has no price", rule: { type: "usage", model: "flat", amount: null, currency: "USD" }, words: "—" },
    { name: "text that is not a number is shown as given", rule: { type: "one_time", model: "flat", amount: "abc", currency: "USD" }, words: "abc USD" },
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
