import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import { type PRICERS, price, priceCharge, pricerFor, type RatableEvent } from "./pricers.js";
import { ratable, rule } from "../../../test/fixtures/pricing-rules.js";
import { fromUnits, referenceTotal, type RuleSpec, toUnits } from "../../../test/support/rating-reference.js";
import { MAX_RULE_TIERS } from "../contracts/pricing-rule.js";

const event = ratable;

const totals = (capped = "0", quantity = "0") => ({ capped: new Big(capped), quantity: new Big(quantity) });

interface PricerCase {
  name: string;
  rule: PricingRule;
  event: RatableEvent;
  kind: "usage" | "fee";
  charge: string;
  rate: string | null;
  /** The rule's running quantity in the period before the event (models priced on it). */
  sofar?: string;
}

const tiers = (...list: [string | null, string, string?][]) =>
  list.map(([up_to, unit_amount, flat_amount]) => ({ up_to, unit_amount, flat_amount: flat_amount ?? null }));
/** 0.10 a unit up to 1,000, then 0.08 up to 10,000, then 0.05; a flat 5 when the period enters the second tier. */
const threeTiers = tiers(["1000", "0.10"], ["10000", "0.08", "5"], [null, "0.05"]);
const graduated = rule({ model: "graduated", tiers: threeTiers });
const volume = rule({ model: "volume", tiers: threeTiers });
const pack = rule({ model: "package", amount: "10", package_size: "1000" });
const card = rule({ model: "percentage", rate: "0.029", fixed_fee: "0.30" });

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
    {
      name: "2.9 % + 0.30: the fixed fee is added to each event",
      rule: card,
      event: event({ quantity: new Big("100") }),
      kind: "usage",
      charge: "3.2",
      rate: "0.029",
    },
    {
      name: "the fixed fee alone on a zero amount",
      rule: card,
      event: event({ quantity: new Big(0) }),
      kind: "usage",
      charge: "0.3",
      rate: "0.029",
    },
    {
      name: "min_fee lifts a small event's charge, fixed fee included",
      rule: rule({ model: "percentage", rate: "0.01", fixed_fee: "0.10", min_fee: "0.50" }),
      event: event({ quantity: new Big("20") }),
      kind: "usage",
      charge: "0.5",
      rate: "0.01",
    },
    {
      name: "max_fee bounds a large event's charge (2.35 % capped at 4,000 per event)",
      rule: rule({ model: "percentage", rate: "0.0235", max_fee: "4000" }),
      event: event({ quantity: new Big("1000000") }),
      kind: "usage",
      charge: "4000",
      rate: "0.0235",
    },
    {
      name: "an event's applied rate replaces the rule's; its fee and bounds still apply",
      rule: rule({ model: "percentage", rate: "0.029", fixed_fee: "0.30", max_fee: "1" }),
      event: event({ quantity: new Big("10"), appliedRate: new Big("0.05") }),
      kind: "usage",
      charge: "0.8",
      rate: "0.05",
    },
    {
      name: "the product is rounded to 12 decimals before the fee is added",
      rule: rule({ model: "percentage", rate: "0.000000000001", fixed_fee: "0.01" }),
      event: event({ quantity: new Big("0.5") }),
      kind: "usage",
      charge: "0.01",
      rate: "0.000000000001",
    },
  ],
  graduated: [
    {
      name: "inside the first tier: units at its price",
      rule: graduated,
      event: event({ quantity: new Big(300) }),
      kind: "usage",
      charge: "30",
      rate: null,
    },
    {
      name: "crossing into the second tier: each unit at its tier's price, and the tier's flat amount once",
      rule: graduated,
      event: event({ quantity: new Big(500) }),
      sofar: "800",
      kind: "usage",
      charge: "49",
      rate: null,
    },
    {
      name: "inside a tier already entered: no flat amount again",
      rule: graduated,
      event: event({ quantity: new Big(100) }),
      sofar: "2000",
      kind: "usage",
      charge: "8",
      rate: null,
    },
    {
      name: "up_to is inclusive: the 1,000th unit is the first tier's, the 1,001st enters the second",
      rule: graduated,
      event: event({ quantity: new Big(2) }),
      sofar: "999",
      kind: "usage",
      charge: "5.18",
      rate: null,
    },
    {
      name: "one event across all three tiers",
      rule: graduated,
      event: event({ quantity: new Big(12000) }),
      kind: "usage",
      charge: "925",
      rate: null,
    },
    {
      name: "a zero quantity costs nothing and enters no tier",
      rule: graduated,
      event: event({ quantity: new Big(0) }),
      sofar: "1000",
      kind: "usage",
      charge: "0",
      rate: null,
    },
    {
      name: "decimal quantities are priced exactly",
      rule: graduated,
      event: event({ quantity: new Big("0.5") }),
      sofar: "999.75",
      kind: "usage",
      charge: "5.045",
      rate: null,
    },
  ],
  volume: [
    {
      name: "the period's whole quantity at the price of the tier it reaches",
      rule: volume,
      event: event({ quantity: new Big(300) }),
      kind: "usage",
      charge: "30",
      rate: null,
    },
    {
      name: "reaching a cheaper tier reprices every earlier unit: the event's charge may be negative",
      rule: volume,
      event: event({ quantity: new Big(1) }),
      sofar: "1000",
      kind: "usage",
      charge: "-14.92",
      rate: null,
    },
    {
      name: "inside the top tier: the units at its price",
      rule: volume,
      event: event({ quantity: new Big(1000) }),
      sofar: "20000",
      kind: "usage",
      charge: "50",
      rate: null,
    },
  ],
  package: [
    {
      name: "1,500 units at 10 per started 1,000: 20",
      rule: pack,
      event: event({ quantity: new Big(1500) }),
      kind: "usage",
      charge: "20",
      rate: null,
    },
    {
      name: "an event inside a package already started costs nothing",
      rule: pack,
      event: event({ quantity: new Big(400) }),
      sofar: "1500",
      kind: "usage",
      charge: "0",
      rate: null,
    },
    {
      name: "the unit that starts a package pays for it",
      rule: pack,
      event: event({ quantity: new Big("0.001") }),
      sofar: "2000",
      kind: "usage",
      charge: "10",
      rate: null,
    },
    {
      name: "exactly a whole number of packages",
      rule: pack,
      event: event({ quantity: new Big(3000) }),
      kind: "usage",
      charge: "30",
      rate: null,
    },
  ],
};

describe("pricers", () => {
  for (const [model, cases] of Object.entries(pricerCases)) {
    for (const c of cases) {
      it(`${model}: ${c.name}`, () => {
        assert.equal(c.rule.model, model);
        const priced = pricerFor(c.event, c.rule)(c.event, c.rule, totals("0", c.sofar));
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

describe("tier parts: the event's share of each tier of a graduated or volume rule", () => {
  /** [up_to, unit, flat, quantity, amount] of each part, decimals as exact strings. */
  type PartRow = [string | null, string, string | null, string, string];
  const rows = (priced: ReturnType<typeof priceCharge>): PartRow[] =>
    (priced.tiers ?? []).map((p) => [
      p.upTo === null ? null : p.upTo.toFixed(),
      p.unit.toFixed(),
      p.flat === null ? null : p.flat.toFixed(),
      p.quantity.toFixed(),
      p.amount.toFixed(),
    ]);
  const cases: { name: string; rule: PricingRule; sofar: string; quantity: string; parts: PartRow[] }[] = [
    {
      name: "graduated, within the first tier",
      rule: graduated,
      sofar: "100",
      quantity: "300",
      parts: [["1000", "0.1", null, "300", "30"]],
    },
    {
      name: "graduated, across three tiers (the second's flat amount on entering it)",
      rule: graduated,
      sofar: "900",
      quantity: "9200",
      parts: [
        ["1000", "0.1", null, "100", "10"],
        ["10000", "0.08", "5", "9000", "725"],
        [null, "0.05", null, "100", "5"],
      ],
    },
    {
      name: "graduated, each tier's share rounded half-even to 12 decimals on its own",
      rule: rule({ model: "graduated", tiers: tiers(["1", "0.0000000000005"], [null, "0.0000000000005"]) }),
      sofar: "0",
      quantity: "2",
      parts: [
        ["1", "0.0000000000005", null, "1", "0"],
        [null, "0.0000000000005", null, "1", "0"],
      ],
    },
    {
      name: "volume, within one tier: one part",
      rule: volume,
      sofar: "200",
      quantity: "300",
      parts: [["1000", "0.1", null, "300", "30"]],
    },
    {
      name: "volume, moving the period to the next tier: the tier before gives back, the tier after takes all",
      rule: volume,
      sofar: "900",
      quantity: "200",
      parts: [
        ["1000", "0.1", null, "-900", "-90"],
        ["10000", "0.08", "5", "1100", "93"],
      ],
    },
    {
      name: "volume, the period's first event",
      rule: volume,
      sofar: "0",
      quantity: "20000",
      parts: [[null, "0.05", null, "20000", "1000"]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const priced = priceCharge(event({ quantity: new Big(c.quantity) }), c.rule, totals("0", c.sofar));
      assert.deepEqual(rows(priced), c.parts);
      const sum = (priced.tiers ?? []).reduce((s, p) => s.plus(p.amount), new Big(0));
      assert.equal(sum.toFixed(), priced.charge.toFixed(), "the parts sum to the charge");
    });
  }

  it("a package rule, a flat rule and a fee have no parts", () => {
    assert.equal(priceCharge(event({ quantity: new Big(5) }), pack, totals()).tiers, undefined);
    assert.equal(priceCharge(event({ quantity: new Big(5) }), rule({ amount: "1" }), totals()).tiers, undefined);
    assert.equal(
      priceCharge(event({ quantity: new Big(5), feeAmount: new Big(2) }), graduated, totals()).tiers,
      undefined,
    );
  });

  it("a capped graduated event keeps its uncapped parts: they sum to the charge before the cap", () => {
    const capped = rule({ model: "graduated", tiers: threeTiers, monthly_cap: "50" });
    const priced = priceCharge(event({ quantity: new Big(600) }), capped, totals("0", "0"));
    assert.equal(priced.charge.toFixed(), "50");
    assert.deepEqual(rows(priced), [["1000", "0.1", null, "600", "60"]]);
  });

  it("the parts of any sequence of events sum to each event's uncapped charge (many quantities, both models)", () => {
    const quantities = ["0.5", "1", "999", "0.000000000001", "8000", "1500", "3", "123456.789"];
    for (const r of [
      graduated,
      volume,
      rule({ model: "graduated", tiers: tiers(["3", "0.333333333333", "0.1"], [null, "0.0000000000007"]) }),
    ]) {
      let sofar = new Big(0);
      for (const q of quantities) {
        const priced = priceCharge(event({ quantity: new Big(q) }), r, totals("0", sofar.toFixed()));
        const parts = priced.tiers ?? [];
        assert.equal(parts.reduce((s, p) => s.plus(p.amount), new Big(0)).toFixed(), priced.charge.toFixed());
        assert.equal(parts.reduce((s, p) => s.plus(p.quantity), new Big(0)).toFixed(), q);
        sofar = sofar.plus(q);
      }
    }
  });
});

describe("a rule with the most tiers a rule may have (MAX_RULE_TIERS)", () => {
  // Tier i (from 0) holds 7 units at 0.001·(i+1) plus a flat 0.000000000003·i, the last unbounded: prices with 12
  // decimals whose shares round, so that every tier's own rounding shows in the totals.
  const many = Array.from({ length: MAX_RULE_TIERS }, (_, i) => ({
    up_to: i === MAX_RULE_TIERS - 1 ? null : String(7 * (i + 1)),
    unit_amount: `0.${String(i + 1).padStart(3, "0")}333333333`,
    flat_amount: i % 3 === 0 ? null : `0.${String(3 * i).padStart(12, "0")}`,
  }));
  const spec = (model: "graduated" | "volume"): RuleSpec => ({
    key: "r",
    metric: "api_calls",
    model,
    price: "0",
    cap: null,
    counterparty: null,
    counterpartySide: null,
    tiers: many.map((t) => ({ upTo: t.up_to, unit: t.unit_amount, flat: t.flat_amount })),
  });
  const quantities = ["3", "4", "0.5", "700.25", "1", "10", "300", "0.000000000001", "1000", "17.5"];

  for (const model of ["graduated", "volume"] as const) {
    it(`${model}: every event is charged what the BigInt reference's month total grows by, its parts sum to it`, () => {
      const r = rule({ model, tiers: many });
      let sofar = 0n;
      for (const q of quantities) {
        const priced = priceCharge(event({ quantity: new Big(q) }), r, totals("0", fromUnits(sofar)));
        const after = sofar + toUnits(q);
        const expected = new Big(fromUnits(referenceTotal(spec(model), after) - referenceTotal(spec(model), sofar)));
        assert.equal(priced.charge.toFixed(), expected.toFixed(), `${model}: ${q} after ${fromUnits(sofar)}`);
        const parts = priced.tiers ?? [];
        assert.equal(parts.reduce((s, p) => s.plus(p.amount), new Big(0)).toFixed(), expected.toFixed());
        assert.equal(parts.reduce((s, p) => s.plus(p.quantity), new Big(0)).toFixed(), q);
        sofar = after;
      }
    });
  }
});
