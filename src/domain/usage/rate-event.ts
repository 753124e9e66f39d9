import type { PricingRule } from "../contracts/pricing-rule.js";
import type { Big } from "../kernel/money.js";
import { priceCharge, type LineKind, type RatableEvent } from "./pricers.js";

export type { LineKind, RatableEvent } from "./pricers.js";

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

/**
 * The charge for one event under `rule` (docs/decisions.md, "Rating" 4 and 5): its pricer (pricers.ts), then the
 * steps after pricing (the monthly cap). `capUsed` is what the rule has already charged against its monthly cap
 * in the event's service period. Pure.
 */
export function rateEvent(event: RatableEvent, rule: PricingRule, capUsed: Big): Rating {
  const priced = priceCharge(event, rule, { capped: capUsed });
  return {
    rule,
    appliedRate: priced.appliedRate,
    charge: priced.charge,
    cappedCharge: priced.cappedCharge,
    kind: priced.kind,
  };
}
