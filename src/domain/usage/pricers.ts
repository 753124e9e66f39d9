import type { PricingRule, RuleModel } from "../contracts/pricing-rule.js";
import { Big, roundCharge } from "../kernel/money.js";

/** What pricing needs to know of an event. */
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

/** What the rule has charged so far in the event's service period (the running totals of its lines). */
export interface RuleTotals {
  /** The part of its charges that counts against its monthly cap. */
  capped: Big;
}

/** One event's charge, as a pricer and then each step after pricing leave it. */
export interface Priced {
  kind: LineKind;
  /** The rate or per-unit price used; null when a pre-calculated fee was billed as is. */
  appliedRate: Big | null;
  /** The charge (`rated_amount`), full precision. */
  charge: Big;
  /** The part of the charge that counts against the rule's monthly cap (rate-based charges only). */
  cappedCharge: Big;
}

/** Prices one event under a rule, given the rule's running totals. Pure. */
export type Pricer = (event: RatableEvent, rule: PricingRule, totals: RuleTotals) => Priced;

/** Adjusts a priced event (a limit, a credit): runs after the pricer, in table order. Pure. */
type PricingStep = (priced: Priced, rule: PricingRule, totals: RuleTotals) => Priced;

const ZERO = new Big(0);

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

/** Quantity times the event's applied rate, or the rule's own rate (per-unit `amount` or `rate`), to 12 decimals. */
const perUnit: Pricer = (event, rule) => {
  const appliedRate = event.appliedRate ?? ruleRate(rule);
  const charge = roundCharge(event.quantity.times(appliedRate));
  return { kind: "usage", appliedRate, charge, cappedCharge: charge };
};

/** A pre-calculated fee is billed as it is, whatever the rule's model, and never counts against a cap. */
const asSent: Pricer = (event) => ({
  kind: "fee",
  appliedRate: null,
  charge: event.feeAmount ?? ZERO,
  cappedCharge: ZERO,
});

/**
 * The pricers, by the rule's model (docs/decisions.md, "Rating" 4). A new model (tiered, volume, package) is a new
 * entry here: `RuleModel` lists the models a rule may name, so the table must have one for each.
 */
export const PRICERS: Readonly<Record<RuleModel, Pricer>> = {
  flat: perUnit,
  percentage: perUnit,
};

/**
 * The monthly cap (docs/decisions.md, "Rating" 5): the event that crosses it is charged the room left, later ones 0.
 * Fees are uncapped.
 */
const monthlyCap: PricingStep = (priced, rule, totals) => {
  if (rule.monthly_cap === null || priced.kind !== "usage") return priced;
  const room = new Big(rule.monthly_cap).minus(totals.capped);
  if (!priced.charge.gt(room)) return priced;
  const charge = room.gt(0) ? room : new Big(0);
  return { ...priced, charge, cappedCharge: charge };
};

/**
 * What runs after the pricer, in order. The monthly minimum is not a step of an event: it is the invoice's
 * true-up, derived when the invoice is read (`billInvoice` in invoices/invoice-figures.ts).
 */
const STEPS: readonly PricingStep[] = [monthlyCap];

/** The pricer for an event under a rule: a fee is billed as sent, anything else by the rule's model. */
export const pricerFor = (event: RatableEvent, rule: PricingRule): Pricer =>
  event.feeAmount !== null ? asSent : PRICERS[rule.model];

/** One event's charge: its pricer, then every step after pricing. Pure. */
export function priceCharge(event: RatableEvent, rule: PricingRule, totals: RuleTotals): Priced {
  let priced = pricerFor(event, rule)(event, rule, totals);
  for (const step of STEPS) priced = step(priced, rule, totals);
  return priced;
}

/**
 * Prices one event and returns the rule's new running totals too. Ingestion takes only the charge
 * (`priceCharge`): the line book keeps the running totals of the lines it records on.
 */
export function price(
  event: RatableEvent,
  rule: PricingRule,
  totals: RuleTotals,
): { priced: Priced; totals: RuleTotals } {
  const priced = priceCharge(event, rule, totals);
  return { priced, totals: { capped: totals.capped.plus(priced.cappedCharge) } };
}
