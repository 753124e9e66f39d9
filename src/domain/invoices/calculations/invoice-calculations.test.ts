import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../../kernel/money.js";
import type { Line, LineKindName } from "../invoice-lines.js";
import { billLines } from "./bill-lines.js";
import type { InvoiceCalc } from "./invoice-calculation.js";
import { calculateInvoice, INVOICE_CALCULATIONS } from "./invoice-calculations.js";
import { minimumTrueUp } from "./minimum-true-up.js";
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
  const cases: { name: string; minimum: string | null; charges: string; currency?: string; trueUp: string | null }[] = [
    { name: "no minimum: no line", minimum: null, charges: "5", trueUp: null },
    { name: "charges short of it: the shortfall", minimum: "1000", charges: "700.01", trueUp: "299.99" },
    { name: "charges equal to it: no line", minimum: "1000", charges: "1000", trueUp: null },
    { name: "charges above it: no line", minimum: "1000", charges: "1000.01", trueUp: null },
    {
      name: "a minimum in a currency without decimals, rounded first",
      minimum: "1000.6",
      charges: "0",
      currency: "JPY",
      trueUp: "1001",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const calc = state({
        minimum: c.minimum === null ? null : new Big(c.minimum),
        charges: new Big(c.charges),
        currency: c.currency ?? "USD",
      });
      minimumTrueUp(calc);
      const trueUp = calc.lines.find((l) => l.key === "minimum")?.line;
      assert.equal(trueUp?.amount.toFixed() ?? null, c.trueUp);
      assert.equal(calc.charges.toFixed(), new Big(c.charges).plus(c.trueUp ?? "0").toFixed());
      if (trueUp) assert.equal(trueUp.description, "Monthly minimum");
    });
  }
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
