import { Big } from "../kernel/money.js";
import { type InvoiceStatus, isOwed } from "./invoice-states.js";

/**
 * What is still owed on an invoice: its total less what was paid and what credit notes took off it, never
 * below zero (a credit note on a paid invoice leaves a credit balance on the customer instead). A draft or a
 * void invoice owes nothing. The one home of this rule: lists, receivables, payments and documents use it.
 */
export function amountDue(invoice: {
  status: string;
  total: string | Big;
  amount_paid: string | Big;
  amount_credited: string | Big;
}): Big {
  if (!isOwed(invoice.status as InvoiceStatus)) return new Big(0);
  const left = new Big(invoice.total).minus(invoice.amount_paid).minus(invoice.amount_credited);
  return left.gt(0) ? left : new Big(0);
}
