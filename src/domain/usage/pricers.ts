import type { PricingRule, RuleModel, Tier } from "../contracts/pricing-rule.js";
import type { TierPart } from "../invoices/invoice-lines.js";
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
  /** The quantity priced at the rule's own prices so far: what its tiers and packages count. */
  quantity: Big;
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
  /**
   * Of a model priced on the period's running quantity (graduated, volume, package): the rule's total for the
   * period before and after the event, uncapped. The charge is their difference.
   */
  running?: { before: Big; after: Big };
  /**
   * Of a graduated or volume rule: the event's share of each tier it changed, uncapped. The parts' amounts sum to
   * `running.after − running.before` exactly (the charge before any cap).
   */
  tiers?: TierPart[];
}

/** Prices one event under a rule, given the rule's running totals. Pure. */
export type Pricer = (event: RatableEvent, rule: PricingRule, totals: RuleTotals) => Priced;

/** Adjusts a priced event (a limit, a credit): runs after the pricer, in table order. Pure. */
type PricingStep = (priced: Priced, rule: PricingRule, totals: RuleTotals) => Priced;

const ZERO = new Big(0);

/** A rule's numbers, parsed once per rule object (rules and Big values are not mutated). */
interface RuleNumbers {
  /** The rule's own rate (percentage) or per-unit price (flat, package: per package); 0 when it has none. */
  rate: Big;
  fixedFee: Big | null;
  minFee: Big | null;
  maxFee: Big | null;
  packageSize: Big | null;
  tiers: readonly TierNumbers[];
  /**
   * Of a tiered rule: `filled[i]` is what tiers 0..i-1 charge when all of them are full (each tier's share
   * rounded on its own, as `graduatedShares` rounds it), so a quantity's total is one lookup and one partial tier.
   */
  filled: readonly Big[];
}

interface TierNumbers {
  upTo: Big | null;
  unit: Big;
  flat: Big | null;
  /** The quantity below the tier (the previous tier's `upTo`; 0 for the first). */
  lower: Big;
}

const parsedRules = new WeakMap<PricingRule, RuleNumbers>();
const bigOrNull = (text: string | null | undefined): Big | null => (text == null ? null : new Big(text));

function numbersOf(rule: PricingRule): RuleNumbers {
  let numbers = parsedRules.get(rule);
  if (!numbers) {
    numbers = {
      rate: new Big((rule.model === "percentage" ? rule.rate : rule.amount) ?? 0),
      fixedFee: bigOrNull(rule.fixed_fee),
      minFee: bigOrNull(rule.min_fee),
      maxFee: bigOrNull(rule.max_fee),
      packageSize: bigOrNull(rule.package_size),
      ...tierNumbers(rule.tiers ?? []),
    };
    parsedRules.set(rule, numbers);
  }
  return numbers;
}

/** The tiers' numbers and the running sums of their full shares: O(tiers) once per rule object, never per event. */
function tierNumbers(stated: readonly Tier[]): Pick<RuleNumbers, "tiers" | "filled"> {
  const tiers: TierNumbers[] = [];
  const filled: Big[] = [ZERO];
  let lower = ZERO;
  for (const t of stated) {
    const tier = { upTo: bigOrNull(t.up_to), unit: new Big(t.unit_amount), flat: bigOrNull(t.flat_amount), lower };
    tiers.push(tier);
    if (tier.upTo === null) break;
    filled.push(filled[filled.length - 1]!.plus(tierShare(tier, tier.upTo)));
    lower = tier.upTo;
  }
  return { tiers, filled };
}

/** A tier's share when the period's quantity is `quantity` (at most its `upTo`): its units times its price, plus its flat amount, rounded to 12 decimals. */
const tierShare = (tier: TierNumbers, quantity: Big): Big =>
  roundCharge(
    quantity
      .minus(tier.lower)
      .times(tier.unit)
      .plus(tier.flat ?? ZERO),
  );

/**
 * The index of the tier a period's quantity ends in: the first whose `upTo` holds it (`up_to` is inclusive), the
 * last when none does (a volume rule's last tier may be bounded). A binary search: tiers go in order of `upTo`.
 */
function tierIndexOf(tiers: readonly TierNumbers[], quantity: Big): number {
  let [low, high] = [0, tiers.length - 1];
  while (low < high) {
    const middle = (low + high) >> 1;
    const upTo = tiers[middle]!.upTo;
    if (upTo === null || !quantity.gt(upTo)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** A rule's own rate or per-unit price (0 for a model without one: graduated, volume). */
export const ruleRate = (rule: PricingRule): Big => numbersOf(rule).rate;

/** Quantity times the event's applied rate, or the rule's own rate (per-unit `amount` or `rate`), to 12 decimals. */
const perUnit: Pricer = (event, rule) => {
  const appliedRate = event.appliedRate ?? ruleRate(rule);
  const charge = roundCharge(event.quantity.times(appliedRate));
  return { kind: "usage", appliedRate, charge, cappedCharge: charge };
};

/**
 * Quantity times the rate (the event's applied rate, or the rule's), plus the rule's `fixed_fee`, then held
 * between its `min_fee` and `max_fee`: "2.9 % + 0.30, at least 0.50" is one rule. Without those fields, `perUnit`.
 */
const percentage: Pricer = (event, rule) => {
  const { fixedFee, minFee, maxFee } = numbersOf(rule);
  const appliedRate = event.appliedRate ?? ruleRate(rule);
  let charge = roundCharge(event.quantity.times(appliedRate));
  if (fixedFee !== null) charge = charge.plus(fixedFee);
  if (minFee !== null && charge.lt(minFee)) charge = minFee;
  if (maxFee !== null && charge.gt(maxFee)) charge = maxFee;
  return { kind: "usage", appliedRate, charge, cappedCharge: charge };
};

/**
 * Graduated tiers: each unit of the period is priced in the tier the period's running quantity puts it in; a
 * tier's `flat_amount` is charged once, when the period first enters it (its quantity passes the tier's lower
 * bound). `up_to` is inclusive. Each tier's share (its units times its price, plus its flat amount) is rounded
 * half-even to 12 decimals on its own, and the total is the sum of the shares: so an event's share of each tier
 * (`partsBetween`) adds up to its charge exactly. The tiers below the one the quantity ends in are full: their
 * shares are summed once per rule (`filled`), so a total costs one lookup whatever the number of tiers.
 */
function graduatedTotal(rule: PricingRule, quantity: Big): { total: Big; index: number } {
  const { tiers, filled } = numbersOf(rule);
  if (!quantity.gt(0) || tiers.length === 0) return { total: ZERO, index: -1 };
  const index = tierIndexOf(tiers, quantity);
  const tier = tiers[index]!;
  const upper = tier.upTo === null || quantity.lt(tier.upTo) ? quantity : tier.upTo;
  return { total: filled[index]!.plus(tierShare(tier, upper)), index };
}

/** A tier's part of the period's graduated total at `quantity`, whose total ends in tier `index`. */
function graduatedShare(tier: TierNumbers, i: number, quantity: Big, index: number): { quantity: Big; amount: Big } {
  if (i > index) return { quantity: ZERO, amount: ZERO };
  // A tier below the one the total ends in is full; that one holds the quantity, up to its bound.
  const full = i < index || (tier.upTo !== null && !quantity.lt(tier.upTo));
  const upper = full ? tier.upTo! : quantity;
  return { quantity: upper.minus(tier.lower), amount: tierShare(tier, upper) };
}

/**
 * The growth of each tier's share from `was` to `is`: only the tiers whose quantity or amount changed, which are
 * those from the tier the smaller quantity ends in to the one the larger ends in (the tiers below both are full
 * in both).
 */
function graduatedParts(rule: PricingRule, was: { q: Big; index: number }, is: { q: Big; index: number }): TierPart[] {
  const { tiers } = numbersOf(rule);
  const parts: TierPart[] = [];
  const from = Math.max(0, Math.min(was.index, is.index));
  for (let i = from; i <= Math.max(was.index, is.index); i++) {
    const tier = tiers[i]!;
    const before = graduatedShare(tier, i, was.q, was.index);
    const after = graduatedShare(tier, i, is.q, is.index);
    const quantity = after.quantity.minus(before.quantity);
    const amount = after.amount.minus(before.amount);
    if (!quantity.eq(0) || !amount.eq(0))
      parts.push({ upTo: tier.upTo, unit: tier.unit, flat: tier.flat, quantity, amount });
  }
  return parts;
}

/**
 * The graduated pricer: the totals of the month before and after the event give the charge (their difference),
 * and the tiers between the two give the event's parts of each tier.
 */
const graduated: Pricer = (event, rule, totals) => {
  const quantityAfter = totals.quantity.plus(event.quantity);
  const was = graduatedTotal(rule, totals.quantity);
  const is = graduatedTotal(rule, quantityAfter);
  const charge = is.total.minus(was.total);
  return {
    kind: "usage",
    appliedRate: null,
    charge,
    cappedCharge: charge,
    running: { before: was.total, after: is.total },
    tiers: graduatedParts(rule, { q: totals.quantity, index: was.index }, { q: quantityAfter, index: is.index }),
  };
};

/** The tier a period's total quantity reaches under volume pricing (undefined: no quantity, or no tiers). */
function volumeTier(rule: PricingRule, quantity: Big): TierNumbers | undefined {
  const { tiers } = numbersOf(rule);
  if (!quantity.gt(0) || tiers.length === 0) return undefined;
  return tiers[tierIndexOf(tiers, quantity)];
}

/** Volume tiers: every unit of the period at the unit price of the tier its total quantity reaches, plus that tier's flat amount. */
function volumeTotal(rule: PricingRule, quantity: Big): Big {
  const tier = volumeTier(rule, quantity);
  if (!tier) return ZERO;
  return roundCharge(quantity.times(tier.unit).plus(tier.flat ?? ZERO));
}

/**
 * The event's parts under volume pricing: the tier reached before gives back the period's quantity and total
 * before, the tier reached after takes the quantity and total after; one part when it is the same tier.
 */
function volumeParts(rule: PricingRule, before: Big, after: Big): TierPart[] {
  const was = volumeTier(rule, before);
  const is = volumeTier(rule, after);
  const parts: TierPart[] = [];
  const terms = (t: TierNumbers) => ({ upTo: t.upTo, unit: t.unit, flat: t.flat });
  if (was) parts.push({ ...terms(was), quantity: ZERO.minus(before), amount: ZERO.minus(volumeTotal(rule, before)) });
  if (is) {
    const quantity = after;
    const amount = volumeTotal(rule, after);
    const same = was === is ? parts.pop() : undefined;
    parts.push({
      ...terms(is),
      quantity: same ? quantity.plus(same.quantity) : quantity,
      amount: same ? amount.plus(same.amount) : amount,
    });
  }
  return parts.filter((p) => !p.quantity.eq(0) || !p.amount.eq(0));
}

/** Packages: the period's quantity in started packages of `package_size`, each at `amount`. */
function packageTotal(rule: PricingRule, quantity: Big): Big {
  const { packageSize, rate } = numbersOf(rule);
  if (packageSize === null || !quantity.gt(0)) return ZERO;
  // The smallest whole number of packages that holds the quantity, found exactly (a quotient at Big.DP rounds).
  let packages = quantity.div(packageSize).round(0, Big.roundDown);
  while (packages.times(packageSize).gt(quantity)) packages = packages.minus(1);
  while (packages.times(packageSize).lt(quantity)) packages = packages.plus(1);
  return roundCharge(packages.times(rate));
}

/**
 * A model priced on the period's running quantity: the event is charged what the rule's total for the period
 * grows by, so a line's events always sum to its amount. Under volume pricing that growth may be negative: the
 * event that moves the period into a cheaper tier lowers the price of every unit before it.
 */
const onRunningQuantity =
  (
    total: (rule: PricingRule, quantity: Big) => Big,
    parts?: (rule: PricingRule, before: Big, after: Big) => TierPart[],
  ): Pricer =>
  (event, rule, totals) => {
    const quantityAfter = totals.quantity.plus(event.quantity);
    const before = total(rule, totals.quantity);
    const after = total(rule, quantityAfter);
    const charge = after.minus(before);
    const priced: Priced = {
      kind: "usage",
      appliedRate: null,
      charge,
      cappedCharge: charge,
      running: { before, after },
    };
    if (parts) priced.tiers = parts(rule, totals.quantity, quantityAfter);
    return priced;
  };

/** A pre-calculated fee is billed as it is, whatever the rule's model, and never counts against a cap. */
const asSent: Pricer = (event) => ({
  kind: "fee",
  appliedRate: null,
  charge: event.feeAmount ?? ZERO,
  cappedCharge: ZERO,
});

/**
 * The pricers, by the rule's model (docs/decisions.md, "Rating" 4; docs/api.md, "Price models"). A new model is a
 * new entry here: `RuleModel` lists the models a rule may name, so the table must have one for each.
 */
export const PRICERS: Readonly<Record<RuleModel, Pricer>> = {
  flat: perUnit,
  percentage,
  graduated,
  volume: onRunningQuantity(volumeTotal, volumeParts),
  package: onRunningQuantity(packageTotal),
};

/** The models priced on the period's running quantity: their events need the stored totals (the locking path). */
const RUNNING_MODELS: ReadonlySet<RuleModel> = new Set(["graduated", "volume", "package"]);

/** Whether pricing an event under this rule needs what the rule has charged so far in the period. */
export const readsRunningTotals = (rule: PricingRule): boolean =>
  rule.monthly_cap !== null || RUNNING_MODELS.has(rule.model);

/** Whether an event under this rule may carry its own `applied_rate` (a model with one price per unit). */
export const takesAppliedRate = (rule: PricingRule): boolean => !RUNNING_MODELS.has(rule.model);

/**
 * The monthly cap (docs/decisions.md, "Rating" 5): the event that crosses it is charged the room left, later ones 0.
 * Under a model priced on the running quantity, the rule's capped total follows its total: min(cap, after) −
 * min(cap, before). Fees are uncapped.
 */
const monthlyCap: PricingStep = (priced, rule, totals) => {
  if (rule.monthly_cap === null || priced.kind !== "usage") return priced;
  const cap = new Big(rule.monthly_cap);
  if (priced.running) {
    const { before, after } = priced.running;
    const charge = (after.lt(cap) ? after : cap).minus(before.lt(cap) ? before : cap);
    return { ...priced, charge, cappedCharge: charge };
  }
  const room = cap.minus(totals.capped);
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
  const quantity = priced.running ? totals.quantity.plus(event.quantity) : totals.quantity;
  return { priced, totals: { capped: totals.capped.plus(priced.cappedCharge), quantity } };
}
