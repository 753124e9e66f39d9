// Step "minimum": the "Monthly minimum" true-up line, what the charges fall short of the contract's minimum
// (rounded to the minor unit), present only when positive. Measured on the charges before credits: a credit
// pays for usage, it does not lower the minimum.
import { Big, roundToMinorUnit } from "../../kernel/money.js";
import type { InvoiceCalc } from "./invoice-calculation.js";

const ONE = new Big(1);

export function minimumTrueUp(calc: InvoiceCalc): void {
  if (calc.minimum === null) return;
  const shortfall = roundToMinorUnit(calc.minimum, calc.currency).minus(calc.charges);
  if (!shortfall.gt(0)) return;
  calc.lines.push({
    key: "minimum",
    line: {
      kind: "minimum",
      ruleId: null,
      metric: null,
      description: "Monthly minimum",
      quantity: ONE,
      unitPrice: shortfall,
      amount: shortfall,
    },
  });
  calc.charges = calc.charges.plus(shortfall);
}
