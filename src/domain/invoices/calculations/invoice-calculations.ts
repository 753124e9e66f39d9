// The calculations an invoice's figures are built by, in order (invoice-calculation.ts says what a step is).
// The one list: billInvoice (invoice-figures.ts) runs it for every draft shown, every invoice issued, every
// projection and preview. A new step goes in here, where its inputs are ready: a tax rule between "subtotal"
// and "total", a ledger posting's figures after "total".
import type { Line } from "../invoice-lines.js";
import { billLines } from "./bill-lines.js";
import type { BilledInvoice, InvoiceCalc, InvoiceCalculation } from "./invoice-calculation.js";
import { minimumTrueUp } from "./minimum-true-up.js";
import { presentationOrder } from "./presentation-order.js";
import { noTax, subtotal, total } from "./totals.js";
import { Big } from "../../kernel/money.js";
import type { MinimumTerm } from "../../contracts/minimum-terms.js";

export const INVOICE_CALCULATIONS: readonly { name: string; run: InvoiceCalculation }[] = [
  { name: "lines", run: billLines },
  { name: "minimum", run: minimumTrueUp },
  { name: "subtotal", run: subtotal },
  { name: "tax", run: noTax },
  { name: "total", run: total },
  { name: "order", run: presentationOrder },
];

/**
 * Runs the calculations over an invoice's stored lines, monthly commitments (null: none; one amount: a
 * commitment that counts the default charges) and currency. Pure.
 */
export function calculateInvoice(
  stored: Iterable<Line>,
  commitments: readonly MinimumTerm[] | Big | null,
  currency: string,
): BilledInvoice {
  const minimum = commitments instanceof Big ? [{ amount: commitments, counts: null }] : commitments;
  const zero = new Big(0);
  const calc: InvoiceCalc = {
    stored: [...stored],
    minimum,
    currency,
    lines: [],
    charges: zero,
    credits: zero,
    subtotal: zero,
    tax: zero,
    total: zero,
  };
  for (const step of INVOICE_CALCULATIONS) step.run(calc);
  return { lines: calc.lines.map((k) => k.line), subtotal: calc.subtotal, tax: calc.tax, total: calc.total };
}
