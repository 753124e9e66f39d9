import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big, roundCharge } from "../kernel/money.js";

/** What rating needs to know of an event. */
export interface RatableEvent {
  metric: string;
  quantity: Big;
  feeAmount: Big | null;
  appliedRate: Big | null;
  counterparty: string | null;
  counterpartySide: string | null;
  pair: string | null;
}

export type LineKind = "usage" | "fee";

export interface Rating {
  rule: PricingRule;
  /** The rate or per-unit price used; null when a pre-calculated fee was billed as is. */
  appliedRate: Big | null;
  /** The charge (`rated_amount`), full precision. */
  charge: Big;
  /** The part of the charge that counts against the rule's monthly cap (rate-based charges only). */
  cappedCharge: Big;
  kind: LineKind;
}

const SCOPE_FIELDS = [
  ["counterparty", "counterparty"],
  ["counterparty_side", "counterpartySide"],
  ["pair", "pair"],
] as const;

/**
 * The usage rule that prices an event (docs/decisions.md, "Rating" 3): of the rules of its metric whose scope fields
 * all match the event, the most specific one; among equally specific rules, the one added first.
 */
export function selectRule(rules: readonly PricingRule[], event: RatableEvent): PricingRule | undefined {
  let best: PricingRule | undefined;
  let bestScore = -1;
  for (const rule of rules) {
    if (rule.type !== "usage" || rule.metric !== event.metric) continue;
    let score = 0;
    let matches = true;
    for (const [ruleField, eventField] of SCOPE_FIELDS) {
      const wanted = rule[ruleField];
      if (wanted === null) continue;
      if (wanted !== event[eventField]) {
        matches = false;
        break;
      }
      score += 1;
    }
    if (matches && score > bestScore) {
      best = rule;
      bestScore = score;
    }
  }
  return best;
}

const ruleRates = new WeakMap<PricingRule, Big>();

/** A rule's own rate or per-unit price, parsed once per rule object (rules and Big values are not mutated). */
export function ruleRate(rule: PricingRule): Big {
  let rate = ruleRates.get(rule);
  if (!rate) {
    rate = new Big((rule.model === "percentage" ? rule.rate : rule.amount) ?? 0);
    ruleRates.set(rule, rate);
  }
  return rate;
}

/**
 * The charge for one event under `rule` (docs/decisions.md, "Rating" 4 and 5). Pure.
 * `capUsed` is what the rule has already charged against its monthly cap in the event's service period;
 * the event that crosses the cap is charged the remainder, later ones 0. Fees are billed as is, uncapped.
 */
export function rateEvent(event: RatableEvent, rule: PricingRule, capUsed: Big): Rating {
  if (event.feeAmount !== null) {
    return { rule, appliedRate: null, charge: event.feeAmount, cappedCharge: new Big(0), kind: "fee" };
  }
  const appliedRate = event.appliedRate ?? ruleRate(rule);
  let charge = roundCharge(event.quantity.times(appliedRate));
  if (rule.monthly_cap !== null) {
    const room = new Big(rule.monthly_cap).minus(capUsed);
    if (charge.gt(room)) charge = room.gt(0) ? room : new Big(0);
  }
  return { rule, appliedRate, charge, cappedCharge: charge, kind: "usage" };
}
