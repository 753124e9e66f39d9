import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big, divideToChargePrecision, roundToMinorUnit } from "../kernel/money.js";

export type LineKindName = "subscription" | "one_time" | "usage" | "fee" | "minimum";

/** One invoice line as the engine keeps it: exact sums plus the rounded amount (docs/decisions.md, "Invoices"). */
export interface Line {
  key: string;
  kind: LineKindName;
  ruleId: string | null;
  metric: string | null;
  description: string;
  quantity: Big;
  unitPrice: Big;
  /** Exact sum of the charges on the line. */
  chargeTotal: Big;
  /** The part of chargeTotal that counts against the rule's monthly cap. */
  cappedTotal: Big;
  /** chargeTotal rounded half-even to the currency's minor unit. */
  amount: Big;
}

const ZERO = new Big(0);

/** Usage lines aggregate by rule and unit price; pre-calculated fees by metric. */
export const usageLineKey = (ruleId: string, unitPrice: Big): string => `usage|${ruleId}|${unitPrice.toFixed()}`;
export const feeLineKey = (metric: string): string => `fee|${metric}`;
export const MINIMUM_LINE_KEY = "minimum";

export function usageDescription(rule: PricingRule, metric: string): string {
  const scope = [rule.counterparty, rule.counterparty_side, rule.pair].filter((s) => s !== null);
  return scope.length > 0 ? `${metric} usage (${scope.join(", ")})` : `${metric} usage`;
}

export interface Charge {
  kind: "usage" | "fee";
  rule: PricingRule;
  metric: string;
  quantity: Big;
  /** Rate or per-unit price; ignored for fees, whose unit price is amount / quantity. */
  unitPrice: Big | null;
  charge: Big;
  cappedCharge: Big;
}

/** Which line a charge belongs on, and that line's description. */
export function lineIdentity(charge: Pick<Charge, "kind" | "rule" | "metric" | "unitPrice">): { key: string; description: string } {
  return charge.kind === "fee"
    ? { key: feeLineKey(charge.metric), description: `${charge.metric} fees` }
    : { key: usageLineKey(charge.rule.id, charge.unitPrice!), description: usageDescription(charge.rule, charge.metric) };
}

/** The line after one more charge is added to it. Pure. */
export function addCharge(line: Line | undefined, charge: Charge, currency: string): Line {
  const { key, description } = lineIdentity(charge);
  const quantity = (line?.quantity ?? ZERO).plus(charge.quantity);
  const chargeTotal = (line?.chargeTotal ?? ZERO).plus(charge.charge);
  const amount = roundToMinorUnit(chargeTotal, currency);
  // Fees: unit_price = amount / quantity (docs/api.md, "Invoices"), rounded once to 12 decimals, as
  // billing_fee_unit_price does on the batch path.
  const unitPrice = charge.kind === "fee" ? (quantity.eq(0) ? ZERO : divideToChargePrecision(amount, quantity)) : charge.unitPrice!;
  return {
    key,
    kind: charge.kind,
    ruleId: charge.rule.id,
    metric: charge.metric,
    description,
    quantity,
    unitPrice,
    chargeTotal,
    cappedTotal: (line?.cappedTotal ?? ZERO).plus(charge.cappedCharge),
    amount,
  };
}

/** What a rule has charged against its monthly cap on these lines. */
export function capUsedByRule(lines: Iterable<Line>): Map<string, Big> {
  const used = new Map<string, Big>();
  for (const line of lines) {
    if (line.kind !== "usage" || line.ruleId === null) continue;
    used.set(line.ruleId, (used.get(line.ruleId) ?? ZERO).plus(line.cappedTotal));
  }
  return used;
}

function flatLine(kind: "subscription" | "one_time" | "minimum", key: string, ruleId: string | null, description: string, amount: Big, currency: string): Line {
  const rounded = roundToMinorUnit(amount, currency);
  return {
    key,
    kind,
    ruleId,
    metric: null,
    description,
    quantity: new Big(1),
    unitPrice: rounded,
    chargeTotal: rounded,
    cappedTotal: ZERO,
    amount: rounded,
  };
}

/**
 * Sets the "Monthly minimum" true-up line to what the other lines still fall short of the minimum, or
 * removes it when they do not (docs/decisions.md, "Invoices"). `minimum` null: the invoice has no minimum yet.
 */
export function applyMinimum(lines: Map<string, Line>, minimum: Big | null, currency: string): void {
  lines.delete(MINIMUM_LINE_KEY);
  if (minimum === null) return;
  let others = ZERO;
  for (const line of lines.values()) others = others.plus(line.amount);
  const shortfall = roundToMinorUnit(minimum, currency).minus(others);
  if (shortfall.gt(0)) lines.set(MINIMUM_LINE_KEY, flatLine("minimum", MINIMUM_LINE_KEY, null, "Monthly minimum", shortfall, currency));
}

/** The monthly minimum of a program: the sum of its minimum rules, or null when it has none. */
export function minimumOf(rules: readonly PricingRule[]): Big | null {
  const minimums = rules.filter((r) => r.type === "minimum" && r.amount !== null);
  if (minimums.length === 0) return null;
  return minimums.reduce((sum, r) => sum.plus(r.amount!), ZERO);
}

/**
 * The lines of a projected invoice (docs/decisions.md, "Invoices", projection): one line per subscription rule at
 * its monthly amount, one-time fees not yet billed on another invoice, the usage already rated onto the
 * draft, and the minimum true-up. Pure; projecting twice gives the same lines.
 */
export function projectLines(
  existing: readonly Line[],
  rules: readonly PricingRule[],
  oneTimeRulesBilledElsewhere: ReadonlySet<string>,
  currency: string,
): { lines: Map<string, Line>; minimum: Big | null } {
  const lines = new Map<string, Line>();
  for (const line of existing) {
    if (line.kind === "usage" || line.kind === "fee") lines.set(line.key, line);
  }
  for (const rule of rules) {
    if (rule.type === "subscription") {
      const key = `subscription|${rule.id}`;
      lines.set(key, flatLine("subscription", key, rule.id, rule.name, new Big(rule.amount!), currency));
    } else if (rule.type === "one_time" && !oneTimeRulesBilledElsewhere.has(rule.id)) {
      const key = `one_time|${rule.id}`;
      lines.set(key, flatLine("one_time", key, rule.id, rule.name, new Big(rule.amount!), currency));
    }
  }
  const minimum = minimumOf(rules);
  applyMinimum(lines, minimum, currency);
  return { lines, minimum };
}

export interface Totals {
  subtotal: Big;
  tax: Big;
  total: Big;
}

/** subtotal = sum of the rounded lines; tax 0 until a tax rule exists; total = subtotal + tax. */
export function totalsOf(lines: Iterable<Line>): Totals {
  let subtotal = ZERO;
  for (const line of lines) subtotal = subtotal.plus(line.amount);
  const tax = ZERO;
  return { subtotal, tax, total: subtotal.plus(tax) };
}

const KIND_ORDER: Record<LineKindName, number> = { subscription: 0, one_time: 1, usage: 2, fee: 3, minimum: 4 };

/** Presentation order: subscriptions, one-time fees, usage, fees, then the minimum true-up. */
export function sortLines<T extends { kind: LineKindName; description: string; key: string }>(lines: T[]): T[] {
  return [...lines].sort(
    (a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.description.localeCompare(b.description) || a.key.localeCompare(b.key),
  );
}
