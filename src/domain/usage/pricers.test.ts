import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import { type PRICERS, price, priceCharge, pricerFor, type RatableEvent } from "./pricers.js";
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

const totals = (capped = "0") => ({ capped: new Big(capped) });

interface PricerCase {
  name: string;
  rule: PricingRule;
  event: RatableEvent;
  kind: "usage" | "fee";
  charge: string;
  rate: string | null;
}

/** Each pricer on its own: no step after pricing runs here. */
const pricerCases: Record<keyof typeof PRICERS, PricerCase[]> = {
  flat: [
    {
      name: "quantity times the per-unit amount",
      rule: rule({ amount: "0.25" }),
      event: event({ quantity: new Big(3) }),
      kind: "usage",
      charge: "0.75",
      rate: "0.25",
    },
    {
      name: "an event's applied rate replaces the amount",
      rule: rule({ amount: "20" }),
      event: event({ quantity: new Big(2), appliedRate: new Big("7.5") }),
      kind: "usage",
      charge: "15",
      rate: "7.5",
    },
    {
      name: "the product is rounded half-even to 12 decimals",
      rule: rule({ amount: "0.000000000001" }),
      event: event({ quantity: new Big("0.5") }),
      kind: "usage",
      charge: "0",
      rate: "0.000000000001",
    },
    {
      name: "a capped rule's pricer ignores the cap (a step after pricing applies it)",
      rule: rule({ amount: "10", monthly_cap: "5" }),
      event: event({ quantity: new Big(2) }),
      kind: "usage",
      charge: "20",
      rate: "10",
    },
  ],
  percentage: [
    {
      name: "quantity (a notional) times the rate",
      rule: rule({ model: "percentage", rate: "0.05" }),
      event: event({ quantity: new Big("1234.56") }),
      kind: "usage",
      charge: "61.728",
      rate: "0.05",
    },
    {
      name: "a rate of 0 charges 0",
      rule: rule({ model: "percentage", rate: "0" }),
      event: event({ quantity: new Big(1000) }),
      kind: "usage",
      charge: "0",
      rate: "0",
    },
  ],
};

describe("pricers", () => {
  for (const [model, cases] of Object.entries(pricerCases)) {
    for (const c of cases) {
      it(`${model}: ${c.name}`, () => {
        assert.equal(c.rule.model, model);
        const priced = pricerFor(c.event, c.rule)(c.event, c.rule, totals());
        assert.equal(priced.kind, c.kind);
        assert.equal(priced.charge.toFixed(), c.charge);
        assert.equal(priced.cappedCharge.toFixed(), c.charge);
        assert.equal(priced.appliedRate?.toFixed() ?? null, c.rate);
      });
    }
  }

  it("a fee is billed as sent, under any model, and never counts against a cap", () => {
    for (const r of [rule({ amount: "3" }), rule({ model: "percentage", rate: "0.1", monthly_cap: "1" })]) {
      const e = event({ quantity: new Big(1000), feeAmount: new Big("12.34") });
      const priced = pricerFor(e, r)(e, r, totals());
      assert.deepEqual(
        [priced.kind, priced.charge.toFixed(), priced.cappedCharge.toFixed(), priced.appliedRate],
        ["fee", "12.34", "0", null],
      );
    }
  });
});

describe("price: the pricer, then the steps after pricing", () => {
  const cases: Array<{
    name: string;
    rule: PricingRule;
    event: RatableEvent;
    used: string;
    charge: string;
    after: string;
  }> = [
    {
      name: "no cap: the pricer's charge, added to the running total",
      rule: rule({ amount: "2" }),
      event: event({ quantity: new Big(3) }),
      used: "100",
      charge: "6",
      after: "106",
    },
    {
      name: "under the cap: charged in full",
      rule: rule({ amount: "2", monthly_cap: "10" }),
      event: event({ quantity: new Big(3) }),
      used: "4",
      charge: "6",
      after: "10",
    },
    {
      name: "crossing the cap: charged the room left",
      rule: rule({ amount: "2", monthly_cap: "10" }),
      event: event({ quantity: new Big(3) }),
      used: "7.5",
      charge: "2.5",
      after: "10",
    },
    {
      name: "past the cap: charged 0",
      rule: rule({ amount: "2", monthly_cap: "10" }),
      event: event({ quantity: new Big(3) }),
      used: "12",
      charge: "0",
      after: "12",
    },
    {
      name: "a fee under a capped rule: billed in full, the running total unchanged",
      rule: rule({ amount: "2", monthly_cap: "10" }),
      event: event({ quantity: new Big(3), feeAmount: new Big("50") }),
      used: "10",
      charge: "50",
      after: "10",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { priced, totals: next } = price(c.event, c.rule, totals(c.used));
      assert.equal(priced.charge.toFixed(), c.charge);
      assert.equal(next.capped.toFixed(), c.after);
    });
  }
});

describe("priceCharge: the pricer, then every step after it", () => {
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
      const rating = priceCharge(c.event, c.rule, totals(c.capUsed));
      assert.equal(rating.charge.toFixed(), c.charge);
      assert.equal(rating.appliedRate === null ? null : rating.appliedRate.toFixed(), c.rate);
      assert.equal(rating.cappedCharge.toFixed(), c.capped);
    });
  }
});
