// Steps "subtotal", "tax" and "total": the sums an invoice ends with. The subtotal is every line's amount (the
// charges, the true-up, the credits); tax is 0 until a tax rule exists (a tax step would set it from the lines,
// before "total"); the total is subtotal + tax.
import { Big } from "../../kernel/money.js";
import type { InvoiceCalc } from "./invoice-calculation.js";

export function subtotal(calc: InvoiceCalc): void {
  calc.subtotal = calc.charges.plus(calc.credits);
}

export function noTax(calc: InvoiceCalc): void {
  calc.tax = new Big(0);
}

export function total(calc: InvoiceCalc): void {
  calc.total = calc.subtotal.plus(calc.tax);
}
