import { Big, toDecimalString } from "../kernel/money.js";
import { termsFromRecord, type MinimumTerm, type MinimumTermRecord } from "../contracts/minimum-terms.js";
import type { BilledInvoice } from "./calculations/invoice-calculation.js";
import { calculateInvoice } from "./calculations/invoice-calculations.js";
import {
  lineFromRecord,
  tiersFromRecord,
  tiersToRecord,
  type Line,
  type LineKindName,
  type LineRecord,
  type TierRecord,
} from "./invoice-lines.js";

/**
 * The one home of invoice arithmetic. Writers (batch ingest, locking ingest, projection) store exact sums
 * only; every figure an invoice shows is derived here, when it is read, by the ordered calculations of
 * calculations/invoice-calculations.ts (docs/architecture.md, "Invoice building"; the rules in
 * docs/decisions.md, "Invoices"):
 *
 * - a line's amount is its exact charge total rounded half-even to the currency's minor unit, once;
 * - a usage line's unit price is its rate; a fee line's, and a graduated, volume or package rule's line's
 *   (which has no one rate), is amount / quantity to 12 decimals (0 for no quantity); a subscription or one-time line's is its amount (quantity 1);
 * - the "Monthly minimum" true-up line is what the other lines' amounts fall short of the minimum (rounded
 *   to the minor unit), present only when positive;
 * - subtotal is the sum of the line amounts, tax 0 until a tax rule exists, total = subtotal + tax;
 * - a graduated or volume rule's line shows each tier reached (a nonzero quantity or amount), with its exact
 *   amount (not rounded to the minor unit); when a monthly cap cut the line, `capAdjustment` is what brings the
 *   tiers' amounts to the line's exact charge total (charge total − Σ tier amounts), so that they add up exactly.
 */
export type { BilledInvoice, BilledLine } from "./calculations/invoice-calculation.js";

/**
 * Every figure of an invoice from its stored lines and monthly commitments (null: none; one amount: one that counts
 * the default charges): the calculations, in order. Pure.
 */
export function billInvoice(
  stored: Iterable<Line>,
  minimum: readonly MinimumTerm[] | Big | null,
  currency: string,
): BilledInvoice {
  return calculateInvoice(stored, minimum, currency);
}

/** `billInvoice` over an invoice as the repositories read it: its stored lines and commitments, decimals as text. */
export function billRecords(state: {
  lines: readonly LineRecord[];
  minimum_amount: string | null;
  minimum_terms?: readonly MinimumTermRecord[] | null;
  currency: string;
}): BilledInvoice {
  return billInvoice(state.lines.map(lineFromRecord), termsFromRecord(state), state.currency);
}

/** The figures an invoice was issued with, as stored on it (decimals as text, exactly as billed). */
export interface FrozenBill {
  lines: {
    kind: LineKindName;
    rule_id: string | null;
    metric: string | null;
    description: string;
    quantity: string;
    unit_price: string;
    amount: string;
    tiers?: TierRecord[];
    cap_adjustment?: string;
    minimum?: { commitment: string; counted: string };
    pass_through?: true;
    /** What explained the line at issue (documents/line-facts.ts); absent on invoices issued before they were kept. */
    event_count?: number;
    uncapped_amount?: string;
  }[];
  subtotal: string;
  tax: string;
  total: string;
}

export function freezeBill(billed: BilledInvoice): FrozenBill {
  return {
    lines: billed.lines.map((l) => ({
      kind: l.kind,
      rule_id: l.ruleId,
      metric: l.metric,
      description: l.description,
      quantity: toDecimalString(l.quantity),
      unit_price: toDecimalString(l.unitPrice),
      amount: toDecimalString(l.amount),
      ...(l.tiers ? { tiers: tiersToRecord(l.tiers) } : {}),
      ...(l.capAdjustment ? { cap_adjustment: toDecimalString(l.capAdjustment) } : {}),
      ...(l.minimum
        ? {
            minimum: { commitment: toDecimalString(l.minimum.commitment), counted: toDecimalString(l.minimum.counted) },
          }
        : {}),
      ...(l.passThrough ? { pass_through: true as const } : {}),
      ...(l.eventCount !== undefined ? { event_count: l.eventCount } : {}),
      ...(l.uncapped ? { uncapped_amount: toDecimalString(l.uncapped) } : {}),
    })),
    subtotal: toDecimalString(billed.subtotal),
    tax: toDecimalString(billed.tax),
    total: toDecimalString(billed.total),
  };
}

/**
 * The figures of a frozen bill without what explains its lines (`event_count`, `uncapped_amount`: read from the
 * events at issue, not derived from the lines): what `billing verify` compares with what the stored lines bill.
 */
export function figuresOnly(frozen: FrozenBill): FrozenBill {
  return {
    ...frozen,
    lines: frozen.lines.map(({ event_count: _count, uncapped_amount: _uncapped, ...line }) => line),
  };
}

export function thawBill(frozen: FrozenBill): BilledInvoice {
  return {
    lines: frozen.lines.map((l) => ({
      kind: l.kind,
      ruleId: l.rule_id,
      metric: l.metric,
      description: l.description,
      quantity: new Big(l.quantity),
      unitPrice: new Big(l.unit_price),
      amount: new Big(l.amount),
      ...(l.tiers ? { tiers: tiersFromRecord(l.tiers) } : {}),
      ...(l.cap_adjustment ? { capAdjustment: new Big(l.cap_adjustment) } : {}),
      ...(l.minimum
        ? { minimum: { commitment: new Big(l.minimum.commitment), counted: new Big(l.minimum.counted) } }
        : {}),
      ...(l.pass_through ? { passThrough: true as const } : {}),
      ...(l.event_count !== undefined ? { eventCount: l.event_count } : {}),
      ...(l.uncapped_amount ? { uncapped: new Big(l.uncapped_amount) } : {}),
    })),
    subtotal: new Big(frozen.subtotal),
    tax: new Big(frozen.tax),
    total: new Big(frozen.total),
  };
}
