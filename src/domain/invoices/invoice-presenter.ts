import { roundToMinorUnit, toJsonDecimal, toJsonMoney } from "../kernel/money.js";
import type { LineFacts } from "./documents/line-facts.js";
import { amountDue } from "./invoice-amounts.js";
import { billRecords, thawBill, type BilledInvoice } from "./invoice-figures.js";
import type { InvoiceStatus } from "./invoice-states.js";
import type { InvoiceRow } from "./invoice-repository.js";
import type { PaymentRow } from "./collections/collection-repository.js";
import type { Payment } from "./collections/collection-schemas.js";
import type { Invoice, InvoiceWithLines, ProjectedFigures } from "./invoice-schemas.js";
import { projectedParts } from "./projected-bill.js";

/**
 * The invoice as the API answers it (invoice-schemas.ts): its figures from `billInvoice`, money as JSON numbers
 * with the currency's minor unit. Pure; the documents (invoice-documents.ts) do not go through here.
 */

/** An invoice's figures: a draft's derived now, any other's as it was issued (frozen). */
export const billStored = (row: Pick<InvoiceRow, "lines" | "minimum_amount" | "currency" | "billed">): BilledInvoice =>
  row.billed === null ? billRecords(row) : thawBill(row.billed);

/** The invoice row's fields the answer shows (its lines are in `billed`). */
export type PresentedRow = Omit<InvoiceRow, "lines" | "seq" | "company_id">;

/**
 * A draft's `projected` block: its month brought up to date as projection would (`billProjected`), the sums it
 * names and the lines projection puts on. Null on any other invoice: its month is billed.
 */
function presentProjected(projected: BilledInvoice | null, currency: string): ProjectedFigures | null {
  if (projected === null) return null;
  const parts = projectedParts(projected);
  return {
    subscriptions: toJsonMoney(parts.subscriptions, currency),
    one_time_fees: toJsonMoney(parts.oneTimeFees, currency),
    minimum_top_up: toJsonMoney(parts.minimumTopUp, currency),
    subtotal: toJsonMoney(projected.subtotal, currency),
    tax: toJsonMoney(projected.tax, currency),
    total: toJsonMoney(projected.total, currency),
    line_items: presentLineItems({ ...projected, lines: parts.lines }, currency),
  };
}

function presentInvoice(row: PresentedRow, billed: BilledInvoice, projected: BilledInvoice | null): Invoice {
  return {
    object: "invoice",
    number: row.number,
    contract: row.contract_id,
    customer: row.customer_id,
    customer_name: row.customer_name,
    status: row.status as InvoiceStatus,
    subtotal: toJsonMoney(billed.subtotal, row.currency),
    tax: toJsonMoney(billed.tax, row.currency),
    total: toJsonMoney(billed.total, row.currency),
    amount_paid: toJsonMoney(row.amount_paid, row.currency),
    amount_credited: toJsonMoney(row.amount_credited, row.currency),
    amount_due: toJsonMoney(amountDue({ ...row, total: billed.total }), row.currency),
    projected: presentProjected(projected, row.currency),
    currency: row.currency,
    billing_period: { start: row.period_start, end: row.period_end },
    reissue_of: row.reissue_of,
    reissued_as: row.reissued_as,
    issued_date: row.issued_date,
    due_date: row.due_date,
    paid_date: row.paid_date,
    hosted_url: row.hosted_url,
    metrics: row.metrics,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * An invoice with its lines. `projected`: a draft's figures as projection would bring it up to date (the reads
 * pass them); every other answer presents an issued, paid or void invoice, which has none. `facts`: what explains
 * each usage line (documents/line-facts.ts), by its index.
 */
export function presentWithLines(
  row: PresentedRow,
  billed: BilledInvoice,
  projected: BilledInvoice | null = null,
  facts?: ReadonlyMap<number, LineFacts>,
): InvoiceWithLines {
  return {
    ...presentInvoice(row, billed, projected),
    line_items: presentLineItems(billed, row.currency, facts),
    payments: row.payments.map((p) => presentPayment(p, row.currency)),
  };
}

/** A payment as the API answers it (on its invoice, and in `invoice.payment_recorded`). */
export function presentPayment(
  p: Omit<PaymentRow, "created_at"> & { created_at: string | Date },
  currency: string,
): Payment {
  return {
    object: "invoice_payment",
    id: p.id,
    invoice: p.invoice_number,
    amount: toJsonMoney(p.amount, currency),
    currency,
    paid_on: p.paid_on,
    method: p.method as Payment["method"],
    reference: p.reference,
    created_at: new Date(p.created_at).toISOString(),
  };
}

/** An invoice's lines as the API answers them. */
export function presentLineItems(
  billed: BilledInvoice,
  currency: string,
  facts?: ReadonlyMap<number, LineFacts>,
): InvoiceWithLines["line_items"] {
  return billed.lines.map((l, index) => ({
    description: l.description,
    quantity: toJsonDecimal(l.quantity),
    unit_price: toJsonDecimal(l.unitPrice),
    amount: toJsonMoney(l.amount, currency),
    kind: l.kind,
    rule_id: l.ruleId,
    metric: l.metric,
    ...(l.tiers
      ? {
          tiers: l.tiers.map((t) => ({
            up_to: t.upTo === null ? null : toJsonDecimal(t.upTo),
            unit_amount: toJsonDecimal(t.unit),
            flat_amount: t.flat === null ? null : toJsonDecimal(t.flat),
            quantity: toJsonDecimal(t.quantity),
            amount: toJsonDecimal(t.amount),
          })),
        }
      : {}),
    ...(l.capAdjustment ? { cap_adjustment: toJsonDecimal(l.capAdjustment) } : {}),
    ...(l.minimum
      ? {
          minimum: {
            commitment: toJsonMoney(l.minimum.commitment, currency),
            counted: toJsonMoney(l.minimum.counted, currency),
            top_up: toJsonMoney(l.amount, currency),
          },
        }
      : {}),
    ...(l.passThrough ? { pass_through: true as const } : {}),
    ...lineFactFields(l, currency, facts?.get(index)),
  }));
}

/**
 * A usage line's event count and, when its rule's cap cut it, its uncapped amount (docs/api.md, "Invoices"):
 * the priced-again sum where the charge is not quantity × unit price, else that product.
 */
function lineFactFields(line: BilledInvoice["lines"][number], currency: string, facts: LineFacts | undefined) {
  if (facts === undefined) return {};
  const product = roundToMinorUnit(line.quantity.times(line.unitPrice), currency);
  const uncapped = facts.uncapped ?? (line.tiers === undefined && product.gt(line.amount) ? product : undefined);
  return {
    event_count: facts.events,
    ...(uncapped !== undefined && uncapped.gt(line.amount) ? { uncapped_amount: toJsonMoney(uncapped, currency) } : {}),
  };
}

/** A listed invoice (no lines), its figures from its stored lines or as issued; a draft's projected figures as given. */
export const presentListed = (row: InvoiceRow, projected: BilledInvoice | null): Invoice =>
  presentInvoice(row, billStored(row), projected);
