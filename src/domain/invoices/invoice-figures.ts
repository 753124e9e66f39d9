import { Big, divideToChargePrecision, roundToMinorUnit, toDecimalString } from "../kernel/money.js";
import {
  lineFromRecord,
  tiersFromRecord,
  tiersToRecord,
  type Line,
  type LineKindName,
  type LineRecord,
  type TierRecord,
  type TierSum,
} from "./invoice-lines.js";

/**
 * The one home of invoice arithmetic. Writers (batch ingest, locking ingest, projection) store exact sums
 * only; every figure an invoice shows is derived here, when it is read (docs/architecture.md, "Where each
 * rule lives"; the rules in docs/decisions.md, "Invoices"):
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
export interface BilledLine {
  kind: LineKindName;
  ruleId: string | null;
  metric: string | null;
  description: string;
  quantity: Big;
  unitPrice: Big;
  amount: Big;
  /** Of a graduated or volume rule's line: the tiers reached, exact. Absent on every other line. */
  tiers?: TierSum[];
  /** With `tiers`, when a monthly cap cut the line: charge total − Σ tier amounts (exact, negative). */
  capAdjustment?: Big;
}

export interface BilledInvoice {
  /** In presentation order: subscriptions, one-time fees, usage, fees, then the minimum true-up. */
  lines: BilledLine[];
  subtotal: Big;
  tax: Big;
  total: Big;
}

const ZERO = new Big(0);
const ONE = new Big(1);

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
  if (line.tiers !== null) {
    billed.tiers = line.tiers.filter((t) => !t.quantity.eq(0) || !t.amount.eq(0));
    const adjustment = line.chargeTotal.minus(billed.tiers.reduce((sum, t) => sum.plus(t.amount), ZERO));
    if (!adjustment.eq(0)) billed.capAdjustment = adjustment;
  }
  return billed;
}

const KIND_ORDER: Record<LineKindName, number> = {
  subscription: 0,
  one_time: 1,
  usage: 2,
  fee: 3,
  minimum: 4,
  credit: 5,
};

/** Every figure of an invoice from its stored lines and monthly minimum (null: none). Pure. */
export function billInvoice(stored: Iterable<Line>, minimum: Big | null, currency: string): BilledInvoice {
  const keyed: { key: string; line: BilledLine }[] = [];
  let subtotal = ZERO;
  let credits = ZERO;
  for (const line of stored) {
    const billed = billLine(line, currency);
    keyed.push({ key: line.key, line: billed });
    if (line.kind === "credit") credits = credits.plus(billed.amount);
    else subtotal = subtotal.plus(billed.amount);
  }
  // The minimum is measured on the charges before credits: a credit pays for usage, it does not lower the minimum.
  if (minimum !== null) {
    const shortfall = roundToMinorUnit(minimum, currency).minus(subtotal);
    if (shortfall.gt(0)) {
      const trueUp = {
        kind: "minimum" as const,
        ruleId: null,
        metric: null,
        description: "Monthly minimum",
        quantity: ONE,
        unitPrice: shortfall,
        amount: shortfall,
      };
      keyed.push({ key: "minimum", line: trueUp });
      subtotal = subtotal.plus(shortfall);
    }
  }
  subtotal = subtotal.plus(credits);
  keyed.sort(
    (a, b) =>
      KIND_ORDER[a.line.kind] - KIND_ORDER[b.line.kind] ||
      a.line.description.localeCompare(b.line.description) ||
      a.key.localeCompare(b.key),
  );
  const tax = ZERO;
  return { lines: keyed.map((k) => k.line), subtotal, tax, total: subtotal.plus(tax) };
}

/** `billInvoice` over an invoice as the repositories read it: its stored lines and minimum, decimals as text. */
export function billRecords(state: {
  lines: readonly LineRecord[];
  minimum_amount: string | null;
  currency: string;
}): BilledInvoice {
  return billInvoice(
    state.lines.map(lineFromRecord),
    state.minimum_amount === null ? null : new Big(state.minimum_amount),
    state.currency,
  );
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
    })),
    subtotal: toDecimalString(billed.subtotal),
    tax: toDecimalString(billed.tax),
    total: toDecimalString(billed.total),
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
    })),
    subtotal: new Big(frozen.subtotal),
    tax: new Big(frozen.tax),
    total: new Big(frozen.total),
  };
}
