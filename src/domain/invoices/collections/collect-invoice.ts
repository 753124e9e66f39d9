import { randomBytes } from "node:crypto";
import type { CompanyScope } from "../../../db/company-scope.js";
import { toDateString } from "../../kernel/billing-period.js";
import { ConflictError, NotFoundError, ValidationError } from "../../kernel/errors.js";
import { type Big, fractionDigits, minorUnitExponent, toMoneyString } from "../../kernel/money.js";
import * as collections from "./collection-repository.js";
import type { PaymentMethod } from "./collection-schemas.js";
import { amountDue } from "../invoice-amounts.js";
import { thawBill } from "../invoice-figures.js";
import { type InvoiceStatus, paidBy, requireMay } from "../invoice-states.js";
import { paidDateOf } from "../lifecycle/invoice-lifecycle.js";
import * as repo from "../lifecycle/invoice-change-repository.js";
import { presentPayment } from "../invoice-presenter.js";
import type { Clock } from "../../kernel/clock.js";
import { recordEvent } from "../../webhooks/outbox.js";

// What collecting an issued invoice does to it, under its row lock: a payment, or a credit note's share of its
// amount due. Both go through here, so that `amount_due` and the move to `paid` have one home.

/** A locked invoice's total as issued. Only an issued or paid invoice is collected, and both are frozen. */
export const issuedTotal = (invoice: repo.InvoiceForChange): Big => thawBill(invoice.billed!).total;

/** What is owed on a locked invoice now. */
export const dueOn = (invoice: repo.InvoiceForChange): Big => amountDue({ ...invoice, total: issuedTotal(invoice) });

/** An amount of money sent for an invoice: more than 0, with no more decimals than its currency has. */
export function requireMoney(amount: Big, currency: string, path: string): void {
  if (amount.lte(0)) {
    throw new ValidationError(`${path} must be more than 0`, "invalid_amount", [
      { path, message: "must be more than 0" },
    ]);
  }
  const digits = minorUnitExponent(currency);
  if (fractionDigits(amount) > digits) {
    throw new ValidationError(`${path} has more decimals than ${currency} has (${digits})`, "invalid_amount", [
      { path, message: `at most ${digits} decimals in ${currency}` },
    ]);
  }
}

/** Locks an invoice of the company for a payment or a credit note; 404 when it has none by this number. */
export async function lockForCollection(tx: CompanyScope, number: string): Promise<repo.InvoiceForChange> {
  const invoice = await repo.lockInvoiceForChange(tx, number);
  if (!invoice) throw new NotFoundError("invoice");
  return invoice;
}

/**
 * Records a payment on a locked, issued invoice: never more than is due (an overpayment is refused: 409
 * `amount_exceeds_due`), and the invoice becomes `paid`, on the payment's date, when nothing is left due.
 * Records `invoice.payment_recorded`; the caller announces `invoice.paid` (changeInvoice does for …/pay).
 * Returns the payment's id.
 */
export async function recordPaymentOn(
  tx: CompanyScope,
  invoice: repo.InvoiceForChange,
  clock: Clock,
  payment: { amount: Big; paidOn: string | undefined; method: PaymentMethod; reference: string | null; now: Date },
): Promise<string> {
  const status = invoice.status as InvoiceStatus;
  requireMay(status, "record_payment");
  const due = dueOn(invoice);
  if (due.eq(0)) {
    throw new ConflictError(`Invoice ${invoice.number} has nothing due: it takes no payment`, "invoice_is_paid");
  }
  requireMoney(payment.amount, invoice.currency, "amount");
  if (payment.amount.gt(due)) {
    throw new ConflictError(
      `The payment of ${toMoneyString(payment.amount, invoice.currency)} is more than the ${toMoneyString(due, invoice.currency)} due on invoice ${invoice.number}`,
      "amount_exceeds_due",
    );
  }
  const paidOn = paidDateOf(payment.paidOn, invoice.issued_date, toDateString(payment.now));
  const row: collections.PaymentRow = {
    id: `pay_${randomBytes(8).toString("hex")}`,
    invoice_number: invoice.number,
    amount: payment.amount.toFixed(),
    paid_on: paidOn,
    method: payment.method,
    reference: payment.reference,
    created_at: payment.now,
  };
  await collections.insertPayment(tx, row);
  await recordEvent(tx, clock, "invoice.payment_recorded", presentPayment(row, invoice.currency));
  if (paidBy(status, due, due.minus(payment.amount))) await repo.payInvoice(tx, invoice.number, paidOn, payment.now);
  return row.id;
}
