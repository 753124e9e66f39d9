import type { PricingRule } from "../contracts/pricing-rule.js";
import { minimumTermsOf, type MinimumTerm } from "../contracts/minimum-terms.js";
import { Big, toDecimalString } from "../kernel/money.js";

export type LineKindName = "subscription" | "one_time" | "usage" | "fee" | "credit" | "minimum";

/**
 * A share of one tier of a graduated or volume rule: the tier's terms (`upTo` null on the last tier, `flat` null
 * without a flat amount) and a quantity and exact amount in it. An event's parts (pricers.ts) may be negative (a
 * volume event that moves the period to another tier gives back what the tier before held).
 */
export interface TierPart {
  upTo: Big | null;
  unit: Big;
  flat: Big | null;
  quantity: Big;
  amount: Big;
}

/** The sum of the parts of one tier on a line: its terms, its quantity and its exact amount. */
export type TierSum = TierPart;

/**
 * One invoice line as it is stored: exact sums only. Nothing rounded is kept on a draft: every figure an
 * invoice shows (a line's amount, a fee's unit price, the minimum true-up, the totals) is derived from these
 * by `billInvoice` in invoice-figures.ts, whenever the invoice is read (docs/architecture.md, "Where each rule lives").
 */
export interface Line {
  key: string;
  kind: Exclude<LineKindName, "minimum">;
  ruleId: string | null;
  metric: string | null;
  description: string;
  quantity: Big;
  /**
   * A usage line's rate or per-unit price (part of its key); null on every other kind of line, and on the usage
   * line of a rule priced on the period's running quantity (graduated, volume, package: one line per rule).
   */
  rate: Big | null;
  /** Exact sum of the charges on the line (a subscription or one-time line: the rule's amount). */
  chargeTotal: Big;
  /** The part of chargeTotal that counts against the rule's monthly cap. */
  cappedTotal: Big;
  /**
   * Of a graduated or volume rule's line: the exact sums of each tier's parts, in tier order (by `upTo`, the last
   * tier last), one entry per tier's terms (a rule changed mid-month adds entries with its new terms). Their
   * amounts sum to the line's uncapped charge total. Null on every other line.
   */
  tiers: TierSum[] | null;
}

const ZERO = new Big(0);
const ONE = new Big(1);

/**
 * Usage lines aggregate by rule and unit price (a rule priced on its running quantity has one line, without a
 * unit price); pre-calculated fees by metric.
 */
const usageLineKey = (ruleId: string, unitPrice: Big | null): string =>
  unitPrice === null ? `usage|${ruleId}` : `usage|${ruleId}|${unitPrice.toFixed()}`;
const feeLineKey = (metric: string): string => `fee|${metric}`;

/**
 * A pass-through rule's charges (collected for a third party: minimum-terms.ts) have lines of their own, one per
 * rule and kind, their keys marked: what a minimum counts and what a credit pays are read from the line alone.
 */
const PASS_THROUGH = "pass|";
const passThroughKey = (kind: "usage" | "fee", ruleId: string, unitPrice: Big | null): string =>
  `${PASS_THROUGH}${kind === "fee" ? feeLineKey(ruleId) : usageLineKey(ruleId, unitPrice)}`;

/** Whether a line holds a pass-through rule's charges. */
export const isPassThrough = (line: Pick<Line, "key">): boolean => line.key.startsWith(PASS_THROUGH);

/** The key of a prepaid grant's purchase line, and whether a line is one (a customer's cash for usage to come). */
const PREPAID = "prepaid|";
export const isPrepaidPurchase = (line: Pick<Line, "key">): boolean => line.key.startsWith(PREPAID);

/**
 * Whether credits may pay a line: usage and pre-calculated fees, the company's own charges, but a pass-through
 * rule's (docs/api.md, "Credits").
 */
export const isCreditable = (line: Pick<Line, "key" | "kind">): boolean =>
  (line.kind === "usage" || line.kind === "fee") && !isPassThrough(line);

/**
 * Whether a rule was given a name of its own: a usage rule created without one is named after its metric
 * (normalizeRule), which reads as an identifier, not as a charge.
 */
const namedRule = (rule: PricingRule, metric: string): boolean => rule.name.trim() !== "" && rule.name !== metric;

/**
 * A usage line's description: the rule's name (what the customer agreed to pay for), or, for a rule without a
 * name of its own, the metric with the rule's scope. The one wording the API's line_items, the PDF and the usage
 * statement share, written once when the line is made.
 */
export function usageDescription(rule: PricingRule, metric: string): string {
  if (namedRule(rule, metric)) return rule.name;
  const scope = [rule.counterparty, rule.counterparty_side, rule.pair].filter((s) => s !== null);
  return scope.length > 0 ? `${metric} usage (${scope.join(", ")})` : `${metric} usage`;
}

export interface Charge {
  kind: "usage" | "fee";
  rule: PricingRule;
  metric: string;
  quantity: Big;
  /**
   * Rate or per-unit price; null under a model priced on the running quantity. Ignored for fees, whose unit price
   * is derived from the line's amount.
   */
  unitPrice: Big | null;
  charge: Big;
  cappedCharge: Big;
  /** Of a graduated or volume rule: the charge's share of each tier (uncapped); see `TierPart`. */
  tiers?: readonly TierPart[];
}

/** Which line a charge belongs on, and that line's description. */
export function lineIdentity(charge: Pick<Charge, "kind" | "rule" | "metric" | "unitPrice">): {
  key: string;
  description: string;
} {
  // A fee line holds every fee of its metric (its key), whichever rule an event matched: it is named after the
  // metric, so that its name does not depend on which rule's event came first. A pass-through rule's charges are
  // on a line of the rule's own, named after it.
  if (charge.rule.pass_through === true) {
    return {
      key: passThroughKey(charge.kind, charge.rule.id, charge.kind === "fee" ? null : charge.unitPrice),
      description: namedRule(charge.rule, charge.metric)
        ? charge.rule.name
        : `${charge.kind === "fee" ? `${charge.metric} fees` : usageDescription(charge.rule, charge.metric)} (passed through)`,
    };
  }
  return charge.kind === "fee"
    ? { key: feeLineKey(charge.metric), description: `${charge.metric} fees` }
    : {
        key: usageLineKey(charge.rule.id, charge.unitPrice),
        description: usageDescription(charge.rule, charge.metric),
      };
}

const tierKey = (t: Pick<TierPart, "upTo" | "unit" | "flat">): string =>
  `${t.upTo === null ? "" : t.upTo.toFixed()}|${t.unit.toFixed()}|${t.flat === null ? "" : t.flat.toFixed()}`;

/** Tier order: by `upTo`, the last tier (no bound) last; then by unit and flat amount, for a rule changed mid-month. */
function compareTiers(a: TierPart, b: TierPart): number {
  if (a.upTo === null || b.upTo === null) {
    if (a.upTo !== b.upTo) return a.upTo === null ? 1 : -1;
  } else if (!a.upTo.eq(b.upTo)) return a.upTo.cmp(b.upTo);
  if (!a.unit.eq(b.unit)) return a.unit.cmp(b.unit);
  return (a.flat ?? ZERO).cmp(b.flat ?? ZERO);
}

/**
 * Tier sums that `mergeTiers` made: in tier order, one entry per tier's terms, never changed after (frozen). Only
 * sums from elsewhere (read from a stored line, built by a caller) are put in order first.
 */
const inTierOrder = new WeakSet<readonly TierSum[]>();

/** Tier sums from elsewhere in tier order, one entry per tier's terms (the last of the same terms kept). */
function ordered(sums: readonly TierSum[]): TierSum[] {
  const byKey = new Map<string, TierSum>();
  for (const sum of sums) byKey.set(tierKey(sum), sum);
  return [...byKey.values()].sort(compareTiers);
}

const sameBound = (a: Big | null, b: Big | null): boolean => (a === null || b === null ? a === b : a.eq(b));

/**
 * `part` added to sums in tier order, in place: summed into the entry of its terms, or a new entry where tier order
 * puts it (after any entry that compares equal, as a stable sort of the entries in the order they came would).
 * A binary search: a line of a 250-tier rule costs each event a few comparisons, not a pass over every tier.
 */
function addPart(sums: TierSum[], part: TierPart): void {
  let low = 0;
  let high = sums.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareTiers(sums[mid]!, part) < 0) low = mid + 1;
    else high = mid;
  }
  let at = low;
  for (; at < sums.length && compareTiers(sums[at]!, part) === 0; at++) {
    const sofar = sums[at]!;
    // Equal in tier order but other terms: a flat amount of 0 beside none.
    if (!sameBound(sofar.flat, part.flat)) continue;
    sums[at] = { ...sofar, quantity: sofar.quantity.plus(part.quantity), amount: sofar.amount.plus(part.amount) };
    return;
  }
  sums.splice(at, 0, {
    upTo: part.upTo,
    unit: part.unit,
    flat: part.flat,
    quantity: part.quantity,
    amount: part.amount,
  });
}

/**
 * A line's tier sums with a charge's parts added: summed by the tier's terms, kept in tier order. Pure. Called for
 * every event of a graduated or volume rule (ingestion, re-rating, a preview of a month): its cost is that of the
 * event's parts (one or two tiers), not of the line's tiers (docs/performance.md, "Stalls").
 */
export function mergeTiers(sums: readonly TierSum[] | null, parts: readonly TierPart[] | undefined): TierSum[] | null {
  if (parts === undefined) {
    if (sums === null) return null;
    const copy = [...sums];
    if (inTierOrder.has(sums)) inTierOrder.add(Object.freeze(copy));
    return copy;
  }
  const merged = sums === null ? [] : inTierOrder.has(sums) ? [...sums] : ordered(sums);
  for (const part of parts) addPart(merged, part);
  inTierOrder.add(Object.freeze(merged));
  return merged;
}

/** The line after one more charge is added to it: its exact sums grow, nothing is rounded. Pure. */
export function addCharge(line: Line | undefined, charge: Charge): Line {
  const { key, description } = lineIdentity(charge);
  return {
    key,
    kind: charge.kind,
    ruleId: charge.rule.id,
    metric: charge.metric,
    description,
    quantity: (line?.quantity ?? ZERO).plus(charge.quantity),
    rate: charge.kind === "usage" ? charge.unitPrice : null,
    chargeTotal: (line?.chargeTotal ?? ZERO).plus(charge.charge),
    cappedTotal: (line?.cappedTotal ?? ZERO).plus(charge.cappedCharge),
    // A line stored without tiers (before lines kept them) never gains some: they would miss its earlier charges.
    tiers: line !== undefined && line.tiers === null ? null : mergeTiers(line?.tiers ?? null, charge.tiers),
  };
}

/** The key of a grant's credit line: one per grant and draft (credits/credit-wallet.ts). */
export const creditLineKey = (grantId: string): string => `credit|${grantId}`;

/**
 * A grant's credit line after `amount` more of it is applied (a negative `amount` gives some back): its charge
 * total is minus what the grant covers of the draft's usage. Pure.
 */
export function addCredit(line: Line | undefined, grantId: string, description: string, amount: Big): Line {
  return {
    key: creditLineKey(grantId),
    kind: "credit",
    ruleId: null,
    metric: null,
    description,
    quantity: ONE,
    rate: null,
    chargeTotal: (line?.chargeTotal ?? ZERO).minus(amount),
    cappedTotal: ZERO,
    tiers: null,
  };
}

/**
 * A prepaid grant's purchase, billed once on the draft it was bought on (a one-time line without a rule). Pure.
 */
export function prepaidLine(grantId: string, description: string, amount: Big): Line {
  return {
    key: `${PREPAID}${grantId}`,
    kind: "one_time",
    ruleId: null,
    metric: null,
    description,
    quantity: ONE,
    rate: null,
    chargeTotal: amount,
    cappedTotal: ZERO,
    tiers: null,
  };
}

/** What a rule has charged so far on a draft's lines. */
export interface RuleRunningTotals {
  /** Against its monthly cap. */
  capped: Big;
  /** The quantity on its line without a unit price: what a graduated, volume or package rule's tiers count. */
  quantity: Big;
}

/** Each rule's running totals on these lines. */
export function ruleTotals(lines: Iterable<Line>): Map<string, RuleRunningTotals> {
  const totals = new Map<string, RuleRunningTotals>();
  for (const line of lines) {
    if (line.kind !== "usage" || line.ruleId === null) continue;
    const sofar = totals.get(line.ruleId);
    totals.set(line.ruleId, {
      capped: (sofar?.capped ?? ZERO).plus(line.cappedTotal),
      quantity: line.rate === null ? (sofar?.quantity ?? ZERO).plus(line.quantity) : (sofar?.quantity ?? ZERO),
    });
  }
  return totals;
}

function flatLine(kind: "subscription" | "one_time", rule: PricingRule): Line {
  return {
    key: `${kind}|${rule.id}`,
    kind,
    ruleId: rule.id,
    metric: null,
    description: rule.name,
    quantity: ONE,
    rate: null,
    chargeTotal: new Big(rule.amount!),
    cappedTotal: ZERO,
    tiers: null,
  };
}

/**
 * The stored state of a projected invoice (docs/decisions.md, "Invoices", projection): one line per
 * subscription rule at its monthly amount, one-time fees not yet billed on another invoice, the usage already
 * rated onto the draft, and the program's monthly minimum (its true-up line is derived when the invoice is
 * read). Pure; projecting twice gives the same state.
 */
export function projectLines(
  existing: readonly Line[],
  rules: readonly PricingRule[],
  oneTimeRulesBilledElsewhere: ReadonlySet<string>,
): { lines: Map<string, Line>; minimum: MinimumTerm[] | null } {
  const lines = new Map<string, Line>();
  // Kept: what usage and credits put on the draft, and one-time lines no rule makes (a prepaid grant's purchase).
  for (const line of existing) {
    if (line.kind === "usage" || line.kind === "fee" || line.kind === "credit" || line.ruleId === null)
      lines.set(line.key, line);
  }
  for (const rule of rules) {
    if (rule.type === "subscription" || (rule.type === "one_time" && !oneTimeRulesBilledElsewhere.has(rule.id))) {
      const line = flatLine(rule.type, rule);
      lines.set(line.key, line);
    }
  }
  return { lines, minimum: minimumTermsOf(rules) };
}

/** A stored line as the repository reads it (decimals as text). */
export interface LineRecord {
  key: string;
  kind: string;
  rule_id: string | null;
  metric: string | null;
  description: string;
  quantity: string;
  rate: string | null;
  charge_total: string;
  capped_total: string;
  /** The line's tier sums (`tiersToRecord`); null or absent on a line without tiers. */
  tiers?: TierRecord[] | null;
}

/** A tier sum as it is stored (jsonb, decimals as text). */
export interface TierRecord {
  up_to: string | null;
  unit_amount: string;
  flat_amount: string | null;
  quantity: string;
  amount: string;
}

export const tiersToRecord = (tiers: readonly TierSum[]): TierRecord[] =>
  tiers.map((t) => ({
    up_to: t.upTo === null ? null : toDecimalString(t.upTo),
    unit_amount: toDecimalString(t.unit),
    flat_amount: t.flat === null ? null : toDecimalString(t.flat),
    quantity: toDecimalString(t.quantity),
    amount: toDecimalString(t.amount),
  }));

export const tiersFromRecord = (records: readonly TierRecord[]): TierSum[] =>
  records.map((t) => ({
    upTo: t.up_to === null ? null : new Big(t.up_to),
    unit: new Big(t.unit_amount),
    flat: t.flat_amount === null ? null : new Big(t.flat_amount),
    quantity: new Big(t.quantity),
    amount: new Big(t.amount),
  }));

export function lineFromRecord(row: LineRecord): Line {
  return {
    key: row.key,
    kind: row.kind as Line["kind"],
    ruleId: row.rule_id,
    metric: row.metric,
    description: row.description,
    quantity: new Big(row.quantity),
    rate: row.rate === null ? null : new Big(row.rate),
    chargeTotal: new Big(row.charge_total),
    cappedTotal: new Big(row.capped_total),
    tiers: row.tiers == null ? null : tiersFromRecord(row.tiers),
  };
}
