/**
 * Property-based rating tests (issue 8): the random rule sets and events both property files draw, and a slow,
 * independent reference of docs/decisions.md, "Money", "Rating an event" and "Invoices", in plain BigInt arithmetic.
 *
 * The reference deliberately shares nothing with the code under test: no big.js, no pricers.ts, no
 * invoice-lines.ts. Decimals are read from their strings into integers of 10^-12 (a charge's precision), a
 * product is taken in 10^-24 and rounded half-even back to 10^-12, line amounts are rounded half-even to the
 * currency's minor unit.
 */
import fc from "fast-check";

// ---------------------------------------------------------------------------------------------------------
// fast-check settings: FC_SEED replays a run, FC_RUNS turns a suite into a soak.

/** `{ numRuns, seed? }` for fc.assert: FC_RUNS overrides `defaultRuns`, FC_SEED fixes the seed. */
export function fcParams(defaultRuns: number): { numRuns: number; seed?: number } {
  const runs = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : defaultRuns;
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`FC_RUNS must be a positive integer, got '${process.env.FC_RUNS}'`);
  const seedText = process.env.FC_SEED;
  if (seedText === undefined || seedText === "") return { numRuns: runs };
  const seed = Number(seedText);
  if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer, got '${seedText}'`);
  return { numRuns: runs, seed };
}

/**
 * Wraps an expensive async property so that shrinking stops after `FC_SHRINK_SECONDS` (default 60) from the
 * first failure: later candidates pass without running, so fast-check reports the smallest failing case
 * found so far, which did fail. Without it a failing case through the database can shrink for many minutes.
 */
export function withShrinkBudget<A extends unknown[]>(
  run: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  const budgetMs = Number(process.env.FC_SHRINK_SECONDS ?? 60) * 1000;
  let firstFailure: number | null = null;
  let warned = false;
  return async (...args: A) => {
    if (firstFailure !== null && Date.now() - firstFailure > budgetMs) {
      if (!warned)
        console.warn(
          `shrinking stopped after ${budgetMs / 1000} s (FC_SHRINK_SECONDS): the counterexample may not be minimal`,
        );
      warned = true;
      return;
    }
    try {
      await run(...args);
    } catch (error) {
      firstFailure ??= Date.now();
      throw error;
    }
  };
}

// ---------------------------------------------------------------------------------------------------------
// Fixed-point decimals as BigInt.

/** Fractional digits of a charge (docs/decisions.md, "Money"): the reference's unit is 10^-12. */
export const SCALE = 12;
const TEN = 10n;
const pow10 = (n: number): bigint => TEN ** BigInt(n);

/** A plain decimal string ("12", "0.5", "-3.250") as an integer of 10^-scale; throws when it has more digits. */
export function toUnits(text: string, scale = SCALE): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`not a plain decimal: '${text}'`);
  const [, sign, whole, fraction = ""] = match;
  const trimmed = fraction.replace(/0+$/, "");
  if (trimmed.length > scale) throw new Error(`'${text}' has more than ${scale} fractional digits`);
  const value = BigInt(whole!) * pow10(scale) + BigInt(trimmed.padEnd(scale, "0") || "0");
  return sign === "-" ? -value : value;
}

/** An integer of 10^-scale as a plain decimal string without trailing zeros ("12.5", "0", "-0.001"). */
export function fromUnits(value: bigint, scale = SCALE): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / pow10(scale);
  const fraction = (abs % pow10(scale)).toString().padStart(scale, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** Rounds an integer of 10^-from to an integer of 10^-to (to <= from), half to even. */
export function roundHalfEven(value: bigint, from: number, to: number): bigint {
  if (to > from) throw new Error("roundHalfEven only drops digits");
  const divisor = pow10(from - to);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  let quotient = abs / divisor;
  const twice = (abs % divisor) * 2n;
  if (twice > divisor || (twice === divisor && quotient % 2n === 1n)) quotient += 1n;
  return negative ? -quotient : quotient;
}

/** a * b for two integers of 10^-12, rounded half-even to 10^-12. */
export const mulCharge = (a: bigint, b: bigint): bigint => roundHalfEven(a * b, 2 * SCALE, SCALE);

const minBig = (a: bigint, b: bigint) => (a < b ? a : b);

/** n / d (d > 0, n >= 0) rounded half-even to an integer. */
function divHalfEven(n: bigint, d: bigint): bigint {
  let quotient = n / d;
  const twice = (n % d) * 2n;
  if (twice > d || (twice === d && quotient % 2n === 1n)) quotient += 1n;
  return quotient;
}

/**
 * The unit price of a fee line (docs/decisions.md, "Invoices": amount / quantity), to 12 decimals, half-even, exactly;
 * 0 for a zero quantity. `amountMinor` is in 10^-exponent, `quantity` and the result in 10^-12.
 */
export const feeUnitPrice = (amountMinor: bigint, exponent: number, quantity: bigint): bigint =>
  quantity === 0n ? 0n : divHalfEven(amountMinor * pow10(SCALE - exponent) * pow10(SCALE), quantity);

// ---------------------------------------------------------------------------------------------------------
// The model: rules and events as a client writes them.

export interface RuleSpec {
  /** Stable name of the rule in the scenario; the service gives each contract its own rule ids. */
  key: string;
  /** The rule's name when it has one of its own (the sample's): its usage line is named after it. */
  name?: string;
  metric: string;
  model: "flat" | "percentage" | "graduated" | "volume" | "package";
  /**
   * The per-unit `amount` of a flat rule, the `rate` of a percentage rule, a package rule's `amount` per package,
   * a decimal string; "0" for graduated and volume rules (their prices are in `tiers`).
   */
  price: string;
  /** graduated and volume: `up_to` (null on the last), unit amount, flat amount; decimal strings. */
  tiers?: readonly { upTo: string | null; unit: string; flat: string | null }[];
  /** package: units per package, an integer string. */
  packageSize?: string;
  /** percentage: fixed fee added per event, and the bounds of one event's charge. */
  fixedFee?: string | null;
  minFee?: string | null;
  maxFee?: string | null;
  /** A money string with at most the currency's minor-unit digits, or null. */
  cap: string | null;
  counterparty: string | null;
  counterpartySide: string | null;
}

export interface EventSpec {
  id: string;
  metric: string;
  /** Decimal strings. */
  quantity: string;
  fee: string | null;
  appliedRate: string | null;
  counterparty: string | null;
  counterpartySide: string | null;
  /** Day of March 2026 (16..31) and second of that day: the timestamp the service test sends. */
  day: number;
  second: number;
  /** Whether the service test sends the decimals as JSON numbers (else as strings). */
  asNumbers: boolean;
}

/** The rule that prices an event (docs/decisions.md, "Rating" 3), written again: most specific match, first added on ties. */
function referenceSelect(
  rules: readonly RuleSpec[],
  event: Pick<EventSpec, "metric" | "counterparty" | "counterpartySide">,
): RuleSpec | undefined {
  let best: RuleSpec | undefined;
  let bestScore = -1;
  for (const rule of rules) {
    if (rule.metric !== event.metric) continue;
    let score = 0;
    let ok = true;
    for (const [wanted, given] of [
      [rule.counterparty, event.counterparty],
      [rule.counterpartySide, event.counterpartySide],
    ] as const) {
      if (wanted === null) continue;
      if (wanted !== given) ok = false;
      score += 1;
    }
    if (ok && score > bestScore) {
      best = rule;
      bestScore = score;
    }
  }
  return best;
}

export interface RefLine {
  /** `usage|<rule key>|<unit price units>`, `usage|<rule key>` (running-quantity rules) or `fee|<metric>`. */
  key: string;
  kind: "usage" | "fee";
  ruleKey: string;
  metric: string;
  description: string;
  quantity: bigint;
  /** The rate or per-unit price (usage lines); on fee and running-quantity lines amount / quantity to 12 decimals. */
  unitPrice: bigint | null;
  /** Exact sum of the charges, 10^-12. */
  chargeTotal: bigint;
  /** The part that counts against the rule's cap, 10^-12. */
  cappedTotal: bigint;
  /** chargeTotal rounded half-even to the minor unit, in minor units (10^-exponent). */
  amountMinor: bigint;
}

export type RefEvent =
  | { status: "rejected"; code: "unknown_metric" | "invalid_event" }
  | { status: "duplicate" }
  | {
      status: "rated";
      ruleKey: string;
      lineKey: string;
      charge: bigint;
      uncappedCharge: bigint;
      kind: "usage" | "fee";
    };

export interface RefInvoice {
  lines: Map<string, RefLine>;
  /** Per event id, in the order the events were first met. */
  events: Map<string, RefEvent>;
  /** Per order position: what the reference decided for that copy. */
  outcomes: RefEvent[];
  /** Sum of the line amounts, minor units. */
  totalMinor: bigint;
  /** Per rule key: its capped charges and what they would have been without the cap (10^-12). */
  cappedByRule: Map<string, bigint>;
  uncappedByRule: Map<string, bigint>;
}

/** The models whose events are priced on the month's running quantity: one line per rule, no unit price. */
const RUNNING: ReadonlySet<RuleSpec["model"]> = new Set(["graduated", "volume", "package"]);
export const pricedOnRunningQuantity = (rule: RuleSpec): boolean => RUNNING.has(rule.model);

/**
 * The reference's per-event pricers, as the service's table (src/domain/usage/pricers.ts): an event's quantity and
 * unit price in, its charge out (10^-12). Flat multiplies; percentage multiplies, adds its fixed fee and holds the
 * result between its bounds.
 */
const REF_PRICERS: Record<"flat" | "percentage", (quantity: bigint, unitPrice: bigint, rule: RuleSpec) => bigint> = {
  flat: mulCharge,
  percentage: (quantity, rate, rule) => {
    let charge = mulCharge(quantity, rate) + (rule.fixedFee ? toUnits(rule.fixedFee) : 0n);
    if (rule.minFee && charge < toUnits(rule.minFee)) charge = toUnits(rule.minFee);
    if (rule.maxFee && charge > toUnits(rule.maxFee)) charge = toUnits(rule.maxFee);
    return charge;
  },
};

/**
 * A running-quantity rule's total for a month of `quantity` (10^-12): graduated sums each tier's share (and the
 * flat amount of each tier entered), each share rounded half-even to 10^-12 on its own (so that per-tier parts add
 * up exactly); volume prices the whole at the tier reached, rounded once; package charges every started package.
 */
export function referenceTotal(rule: RuleSpec, quantity: bigint): bigint {
  if (quantity <= 0n) return 0n;
  const tiers = (rule.tiers ?? []).map((t) => ({
    upTo: t.upTo === null ? null : toUnits(t.upTo),
    unit: toUnits(t.unit),
    flat: t.flat === null ? 0n : toUnits(t.flat),
  }));
  const round = (value24: bigint) => roundHalfEven(value24, 2 * SCALE, SCALE);
  if (rule.model === "graduated") {
    let total = 0n;
    let lower = 0n;
    for (const tier of tiers) {
      if (quantity <= lower) break;
      const upper = tier.upTo === null || quantity < tier.upTo ? quantity : tier.upTo;
      total += round((upper - lower) * tier.unit + tier.flat * pow10(SCALE));
      if (tier.upTo === null) break;
      lower = tier.upTo;
    }
    return total;
  }
  if (rule.model === "volume") {
    const tier = tiers.find((t) => t.upTo === null || quantity <= t.upTo) ?? tiers.at(-1);
    return tier ? round(quantity * tier.unit + tier.flat * pow10(SCALE)) : 0n;
  }
  const size = toUnits(rule.packageSize ?? "1");
  return ((quantity + size - 1n) / size) * toUnits(rule.price);
}

/** The reference's steps after pricing, in order: the monthly cap (the charge, the rule's capped total so far). */
const REF_STEPS: ReadonlyArray<(charge: bigint, rule: RuleSpec, used: bigint) => bigint> = [
  (charge, rule, used) => {
    if (rule.cap === null) return charge;
    const room = toUnits(rule.cap) - used;
    return minBig(charge, room > 0n ? room : 0n);
  },
];

const usageDescriptionOf = (rule: RuleSpec): string => {
  if (rule.name !== undefined && rule.name !== rule.metric) return rule.name;
  const scope = [rule.counterparty, rule.counterpartySide].filter((s) => s !== null);
  return scope.length > 0 ? `${rule.metric} usage (${scope.join(", ")})` : `${rule.metric} usage`;
};

/**
 * Rates `events` in this order against `rules` the slow way. An id met again is a duplicate and changes
 * nothing; an event without a matching rule is rejected. `exponent` is the currency's minor unit.
 */
export function referenceInvoice(
  rules: readonly RuleSpec[],
  events: readonly EventSpec[],
  exponent: number,
): RefInvoice {
  const lines = new Map<string, RefLine>();
  const seen = new Map<string, RefEvent>();
  const outcomes: RefEvent[] = [];
  const cappedByRule = new Map<string, bigint>();
  const uncappedByRule = new Map<string, bigint>();
  const runningQuantity = new Map<string, bigint>();
  for (const event of events) {
    if (seen.has(event.id) && seen.get(event.id)!.status !== "rejected") {
      outcomes.push({ status: "duplicate" });
      continue;
    }
    const rule = referenceSelect(rules, event);
    // An applied rate cannot price a running-quantity rule's event (docs/decisions.md, "Rating" 7).
    if (!rule || (event.fee === null && event.appliedRate !== null && pricedOnRunningQuantity(rule))) {
      const outcome: RefEvent = { status: "rejected", code: rule ? "invalid_event" : "unknown_metric" };
      seen.set(event.id, outcome);
      outcomes.push(outcome);
      continue;
    }
    const quantity = toUnits(event.quantity);
    let outcome: RefEvent;
    if (event.fee !== null) {
      const charge = toUnits(event.fee);
      const key = `fee|${event.metric}`;
      const line = lines.get(key) ?? {
        key,
        kind: "fee" as const,
        ruleKey: rule.key,
        metric: event.metric,
        description: `${event.metric} fees`,
        quantity: 0n,
        unitPrice: null,
        chargeTotal: 0n,
        cappedTotal: 0n,
        amountMinor: 0n,
      };
      line.quantity += quantity;
      line.chargeTotal += charge;
      lines.set(key, line);
      outcome = { status: "rated", ruleKey: rule.key, lineKey: key, charge, uncappedCharge: charge, kind: "fee" };
    } else {
      const running = pricedOnRunningQuantity(rule);
      const unitPrice = running ? null : toUnits(event.appliedRate ?? rule.price);
      const used = cappedByRule.get(rule.key) ?? 0n;
      let uncapped: bigint;
      let charge: bigint;
      if (unitPrice === null) {
        // The month's total after the event less before it; under a cap, of the totals held to the cap.
        const before = runningQuantity.get(rule.key) ?? 0n;
        runningQuantity.set(rule.key, before + quantity);
        const totalBefore = referenceTotal(rule, before);
        const totalAfter = referenceTotal(rule, before + quantity);
        uncapped = totalAfter - totalBefore;
        const cap = rule.cap === null ? null : toUnits(rule.cap);
        charge = cap === null ? uncapped : minBig(cap, totalAfter) - minBig(cap, totalBefore);
      } else {
        uncapped = REF_PRICERS[rule.model as "flat" | "percentage"](quantity, unitPrice, rule);
        charge = REF_STEPS.reduce((c, step) => step(c, rule, used), uncapped);
      }
      cappedByRule.set(rule.key, used + charge);
      uncappedByRule.set(rule.key, (uncappedByRule.get(rule.key) ?? 0n) + uncapped);
      const key = unitPrice === null ? `usage|${rule.key}` : `usage|${rule.key}|${unitPrice}`;
      const line = lines.get(key) ?? {
        key,
        kind: "usage" as const,
        ruleKey: rule.key,
        metric: event.metric,
        description: usageDescriptionOf(rule),
        quantity: 0n,
        unitPrice,
        chargeTotal: 0n,
        cappedTotal: 0n,
        amountMinor: 0n,
      };
      line.quantity += quantity;
      line.chargeTotal += charge;
      line.cappedTotal += charge;
      lines.set(key, line);
      outcome = { status: "rated", ruleKey: rule.key, lineKey: key, charge, uncappedCharge: uncapped, kind: "usage" };
    }
    seen.set(event.id, outcome);
    outcomes.push(outcome);
  }
  let totalMinor = 0n;
  for (const line of lines.values()) {
    line.amountMinor = roundHalfEven(line.chargeTotal, SCALE, exponent);
    // A fee line's unit price, and a running-quantity rule's line's (it has no single rate): amount ÷ quantity.
    if (line.kind === "fee" || line.unitPrice === null)
      line.unitPrice = feeUnitPrice(line.amountMinor, exponent, line.quantity);
    totalMinor += line.amountMinor;
  }
  return { lines, events: seen, outcomes, totalMinor, cappedByRule, uncappedByRule };
}

/**
 * The invoice's figures once projected with a monthly minimum (docs/decisions.md, "Invoices"): the true-up is
 * the minimum, rounded half-even to the minor unit, less the line amounts, when positive; null when the lines
 * reach it. Minor units throughout.
 */
export function billReference(
  ref: RefInvoice,
  minimum: string,
  exponent: number,
): { trueUpMinor: bigint | null; totalMinor: bigint } {
  const shortfall = roundHalfEven(toUnits(minimum), SCALE, exponent) - ref.totalMinor;
  return shortfall > 0n
    ? { trueUpMinor: shortfall, totalMinor: ref.totalMinor + shortfall }
    : { trueUpMinor: null, totalMinor: ref.totalMinor };
}

/**
 * A rule spec as the API takes it (POST …/pricing-rules): the one translation both property suites use. A
 * percentage rate above 1 says it is meant.
 */
export function apiRuleFields(spec: RuleSpec): Record<string, unknown> {
  return {
    type: "usage",
    model: spec.model,
    metric: spec.metric,
    ...(spec.model === "flat" || spec.model === "package" ? { amount: spec.price } : {}),
    ...(spec.model === "percentage" ? { rate: spec.price } : {}),
    ...(spec.model === "percentage" && toUnits(spec.price) > pow10(SCALE) ? { allow_rate_above_one: true } : {}),
    ...(spec.tiers
      ? { tiers: spec.tiers.map((t) => ({ up_to: t.upTo, unit_amount: t.unit, flat_amount: t.flat })) }
      : {}),
    ...(spec.packageSize ? { package_size: spec.packageSize } : {}),
    ...(spec.fixedFee ? { fixed_fee: spec.fixedFee } : {}),
    ...(spec.minFee ? { min_fee: spec.minFee } : {}),
    ...(spec.maxFee ? { max_fee: spec.maxFee } : {}),
    ...(spec.cap !== null ? { monthly_cap: spec.cap } : {}),
    ...(spec.counterparty !== null ? { counterparty: spec.counterparty } : {}),
    ...(spec.counterpartySide !== null ? { counterparty_side: spec.counterpartySide } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Generators.

/** A non-negative decimal string below `below` with up to `maxDigits` fractional digits (trailing zeros kept). */
function decimalString(below: number, maxDigits: number): fc.Arbitrary<string> {
  return fc.integer({ min: 0, max: maxDigits }).chain((digits) =>
    fc.bigInt({ min: 0n, max: BigInt(below) * pow10(digits) - 1n }).map((n) => {
      if (digits === 0) return n.toString();
      const text = n.toString().padStart(digits + 1, "0");
      return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
    }),
  );
}

export interface ScenarioOptions {
  metrics: readonly string[];
  counterparties: readonly string[];
  sides: readonly string[];
  /** Minor-unit exponent of the currency, for caps. */
  exponent: number;
  /** Fractional digits of prices, quantities, rates and fees. */
  digits: number;
  maxRules: number;
  maxEvents: number;
  /** Whether rules may have a monthly cap at all. */
  caps: boolean;
  /** The models rules are drawn from (default: every model). */
  models?: readonly RuleSpec["model"][];
  /** Rules already on the contract, first in rule order (the sample program's, in the service test). */
  baseRules?: readonly RuleSpec[];
}

export interface Scenario {
  rules: RuleSpec[];
  /** The rules the test adds (rules minus baseRules). */
  added: RuleSpec[];
  events: EventSpec[];
}

/** `arb` in one case out of `inverse`, else null. */
const sometimes = <T>(arb: fc.Arbitrary<T>, inverse: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: inverse - 1 }, { arbitrary: arb, weight: 1 });

/** Values that put charges and line sums on exact half minor units now and then (half-even's business). */
const TIE_PRICES = ["0.005", "0.015", "0.125", "0.0025", "2.5", "0.5", "1.005"];
const TIE_QUANTITIES = ["1", "2", "3", "10", "0.5", "1.5"];

const priceArb = (below: number, digits: number) =>
  fc.oneof(
    { arbitrary: decimalString(below, digits), weight: 4 },
    { arbitrary: fc.constantFrom(...TIE_PRICES), weight: 1 },
  );

const quantityArb = (digits: number) =>
  fc.oneof(
    { arbitrary: decimalString(1_000_000, digits), weight: 3 },
    { arbitrary: decimalString(100, Math.min(digits, 2)), weight: 2 },
    { arbitrary: fc.constantFrom(...TIE_QUANTITIES), weight: 1 },
    // Tiny quantities: a fee line's unit price (amount / quantity) gets large and long.
    { arbitrary: fc.integer({ min: 1, max: 999 }).map((n) => `0.${String(n).padStart(digits, "0")}`), weight: 1 },
  );

/** A cap in minor units: mostly small enough that the events reach it. */
const capArb = (exponent: number) =>
  fc
    .oneof(
      { arbitrary: fc.bigInt({ min: 0n, max: 100n * pow10(exponent) }), weight: 2 },
      { arbitrary: fc.bigInt({ min: 0n, max: 10_000n * pow10(exponent) }), weight: 2 },
      { arbitrary: fc.bigInt({ min: 0n, max: 500_000_000n * pow10(exponent) }), weight: 1 },
    )
    .map((minor) => fromUnits(minor * pow10(SCALE - exponent)));

const ALL_MODELS: readonly RuleSpec["model"][] = ["flat", "percentage", "graduated", "volume", "package"];

/** One to three tiers in order, the last unbounded; bounds mostly within the quantities events send. */
const tiersArb = (digits: number) =>
  fc
    .array(
      fc.record({
        width: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 500_000 })),
        unit: priceArb(10, digits),
        flat: sometimes(decimalString(100, Math.min(digits, 2)), 3),
      }),
      { minLength: 1, maxLength: 3 },
    )
    .map((seeds) => {
      let upTo = 0;
      return seeds.map((seed, i) => {
        upTo += seed.width;
        return { upTo: i === seeds.length - 1 ? null : String(upTo), unit: seed.unit, flat: seed.flat };
      });
    });

/** A percentage rule's fixed fee and bounds, each present now and then; the lower bound never above the upper. */
const feesArb = (digits: number) =>
  fc
    .record({
      fixedFee: sometimes(decimalString(5, Math.min(digits, 4)), 2),
      bounds: fc.tuple(sometimes(decimalString(20, 2), 3), sometimes(decimalString(5_000, 2), 3)),
    })
    .map(({ fixedFee, bounds: [a, b] }) => {
      const [minFee, maxFee] = a !== null && b !== null && toUnits(a) > toUnits(b) ? [b, a] : [a, b];
      return { fixedFee, minFee, maxFee };
    });

const ruleArb = (o: ScenarioOptions) =>
  fc.record({
    metric: fc.constantFrom(...o.metrics),
    model: fc.constantFrom(...(o.models ?? ALL_MODELS)),
    flatPrice: priceArb(1000, o.digits),
    rate: priceArb(2, o.digits),
    tiers: tiersArb(o.digits),
    packageSize: fc.integer({ min: 1, max: 1000 }).map(String),
    fees: feesArb(o.digits),
    cap: o.caps ? sometimes(capArb(o.exponent), 2) : fc.constant(null),
    counterparty: sometimes(fc.constantFrom(...o.counterparties), 3),
    counterpartySide: sometimes(fc.constantFrom(...o.sides), 3),
  });

const eventSeedArb = (o: ScenarioOptions) =>
  fc.record({
    ruleIndex: fc.nat(),
    /** 0: the metric of the chosen rule; 1: any metric (may have no rule). */
    metricFrom: fc.constantFrom(0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
    anyMetric: fc.constantFrom(...o.metrics),
    quantity: quantityArb(o.digits),
    fee: sometimes(decimalString(100_000, o.digits), 6),
    /** 0 none, 1 a random rate, 2 the rule's own price written differently. */
    rateKind: fc.constantFrom(0, 0, 0, 0, 0, 0, 1, 2),
    rate: priceArb(1000, o.digits),
    counterpartyFrom: fc.constantFrom("rule", "rule", "rule", "rule", "none", "random"),
    counterparty: fc.constantFrom(...o.counterparties),
    sideFrom: fc.constantFrom("rule", "rule", "rule", "none", "random"),
    side: fc.constantFrom(...o.sides),
    day: fc.integer({ min: 16, max: 31 }),
    second: fc.integer({ min: 0, max: 86_399 }),
    asNumbers: fc.boolean(),
    /** Re-send an earlier event instead (same id and body): a duplicate. */
    repeatOf: sometimes(fc.nat(), 12),
  });

/** Random rules (with `baseRules` first) and events that mostly hit them. */
export function scenarioArb(o: ScenarioOptions): fc.Arbitrary<Scenario> {
  return fc
    .record({
      rules: fc.array(ruleArb(o), { minLength: 1, maxLength: o.maxRules, size: "max" }),
      events: fc.array(eventSeedArb(o), { minLength: 1, maxLength: o.maxEvents, size: "max" }),
    })
    .map(({ rules: ruleSeeds, events: eventSeeds }) => {
      const added: RuleSpec[] = ruleSeeds.map((r, i) => ({
        key: `r${i}`,
        metric: r.metric,
        model: r.model,
        price: r.model === "flat" || r.model === "package" ? r.flatPrice : r.model === "percentage" ? r.rate : "0",
        ...(r.model === "graduated" || r.model === "volume" ? { tiers: r.tiers } : {}),
        ...(r.model === "package" ? { packageSize: r.packageSize } : {}),
        ...(r.model === "percentage" ? r.fees : {}),
        cap: r.cap,
        counterparty: r.counterparty,
        counterpartySide: r.counterparty === null ? null : r.counterpartySide,
      }));
      const rules = [...(o.baseRules ?? []), ...added];
      const events: EventSpec[] = [];
      eventSeeds.forEach((e, i) => {
        if (e.repeatOf !== null && events.length > 0) {
          events.push({ ...events[e.repeatOf % events.length]! });
          return;
        }
        const rule = rules[e.ruleIndex % rules.length]!;
        const metric = e.metricFrom === 0 ? rule.metric : e.anyMetric;
        const counterparty =
          e.counterpartyFrom === "rule" ? rule.counterparty : e.counterpartyFrom === "random" ? e.counterparty : null;
        const counterpartySide =
          e.sideFrom === "rule" ? rule.counterpartySide : e.sideFrom === "random" ? e.side : null;
        // The rule's own price with a trailing zero: the same unit price, so the same line.
        const ownPrice = rule.price.includes(".") ? `${rule.price}0` : `${rule.price}.0`;
        const appliedRate = e.fee !== null ? null : e.rateKind === 1 ? e.rate : e.rateKind === 2 ? ownPrice : null;
        events.push({
          id: `e${i}`,
          metric,
          quantity: e.quantity,
          fee: e.fee,
          appliedRate,
          counterparty,
          counterpartySide,
          day: e.day,
          second: e.second,
          asNumbers: e.asNumbers,
        });
      });
      return { rules, added, events };
    });
}

/** Sort keys to shuffle a list of up to `max` items: shrinks towards the identity order. */
export const shuffleKeysArb = (max: number) => fc.array(fc.nat({ max: 1000 }), { minLength: max, maxLength: max });

/** `items` reordered by `keys` (stable: equal keys keep their order). */
export function shuffleBy<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, i, k: keys[i] ?? 0 }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.item);
}

/** `items` cut into consecutive non-empty batches; `sizes` are tried in turn (each at least 1). */
export function splitBy<T>(items: readonly T[], sizes: readonly number[]): T[][] {
  const batches: T[][] = [];
  let at = 0;
  let i = 0;
  while (at < items.length) {
    const size = Math.max(1, sizes.length > 0 ? sizes[i % sizes.length]! : items.length);
    batches.push(items.slice(at, at + size));
    at += size;
    i += 1;
  }
  return batches;
}

/** Every order of `items` (small lists only). */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

export const hasCaps = (rules: readonly RuleSpec[]) => rules.some((r) => r.cap !== null);

/** min(cap, uncapped) per capped rule: what its capped charges must add up to whatever the order. */
export function expectedCapped(rules: readonly RuleSpec[], ref: RefInvoice): Map<string, bigint> {
  const expected = new Map<string, bigint>();
  for (const rule of rules) {
    if (rule.cap === null) continue;
    expected.set(rule.key, minBig(toUnits(rule.cap), ref.uncappedByRule.get(rule.key) ?? 0n));
  }
  return expected;
}
