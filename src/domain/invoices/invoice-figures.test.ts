import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big, CHARGE_DP, divideToChargePrecision, roundToMinorUnit } from "../kernel/money.js";
import { formatMoney } from "../kernel/money-format.js";
import { billInvoice, type BilledInvoice, type BilledLine } from "./invoice-figures.js";
import { minimumTermsOf } from "../contracts/minimum-terms.js";
import { addCharge, type Charge, type Line, lineIdentity, projectLines } from "./invoice-lines.js";
import { feeCharge as fee, linesOf, usageCharge as usage } from "../../../test/fixtures/invoice-charges.js";
import { rule as baseRule } from "../../../test/fixtures/pricing-rules.js";

// Every figure an invoice shows, derived from its stored exact sums when it is read.

const rule = (fields: Partial<PricingRule>): PricingRule => baseRule({ metric: "wire", ...fields });

const wire = rule({ id: "wire", metric: "wire", amount: "20.00" });
const card = rule({ id: "card", metric: "card", model: "percentage", rate: "0.029" });
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
const minimumRule = rule({
  id: "min",
  name: "Monthly minimum",
  type: "minimum",
  metric: null,
  amount: "1000.00",
  frequency: "monthly",
});

/** The one line the charges make. */
const lineOf = (...charges: Charge[]): Line => {
  const lines = [...linesOf(charges).values()];
  assert.equal(lines.length, 1);
  return lines[0]!;
};

/** A stored usage line of the given exact total, on its own rule (so that several never share a key). */
let nextRule = 0;
const usageLine = (chargeTotal: string, fields: Partial<Line> = {}): Line => {
  // Zero-padded, so that lines made in a case sort (by description, then key) in the order they are written.
  const ruleId = `r${String(nextRule++).padStart(4, "0")}`;
  return {
    key: `usage|${ruleId}|1`,
    kind: "usage",
    ruleId,
    metric: "wire",
    description: `wire usage (${ruleId})`,
    quantity: new Big(1),
    rate: new Big(1),
    chargeTotal: new Big(chargeTotal),
    cappedTotal: new Big(chargeTotal),
    tiers: null,
    ...fields,
  };
};

const feeLine = (quantity: string, chargeTotal: string): Line => lineOf(fee(wire, quantity, chargeTotal));

/** A billed line with its decimals as strings, for comparing. */
const plain = (l: BilledLine) => ({
  kind: l.kind,
  ruleId: l.ruleId,
  metric: l.metric,
  description: l.description,
  quantity: l.quantity.toFixed(),
  unitPrice: l.unitPrice.toFixed(),
  amount: l.amount.toFixed(),
});

const figures = (b: BilledInvoice) => ({
  subtotal: b.subtotal.toFixed(),
  tax: b.tax.toFixed(),
  total: b.total.toFixed(),
});

/** The one billed line of a single stored line. */
const billOne = (line: Line, currency: string): BilledLine => {
  const billed = billInvoice([line], null, currency);
  assert.equal(billed.lines.length, 1);
  return billed.lines[0]!;
};

describe("billInvoice: line amounts", () => {
  const cases: Array<{ name: string; line: Line; currency: string; amount: string; unitPrice: string }> = [
    {
      name: "loses no cent: three charges of half a cent make 0.015, billed as 0.02",
      line: lineOf(
        usage(card, "1", "0.005", "0.005"),
        usage(card, "1", "0.005", "0.005"),
        usage(card, "1", "0.005", "0.005"),
      ),
      currency: "USD",
      amount: "0.02",
      unitPrice: "0.005",
    },
    {
      name: "rounds half-even down when the cent below is even: 0.125 USD is 0.12",
      line: lineOf(usage(card, "100", "0.029", "0.125")),
      currency: "USD",
      amount: "0.12",
      unitPrice: "0.029",
    },
    {
      name: "rounds half-even up when the cent below is odd: 0.135 USD is 0.14",
      line: lineOf(usage(card, "100", "0.029", "0.135")),
      currency: "USD",
      amount: "0.14",
      unitPrice: "0.029",
    },
    {
      name: "rounds a twelve-digit exact total once, to cents",
      line: lineOf(usage(card, "1", "0.029", "0.123456789012"), usage(card, "1", "0.029", "0.000000000001")),
      currency: "USD",
      amount: "0.12",
      unitPrice: "0.029",
    },
    {
      name: "rounds yen lines to whole yen, half to even (2.5 is 2)",
      line: lineOf(usage(wire, "1", "2.5", "2.5")),
      currency: "JPY",
      amount: "2",
      unitPrice: "2.5",
    },
    {
      name: "rounds yen lines to whole yen, half to even (3.5 is 4)",
      line: lineOf(usage(wire, "1", "3.5", "3.5")),
      currency: "JPY",
      amount: "4",
      unitPrice: "3.5",
    },
    {
      name: "rounds dinar lines to three digits, half up from an odd digit (1.0015 is 1.002)",
      line: lineOf(usage(card, "1", "0.029", "1.0015")),
      currency: "KWD",
      amount: "1.002",
      unitPrice: "0.029",
    },
    {
      name: "rounds dinar lines to three digits, half down to an even digit (1.0025 is 1.002)",
      line: lineOf(usage(card, "1", "0.029", "1.0025")),
      currency: "KWD",
      amount: "1.002",
      unitPrice: "0.029",
    },
    {
      name: "bills an exact total already in cents as is",
      line: lineOf(usage(wire, "1", "20", "20"), usage(wire, "2", "20", "40"), usage(wire, "4", "20", "80")),
      currency: "USD",
      amount: "140",
      unitPrice: "20",
    },
    {
      name: "shows a usage line's rate as its unit price, not amount over quantity (a capped line)",
      line: lineOf(usage(wire, "1", "10", "10"), usage(wire, "1", "10", "5"), usage(wire, "1", "10", "0")),
      currency: "USD",
      amount: "15",
      unitPrice: "10",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const billed = billOne(c.line, c.currency);
      assert.deepEqual(plain(billed), {
        kind: c.line.kind,
        ruleId: c.line.ruleId,
        metric: c.line.metric,
        description: c.line.description,
        quantity: c.line.quantity.toFixed(),
        unitPrice: c.unitPrice,
        amount: c.amount,
      });
    });
  }
});

describe("billInvoice: fee unit prices", () => {
  const cases: Array<{ name: string; line: Line; currency: string; amount: string; unitPrice: string }> = [
    {
      name: "is the amount over the quantity",
      line: lineOf(fee(wire, "1", "10"), fee(wire, "2", "5")),
      currency: "USD",
      amount: "15",
      unitPrice: "5",
    },
    {
      name: "is taken over the whole line when fees of several rules of one metric share it",
      line: lineOf(
        fee(wire, "1", "10"),
        fee(rule({ id: "wire-acme", metric: "wire", counterparty: "acme" }), "1", "20"),
      ),
      currency: "USD",
      amount: "30",
      unitPrice: "15",
    },
    {
      name: "keeps twelve digits when the division does not end",
      line: feeLine("3", "10"),
      currency: "USD",
      amount: "10",
      unitPrice: "3.333333333333",
    },
    {
      name: "rounds the twelfth digit half-even",
      line: feeLine("3", "2.00"),
      currency: "USD",
      amount: "2",
      unitPrice: "0.666666666667",
    },
    {
      name: "divides the rounded line amount, not the exact charges",
      line: feeLine("10000", "12.345"),
      currency: "USD",
      amount: "12.34",
      unitPrice: "0.001234",
    },
    {
      name: "is 0 for a fee line of zero quantity",
      line: feeLine("0", "12.34"),
      currency: "USD",
      amount: "12.34",
      unitPrice: "0",
    },
    {
      name: "divides the amount rounded to whole yen",
      line: feeLine("4", "10.5"),
      currency: "JPY",
      amount: "10",
      unitPrice: "2.5",
    },
    {
      name: "divides the amount rounded to three dinar digits",
      line: feeLine("3", "1.0015"),
      currency: "KWD",
      amount: "1.002",
      unitPrice: "0.334",
    },
    {
      name: "rounds once: 0.01 over 6666666666.667 is 1e-12 (1.49999…e-12), not 2e-12",
      line: feeLine("6666666666.667", "0.01"),
      currency: "USD",
      amount: "0.01",
      unitPrice: "0.000000000001",
    },
    {
      name: "rounds once a large fee line: 66666666.67 over 6666666666.667 is 0.01",
      line: lineOf(fee(wire, "6666666666.667", new Big("0.01").times("6666666666.667"))),
      currency: "USD",
      amount: "66666666.67",
      unitPrice: "0.01",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const billed = billOne(c.line, c.currency);
      assert.deepEqual(plain(billed), {
        kind: "fee",
        ruleId: c.line.ruleId,
        metric: "wire",
        description: "wire fees",
        quantity: c.line.quantity.toFixed(),
        unitPrice: c.unitPrice,
        amount: c.amount,
      });
    });
  }

  /** What dividing at big.js's 24 places and then rounding to 12 gives: rounding twice. */
  const roundedTwice = (dividend: Big, divisor: Big): Big => dividend.div(divisor).round(CHARGE_DP, Big.roundHalfEven);

  it("prices a summed fee line (0.01 × 6666666666.667) by dividing its rounded amount once, to 12 digits", () => {
    const quantity = new Big("6666666666.667");
    const chargeTotal = new Big("0.01").times(quantity);
    assert.equal(chargeTotal.toFixed(), "66666666.66667");
    const line = lineOf(fee(wire, quantity.div(2), chargeTotal.div(2)), fee(wire, quantity.div(2), chargeTotal.div(2)));
    assert.equal(line.chargeTotal.toFixed(), "66666666.66667");

    const billed = billOne(line, "USD");
    const once = divideToChargePrecision(roundToMinorUnit(chargeTotal, "USD"), quantity);
    assert.equal(billed.unitPrice.toFixed(), once.toFixed());
    // 66666666.67 / 6666666666.667 = 0.0100000000004994…: one rounding to 12 digits gives 0.01. (Rounding twice
    // happens to agree here; the next test is the quotient on which it does not.)
    assert.equal(billed.unitPrice.toFixed(), "0.01");
  });

  it("does not round a fee unit price twice where that would move the twelfth digit", () => {
    const quantity = new Big("6666666666.667");
    const billed = billOne(lineOf(fee(wire, quantity, "0.01")), "USD");
    assert.equal(billed.unitPrice.toFixed(), divideToChargePrecision(new Big("0.01"), quantity).toFixed());
    assert.equal(billed.unitPrice.toFixed(), "0.000000000001");
    assert.equal(
      roundedTwice(new Big("0.01"), quantity).toFixed(),
      "0.000000000002",
      "the quotient on which rounding twice differs",
    );
  });
});

describe("billInvoice: subscription and one-time lines", () => {
  const cases: Array<{ name: string; rule: PricingRule; currency: string; amount: string }> = [
    {
      name: "bills a subscription at its monthly amount, quantity 1, unit price the amount",
      rule: subscription,
      currency: "USD",
      amount: "99.5",
    },
    { name: "bills a one-time fee at its amount", rule: setup, currency: "USD", amount: "250" },
    {
      name: "rounds a subscription amount finer than the minor unit half-even (9.125 is 9.12)",
      rule: rule({ id: "odd", name: "Odd", type: "subscription", metric: null, amount: "9.125", frequency: "monthly" }),
      currency: "USD",
      amount: "9.12",
    },
    {
      name: "rounds a yen subscription to whole yen (1000.5 is 1000)",
      rule: rule({
        id: "yen",
        name: "Yen plan",
        type: "subscription",
        metric: null,
        amount: "1000.5",
        frequency: "monthly",
        currency: "JPY",
      }),
      currency: "JPY",
      amount: "1000",
    },
    {
      name: "rounds a dinar one-time fee to three digits (12.3455 is 12.346)",
      rule: rule({
        id: "kwd",
        name: "Dinar setup",
        type: "one_time",
        metric: null,
        amount: "12.3455",
        currency: "KWD",
      }),
      currency: "KWD",
      amount: "12.346",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { lines, minimum } = projectLines([], [c.rule], new Set());
      const billed = billInvoice(lines.values(), minimum, c.currency);
      assert.deepEqual(billed.lines.map(plain), [
        {
          kind: c.rule.type,
          ruleId: c.rule.id,
          metric: null,
          description: c.rule.name,
          quantity: "1",
          unitPrice: c.amount,
          amount: c.amount,
        },
      ]);
      assert.equal(billed.total.toFixed(), c.amount);
    });
  }
});

describe("billInvoice: the monthly minimum true-up", () => {
  const cases: Array<{
    name: string;
    others: Line[];
    minimum: string | null;
    currency?: string;
    trueUp: string | null;
    total: string;
  }> = [
    {
      name: "adds the shortfall when the other lines fall short of the minimum",
      others: [usageLine("400"), usageLine("0.02")],
      minimum: "1000",
      trueUp: "599.98",
      total: "1000",
    },
    {
      name: "adds the whole minimum when there is nothing else",
      others: [],
      minimum: "1000",
      trueUp: "1000",
      total: "1000",
    },
    {
      name: "adds nothing when the other lines reach the minimum exactly",
      others: [usageLine("600"), usageLine("400")],
      minimum: "1000",
      trueUp: null,
      total: "1000",
    },
    {
      name: "adds nothing when the other lines exceed the minimum (negative shortfall)",
      others: [usageLine("1200")],
      minimum: "1000",
      trueUp: null,
      total: "1200",
    },
    {
      name: "adds nothing when there is no minimum",
      others: [usageLine("10")],
      minimum: null,
      trueUp: null,
      total: "10",
    },
    { name: "adds nothing for a minimum of 0 (zero shortfall)", others: [], minimum: "0", trueUp: null, total: "0" },
    {
      name: "counts subscription lines, not one-time fees, towards the minimum",
      others: [
        ...projectLines(
          [...linesOf([usage(wire, "3", "20", "60")]).values()],
          [wire, subscription, setup],
          new Set(),
        ).lines.values(),
      ],
      minimum: "1000",
      trueUp: "840.5",
      total: "1250",
    },
    {
      name: "counts fee lines towards the minimum",
      others: [feeLine("3", "100.004")],
      minimum: "1000",
      trueUp: "900",
      total: "1000",
    },
    {
      name: "rounds a minimum with sub-cent digits half-even before comparing",
      others: [usageLine("999.99")],
      minimum: "1000.005",
      trueUp: "0.01",
      total: "1000",
    },
    {
      name: "compares the minimum with the rounded line amounts, not the exact charge totals",
      others: [usageLine("0.005"), usageLine("0.005")],
      minimum: "0.01",
      trueUp: "0.01",
      total: "0.01",
    },
    {
      name: "rounds a yen minimum to whole yen",
      others: [usageLine("100")],
      minimum: "1000.5",
      currency: "JPY",
      trueUp: "900",
      total: "1000",
    },
    {
      name: "takes a yen line at its whole-yen amount",
      others: [usageLine("100.5")],
      minimum: "1000",
      currency: "JPY",
      trueUp: "900",
      total: "1000",
    },
    {
      name: "rounds a dinar minimum and lines to three digits",
      others: [usageLine("0.1235")],
      minimum: "10.0005",
      currency: "KWD",
      trueUp: "9.876",
      total: "10",
    },
    {
      name: "adds no dinar true-up when the rounded amounts reach the minimum though the exact charges fall short",
      others: [usageLine("9.9995")],
      minimum: "10",
      currency: "KWD",
      trueUp: null,
      total: "10",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const billed = billInvoice(c.others, c.minimum === null ? null : new Big(c.minimum), c.currency ?? "USD");
      const trueUps = billed.lines.filter((l) => l.kind === "minimum");
      assert.equal(billed.lines.length, c.others.length + (c.trueUp === null ? 0 : 1));
      if (c.trueUp === null) {
        assert.equal(trueUps.length, 0);
      } else {
        const currency = c.currency ?? "USD";
        const committed = roundToMinorUnit(new Big(c.minimum!), currency);
        const counted = committed.minus(c.trueUp);
        assert.deepEqual(trueUps.map(plain), [
          {
            kind: "minimum",
            ruleId: null,
            metric: null,
            description: `Monthly minimum: ${formatMoney(committed.toFixed(), currency)} committed, ${formatMoney(counted.toFixed(), currency)} counted`,
            quantity: "1",
            unitPrice: c.trueUp,
            amount: c.trueUp,
          },
        ]);
        assert.equal(billed.lines.at(-1)?.kind, "minimum", "the true-up comes last");
      }
      assert.deepEqual(figures(billed), { subtotal: c.total, tax: "0", total: c.total });
    });
  }

  it("keeps the true-up equal to what is still short after later usage", () => {
    const rules = [wire, minimumRule];
    const first = projectLines([...linesOf([usage(wire, "3", "20", "60")]).values()], rules, new Set());
    const firstBilled = billInvoice(first.lines.values(), first.minimum, "USD");
    assert.equal(firstBilled.lines.find((l) => l.kind === "minimum")?.amount.toFixed(), "940");
    assert.equal(firstBilled.total.toFixed(), "1000");

    // Later usage is rated onto the projected draft, then the draft is projected again.
    const key = lineIdentity(usage(wire, "2", "20", "40")).key;
    first.lines.set(key, addCharge(first.lines.get(key), usage(wire, "2", "20", "40")));
    const second = projectLines([...first.lines.values()], rules, new Set());
    const secondBilled = billInvoice(second.lines.values(), second.minimum, "USD");
    assert.equal(second.lines.get(key)?.quantity.toFixed(), "5");
    assert.deepEqual(
      secondBilled.lines.map((l) => [l.description, l.amount.toFixed()]),
      [
        ["wire usage", "100"],
        ["Monthly minimum: $1,000.00 committed, $100.00 counted", "900"],
      ],
    );
    assert.equal(secondBilled.total.toFixed(), "1000");

    // Once usage passes the minimum, the true-up is gone and the usage is billed in full.
    second.lines.set(key, addCharge(second.lines.get(key), usage(wire, "50", "20", "1000")));
    const third = projectLines([...second.lines.values()], rules, new Set());
    const thirdBilled = billInvoice(third.lines.values(), third.minimum, "USD");
    assert.deepEqual(
      thirdBilled.lines.map((l) => [l.description, l.amount.toFixed()]),
      [["wire usage", "1100"]],
    );
    assert.equal(thirdBilled.total.toFixed(), "1100");
  });

  it("drops the true-up once the minimum rule leaves the program", () => {
    const existing = [...linesOf([usage(wire, "10", "20", "200")]).values()];
    const withMinimum = projectLines(existing, [wire, minimumRule], new Set());
    assert.equal(billInvoice(withMinimum.lines.values(), withMinimum.minimum, "USD").total.toFixed(), "1000");
    const without = projectLines([...withMinimum.lines.values()], [wire], new Set());
    const billed = billInvoice(without.lines.values(), without.minimum, "USD");
    assert.deepEqual(
      billed.lines.map((l) => l.kind),
      ["usage"],
    );
    assert.equal(billed.total.toFixed(), "200");
  });

  it("sums several minimum rules into one true-up", () => {
    const rules = [
      wire,
      minimumRule,
      rule({ id: "min2", name: "Extra minimum", type: "minimum", metric: null, amount: "250.50" }),
    ];
    const billed = billInvoice(linesOf([usage(wire, "3", "20", "60")]).values(), minimumTermsOf(rules), "USD");
    assert.deepEqual(
      billed.lines.map((l) => [l.kind, l.amount.toFixed()]),
      [
        ["usage", "60"],
        ["minimum", "1190.5"],
      ],
    );
  });
});

describe("billInvoice: totals", () => {
  const cases: Array<{
    name: string;
    lines: Line[];
    minimum?: string;
    currency?: string;
    shown: string[];
    subtotal: string;
  }> = [
    { name: "totals nothing to zero", lines: [], shown: [], subtotal: "0" },
    {
      name: "adds up the line amounts",
      lines: [usageLine("60"), ...projectLines([], [subscription], new Set()).lines.values(), usageLine("840.5")],
      shown: ["99.5", "60", "840.5"],
      subtotal: "1000",
    },
    {
      name: "adds the rounded line amounts, not the exact charge totals",
      // Each line's 0.005 rounds half-even to 0.00; the exact sum, 0.01, is not what the lines show.
      lines: [...linesOf([usage(wire, "1", "0.005", "0.005"), usage(card, "1", "0.005", "0.005")]).values()],
      shown: ["0", "0"],
      subtotal: "0",
    },
    {
      name: "keeps a subtotal that matches the sum of what the lines show",
      lines: [
        ...linesOf([
          usage(wire, "1", "0.015", "0.015"),
          usage(card, "1", "0.135", "0.135"),
          fee(wire, "1", "0.125"),
        ]).values(),
      ],
      shown: ["0.14", "0.02", "0.12"],
      subtotal: "0.28",
    },
    {
      name: "adds whole-yen amounts: two lines of 2.5 yen make 4, not 5",
      lines: [usageLine("2.5"), usageLine("2.5")],
      currency: "JPY",
      shown: ["2", "2"],
      subtotal: "4",
    },
    {
      name: "includes the minimum true-up",
      lines: [usageLine("60")],
      minimum: "1000",
      shown: ["60", "940"],
      subtotal: "1000",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const billed = billInvoice(c.lines, c.minimum === undefined ? null : new Big(c.minimum), c.currency ?? "USD");
      assert.deepEqual(
        billed.lines.map((l) => l.amount.toFixed()),
        c.shown,
      );
      assert.deepEqual(figures(billed), { subtotal: c.subtotal, tax: "0", total: c.subtotal });
    });
  }
});

describe("billInvoice: order of the lines", () => {
  const stored = [
    ...linesOf([fee(wire, "1", "3"), usage(wire, "1", "20", "20"), usage(card, "1", "0.029", "0.029")]).values(),
    ...projectLines([], [setup, support, subscription], new Set()).lines.values(),
  ];
  const sameKindAndDescription = [...linesOf([usage(wire, "1", "7.5", "7.5"), usage(wire, "1", "20", "20")]).values()];
  const cases: Array<{
    name: string;
    lines: Line[];
    minimum: string | null;
    withUnitPrice?: boolean;
    order: string[];
  }> = [
    {
      name: "orders subscriptions, one-time fees, usage, fees, then the minimum, each by description",
      lines: stored,
      minimum: "1000",
      order: [
        "subscription Platform fee",
        "subscription Support",
        "one_time Setup fee",
        "usage card usage",
        "usage wire usage",
        "fee wire fees",
        "minimum Monthly minimum: $1,000.00 committed, $132.53 counted",
      ],
    },
    {
      name: "gives the same order whatever the order of the stored lines",
      lines: [...stored].reverse(),
      minimum: "1000",
      order: [
        "subscription Platform fee",
        "subscription Support",
        "one_time Setup fee",
        "usage card usage",
        "usage wire usage",
        "fee wire fees",
        "minimum Monthly minimum: $1,000.00 committed, $132.53 counted",
      ],
    },
    {
      name: "orders lines with the same kind and description by key",
      lines: sameKindAndDescription,
      minimum: null,
      withUnitPrice: true,
      order: ["usage wire usage @20", "usage wire usage @7.5"],
    },
    {
      name: "orders lines with the same kind and description by key, whatever the stored order",
      lines: [...sameKindAndDescription].reverse(),
      minimum: null,
      withUnitPrice: true,
      order: ["usage wire usage @20", "usage wire usage @7.5"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const billed = billInvoice(c.lines, c.minimum === null ? null : new Big(c.minimum), "USD");
      const label = (l: BilledLine) =>
        `${l.kind} ${l.description}` + (c.withUnitPrice ? ` @${l.unitPrice.toFixed()}` : "");
      assert.deepEqual(billed.lines.map(label), c.order);
    });
  }

  it("leaves the stored lines as they were: billing the same draft again gives the same invoice", () => {
    const lines = [...stored];
    const snapshot = lines.map((l) =>
      [l.key, l.quantity.toFixed(), l.chargeTotal.toFixed(), l.cappedTotal.toFixed()].join(" "),
    );
    const first = billInvoice(lines, new Big("1000"), "USD");
    const second = billInvoice(lines, new Big("1000"), "USD");
    assert.deepEqual(
      lines.map((l) => [l.key, l.quantity.toFixed(), l.chargeTotal.toFixed(), l.cappedTotal.toFixed()].join(" ")),
      snapshot,
    );
    assert.deepEqual(second.lines.map(plain), first.lines.map(plain));
    assert.deepEqual(figures(second), figures(first));
    assert.equal(first.lines.filter((l) => l.kind === "minimum").length, 1);
  });
});
