// Step "minimum": one "Monthly minimum" true-up line per commitment of the month, what the lines it counts fall
// short of it (rounded to the minor unit), present only when positive. What a commitment counts is its own
// (contracts/minimum-terms.ts): by default the month's usage, fees and subscriptions, but a pass-through rule's
// charges and a prepaid credit purchase. Measured on the charges before credits: a credit pays for usage, it does
// not lower the minimum. The line states the commitment and what counted, on every surface (its description).
import { DEFAULT_COUNTED_KINDS, type MinimumCounts } from "../../contracts/minimum-terms.js";
import { formatMoney } from "../../kernel/money-format.js";
import { Big, roundToMinorUnit } from "../../kernel/money.js";
import { isPassThrough, isPrepaidPurchase } from "../invoice-lines.js";
import type { BilledLine, InvoiceCalc } from "./invoice-calculation.js";

const ONE = new Big(1);

/** Whether a commitment that counts `counts` (null: the default) counts a billed line. Pure. */
function countsToward(entry: { key: string; line: BilledLine }, counts: MinimumCounts | null): boolean {
  const { line } = entry;
  if (line.kind === "credit" || line.kind === "minimum" || isPrepaidPurchase(entry)) return false;
  const named = counts?.rule_ids !== undefined && line.ruleId !== null && counts.rule_ids.includes(line.ruleId);
  if (counts?.rule_ids !== undefined && !named) return false;
  if (isPassThrough(entry) && !named) return false;
  if (!(counts?.kinds ?? DEFAULT_COUNTED_KINDS).includes(line.kind)) return false;
  if (counts?.metrics !== undefined && (line.metric === null || !counts.metrics.includes(line.metric))) return false;
  return true;
}

export function minimumTrueUp(calc: InvoiceCalc): void {
  if (calc.minimum === null) return;
  const charged = [...calc.lines];
  calc.minimum.forEach((term, index) => {
    const commitment = roundToMinorUnit(term.amount, calc.currency);
    const counted = charged
      .filter((entry) => countsToward(entry, term.counts))
      .reduce((sum, entry) => sum.plus(entry.line.amount), new Big(0));
    const shortfall = commitment.minus(counted);
    if (!shortfall.gt(0)) return;
    const money = (value: Big) => formatMoney(value.toFixed(), calc.currency);
    calc.lines.push({
      key: index === 0 ? "minimum" : `minimum|${index}`,
      line: {
        kind: "minimum",
        ruleId: null,
        metric: null,
        description: `Monthly minimum: ${money(commitment)} committed, ${money(counted)} counted`,
        quantity: ONE,
        unitPrice: shortfall,
        amount: shortfall,
        minimum: { commitment, counted },
      },
    });
    calc.charges = calc.charges.plus(shortfall);
  });
}
