import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../../kernel/money.js";
import type { Line, LineKindName } from "../invoice-lines.js";
import { billLines } from "./bill-lines.js";
import type { InvoiceCalc } from "./invoice-calculation.js";
import { calculateInvoice, INVOICE_CALCULATIONS } from "./invoice-calculations.js";
import { minimumTrueUp } from "./minimum-true-up.js";
import type { MinimumCounts } from "../../contracts/minimum-terms.js";
import { presentationOrder } from "./presentation-order.js";
import { noTax, subtotal, total } from "./totals.js";

// Each calculation on its own, over a working state written out by hand; the figures of whole invoices are
// invoice-figures.test.ts's.

const line = (key: string, kind: Line["kind"], chargeTotal: string, description = key): Line => ({
  key,
  kind,
  ruleId: kind === "credit" ? null : key,
  metric: kind === "usage" || kind === "fee" ? "wire" : null,
  description,
  quantity: new Big(1),
  rate: kind === "usage" ? new Big(chargeTotal) : null,
  chargeTotal: new Big(chargeTotal),
  cappedTotal: new Big(chargeTotal),
  tiers: null,
});

const state = (fields: Partial<InvoiceCalc> = {}): InvoiceCalc => ({
  stored: [],
  minimum: null,
  currency: "USD",
  lines: [],
  charges: new Big(0),
  credits: new Big(0),
  subtotal: new Big(0),
  tax: new Big(0),
  total: new Big(0),
  ...fields,
});

describe("the list of calculations", () => {
  it("runs lines, minimum, subtotal, tax, total and order, in that order", () => {
    assert.deepEqual(
      INVOICE_CALCULATIONS.map((c) => c.name),
      ["lines", "minimum", "subtotal", "tax", "total", "order"],
    );
  });
  it("builds an invoice from its stored lines through every step", () => {
    const billed = calculateInvoice(
      [line("u", "usage", "700.004"), line("c", "credit", "-50")],
      new Big("1000"),
      "USD",
    );
    assert.deepEqual(
      billed.lines.map((l) => `${l.kind} ${l.amount.toFixed()}`),
      ["usage 700", "minimum 300", "credit -50"],
    );
    assert.deepEqual([billed.subtotal.toFixed(), billed.tax.toFixed(), billed.total.toFixed()], ["950", "0", "950"]);
  });
});

describe("step: lines", () => {
  const cases: { name: string; stored: Line[]; amounts: string[]; charges: string; credits: string }[] = [
    { name: "nothing stored", stored: [], amounts: [], charges: "0", credits: "0" },
    {
      name: "a line's exact total rounded half-even to cents, once",
      stored: [line("a", "usage", "10.005"), line("b", "usage", "10.015")],
      amounts: ["10", "10.02"],
      charges: "20.02",
      credits: "0",
    },
    {
      name: "credits summed apart from charges",
      stored: [line("a", "subscription", "99.5"), line("c", "credit", "-20.004")],
      amounts: ["99.5", "-20"],
      charges: "99.5",
      credits: "-20",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const calc = state({ stored: c.stored });
      billLines(calc);
      assert.deepEqual(
        calc.lines.map((l) => l.line.amount.toFixed()),
        c.amounts,
      );
      assert.equal(calc.charges.toFixed(), c.charges);
      assert.equal(calc.credits.toFixed(), c.credits);
    });
  }
});

describe("step: minimum", () => {
  /** A billed line of the working state: kind, key (which marks pass-through and prepaid lines), amount. */
  const billed = (
    key: string,
    kind: LineKindName,
    amount: string,
    ruleId: string | null = key,
    metric: string | null = null,
  ) => ({
    key,
    line: {
      kind,
      ruleId,
      metric,
      description: key,
      quantity: new Big(1),
      unitPrice: new Big(amount),
      amount: new Big(amount),
    },
  });
  const month = [
    billed("usage|wire|20", "usage", "20", "wire", "wire"),
    billed("fee|fx", "fee", "100", "fx", "fx"),
    billed("pass|fee|corr", "fee", "100", "corr", "corr"),
    billed("prepaid|cg_1", "one_time", "800", null),
    billed("one_time|setup", "one_time", "50", "setup"),
    billed("subscription|plan", "subscription", "30", "plan"),
    billed("credit|cg_1", "credit", "-120", null),
  ];
  const cases: {
    name: string;
    lines?: ReturnType<typeof billed>[];
    terms: { amount: string; counts: MinimumCounts | null }[] | null;
    currency?: string;
    /** Each true-up line: "top-up committed counted". */
    trueUps: string[];
  }[] = [
    { name: "no minimum: no line", terms: null, trueUps: [] },
    {
      name: "by default: usage, fees and subscriptions; not pass-through, prepaid, one-time or credits",
      terms: [{ amount: "1000", counts: null }],
      trueUps: ["850 1000 150"],
    },
    {
      name: "charges equal to it: no line",
      terms: [{ amount: "150", counts: null }],
      trueUps: [],
    },
    {
      name: "charges above it: no line",
      terms: [{ amount: "149.99", counts: null }],
      trueUps: [],
    },
    {
      name: "counting named kinds only",
      terms: [{ amount: "1000", counts: { kinds: ["usage", "one_time"] } }],
      trueUps: ["930 1000 70"],
    },
    {
      name: "counting a metric only",
      terms: [{ amount: "1000", counts: { metrics: ["wire"] } }],
      trueUps: ["980 1000 20"],
    },
    {
      name: "a pass-through rule counts when named",
      terms: [{ amount: "1000", counts: { rule_ids: ["corr", "wire"] } }],
      trueUps: ["880 1000 120"],
    },
    {
      name: "two commitments, each its own line",
      terms: [
        { amount: "1000", counts: null },
        { amount: "100", counts: { metrics: ["wire"] } },
      ],
      trueUps: ["850 1000 150", "80 100 20"],
    },
    {
      name: "a minimum in a currency without decimals, rounded first",
      lines: [],
      terms: [{ amount: "1000.6", counts: null }],
      currency: "JPY",
      trueUps: ["1001 1001 0"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const lines = c.lines ?? month;
      const charges = lines.filter((l) => l.line.kind !== "credit").reduce((s, l) => s.plus(l.line.amount), new Big(0));
      const calc = state({
        lines: [...lines],
        minimum: c.terms === null ? null : c.terms.map((t) => ({ amount: new Big(t.amount), counts: t.counts })),
        charges,
        currency: c.currency ?? "USD",
      });
      minimumTrueUp(calc);
      const trueUps = calc.lines.filter((l) => l.line.kind === "minimum").map((l) => l.line);
      assert.deepEqual(
        trueUps.map((l) => `${l.amount.toFixed()} ${l.minimum!.commitment.toFixed()} ${l.minimum!.counted.toFixed()}`),
        c.trueUps,
      );
      const added = trueUps.reduce((s, l) => s.plus(l.amount), new Big(0));
      assert.equal(calc.charges.toFixed(), charges.plus(added).toFixed());
    });
  }
  it("states the commitment and what counted in the line's words", () => {
    const calc = state({ lines: [...month], minimum: [{ amount: new Big("1000"), counts: null }] });
    minimumTrueUp(calc);
    assert.equal(calc.lines.at(-1)!.line.description, "Monthly minimum: $1,000.00 committed, $150.00 counted");
  });
});

describe("steps: subtotal, tax, total", () => {
  const cases = [
    { charges: "0", credits: "0", subtotal: "0", total: "0" },
    { charges: "1000", credits: "-50", subtotal: "950", total: "950" },
    { charges: "10", credits: "-25", subtotal: "-15", total: "-15" },
  ];
  for (const c of cases) {
    it(`charges ${c.charges} and credits ${c.credits}: subtotal ${c.subtotal}, no tax, total ${c.total}`, () => {
      const calc = state({ charges: new Big(c.charges), credits: new Big(c.credits), tax: new Big("99") });
      subtotal(calc);
      noTax(calc);
      total(calc);
      assert.deepEqual([calc.subtotal.toFixed(), calc.tax.toFixed(), calc.total.toFixed()], [c.subtotal, "0", c.total]);
    });
  }
});

describe("step: order", () => {
  it("puts subscriptions, one-time fees, usage, fees, the minimum and credits in that order, by description within a kind", () => {
    const calc = state();
    const billed = (key: string, kind: LineKindName, description = key) => ({
      key,
      line: {
        kind,
        ruleId: null,
        metric: null,
        description,
        quantity: new Big(1),
        unitPrice: new Big(1),
        amount: new Big(1),
      },
    });
    calc.lines.push(
      billed("c", "credit"),
      billed("m", "minimum"),
      billed("f", "fee"),
      billed("u2", "usage", "b usage"),
      billed("u1", "usage", "a usage"),
      billed("o", "one_time"),
      billed("s", "subscription"),
    );
    presentationOrder(calc);
    assert.deepEqual(
      calc.lines.map((l) => l.key),
      ["s", "o", "u1", "u2", "f", "m", "c"],
    );
  });
});
