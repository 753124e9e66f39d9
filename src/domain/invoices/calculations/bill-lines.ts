// Step "lines": every stored line billed (docs/decisions.md, "Invoices"). Its amount is its exact charge total
// rounded half-even to the currency's minor unit, once. A usage line's unit price is its rate; a fee line's, and
// a graduated, volume or package rule's line's (which has no one rate), is amount / quantity to 12 decimals (0
// for no quantity); a subscription or one-time line's is its amount. A tiered line shows each tier reached, exact,
// and `capAdjustment` when a monthly cap cut it. The charge lines and the credit lines are summed apart.
import { Big, divideToChargePrecision, roundToMinorUnit } from "../../kernel/money.js";
import { isPassThrough, type Line } from "../invoice-lines.js";
import type { BilledLine, InvoiceCalc } from "./invoice-calculation.js";

const ZERO = new Big(0);

function billLine(line: Line, currency: string): BilledLine {
  const amount = roundToMinorUnit(line.chargeTotal, currency);
  let unitPrice: Big;
  if (line.kind === "usage" && line.rate !== null) unitPrice = line.rate;
  else if (line.kind === "usage" || line.kind === "fee")
    unitPrice = line.quantity.eq(0) ? ZERO : divideToChargePrecision(amount, line.quantity);
  else unitPrice = amount;
  const billed: BilledLine = {
    kind: line.kind,
    ruleId: line.ruleId,
    metric: line.metric,
    description: line.description,
    quantity: line.quantity,
    unitPrice,
    amount,
  };
  if (isPassThrough(line)) billed.passThrough = true;
  if (line.tiers !== null) {
    billed.tiers = line.tiers.filter((t) => !t.quantity.eq(0) || !t.amount.eq(0));
    const adjustment = line.chargeTotal.minus(billed.tiers.reduce((sum, t) => sum.plus(t.amount), ZERO));
    if (!adjustment.eq(0)) billed.capAdjustment = adjustment;
  }
  return billed;
}

export function billLines(calc: InvoiceCalc): void {
  for (const line of calc.stored) {
    const billed = billLine(line, calc.currency);
    calc.lines.push({ key: line.key, line: billed });
    if (line.kind === "credit") calc.credits = calc.credits.plus(billed.amount);
    else calc.charges = calc.charges.plus(billed.amount);
  }
}
