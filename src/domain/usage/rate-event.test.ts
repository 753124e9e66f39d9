import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import { rateEvent, selectRule, type RatableEvent } from "./rate-event.js";
import { rule } from "../../../test/fixtures/pricing-rules.js";

const event = (fields: Partial<RatableEvent> = {}): RatableEvent => ({
  metric: "m",
  quantity: new Big(1),
  feeAmount: null,
  appliedRate: null,
  counterparty: null,
  counterpartySide: null,
  pair: null,
  ...fields,
});

describe("rateEvent", () => {
  const cases: Array<{
    name: string;
    rule: PricingRule;
    event: RatableEvent;
    capUsed?: string;
    charge: string;
    rate: string | null;
    capped: string;
  }> = [
    {
      name: "a flat rule charges quantity times the per-unit amount",
      rule: rule({ amount: "20.00" }),
      event: event({ quantity: new Big(3) }),
      charge: "60",
      rate: "20",
      capped: "60",
    },
    {
      name: "a percentage rule charges quantity times rate",
      rule: rule({ model: "percentage", rate: "0.05" }),
      event: event({ quantity: new Big("1234.56") }),
      charge: "61.728",
      rate: "0.05",
      capped: "61.728",
    },
    {
      name: "a fee is billed as it is and the rate is ignored",
      rule: rule({ model: "percentage", rate: "0" }),
      event: event({ quantity: new Big(1000), feeAmount: new Big("12.34") }),
      charge: "12.34",
      rate: null,
      capped: "0",
    },
    {
      name: "an event's applied_rate overrides the rule's price",
      rule: rule({ amount: "20" }),
      event: event({ quantity: new Big(2), appliedRate: new Big("7.5") }),
      charge: "15",
      rate: "7.5",
      capped: "15",
    },
    {
      name: "keeps twelve fractional digits, rounding half-even",
      rule: rule({ model: "percentage", rate: "0.0000000000005" }),
      event: event({ quantity: new Big(1) }),
      charge: "0",
      rate: "0.0000000000005",
      capped: "0",
    },
    {
      name: "keeps twelve fractional digits on a tiny rate",
      rule: rule({ model: "percentage", rate: "0.0000000000015" }),
      event: event({ quantity: new Big(1) }),
      charge: "0.000000000002",
      rate: "0.0000000000015",
      capped: "0.000000000002",
    },
    {
      name: "charges the remainder to the event that crosses the cap",
      rule: rule({ amount: "10", monthly_cap: "25.00" }),
      event: event({ quantity: new Big(1) }),
      capUsed: "20",
      charge: "5",
      rate: "10",
      capped: "5",
    },
    {
      name: "charges 0 once the cap is used up",
      rule: rule({ amount: "10", monthly_cap: "25.00" }),
      event: event({ quantity: new Big(1) }),
      capUsed: "25",
      charge: "0",
      rate: "10",
      capped: "0",
    },
    {
      name: "does not cap a fee",
      rule: rule({ amount: "10", monthly_cap: "25.00" }),
      event: event({ feeAmount: new Big(100) }),
      capUsed: "25",
      charge: "100",
      rate: null,
      capped: "0",
    },
    {
      name: "a zero quantity costs nothing",
      rule: rule({ amount: "20" }),
      event: event({ quantity: new Big(0) }),
      charge: "0",
      rate: "20",
      capped: "0",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const rating = rateEvent(c.event, c.rule, new Big(c.capUsed ?? 0));
      assert.equal(rating.charge.toFixed(), c.charge);
      assert.equal(rating.appliedRate === null ? null : rating.appliedRate.toFixed(), c.rate);
      assert.equal(rating.cappedCharge.toFixed(), c.capped);
    });
  }
});

describe("selectRule", () => {
  const unscoped = rule({ id: "unscoped", amount: "1" });
  const acme = rule({ id: "acme", amount: "2", counterparty: "acme" });
  const acmeMaker = rule({ id: "acme-maker", amount: "3", counterparty: "acme", counterparty_side: "maker" });
  const other = rule({ id: "other-metric", metric: "x", amount: "9" });
  const rules = [unscoped, acme, acmeMaker, other];

  it("picks the unscoped rule for an event without counterparty", () => {
    assert.equal(selectRule(rules, event())?.id, "unscoped");
  });
  it("picks the counterparty rule over the unscoped one", () => {
    assert.equal(selectRule(rules, event({ counterparty: "acme" }))?.id, "acme");
  });
  it("picks the most specific rule whose scope fields all match", () => {
    assert.equal(selectRule(rules, event({ counterparty: "acme", counterpartySide: "maker" }))?.id, "acme-maker");
    assert.equal(selectRule(rules, event({ counterparty: "acme", counterpartySide: "taker" }))?.id, "acme");
  });
  it("falls back to the unscoped rule for another counterparty", () => {
    assert.equal(selectRule(rules, event({ counterparty: "globex" }))?.id, "unscoped");
  });
  it("finds nothing when only scoped rules exist and none matches", () => {
    assert.equal(selectRule([acme], event({ counterparty: "globex" })), undefined);
  });
  it("finds nothing for a metric without rules", () => {
    assert.equal(selectRule(rules, event({ metric: "nope" })), undefined);
  });
  it("prefers the rule added first among equally specific ones", () => {
    const second = rule({ id: "second", amount: "5" });
    assert.equal(selectRule([unscoped, second], event())?.id, "unscoped");
  });
});
