import { randomBytes } from "node:crypto";
import { ValidationError, type ErrorDetail } from "../kernel/errors.js";
import type { JsonNumber } from "../../platform/exact-json.js";
import {
  Big,
  CHARGE_DP,
  fractionDigits,
  minorUnitExponent,
  readDecimal,
  SUPPORTED_CURRENCIES,
  toJsonDecimal,
} from "../kernel/money.js";
import { readChargeScope, type ChargeScopeFields, type MinimumCounts } from "./minimum-terms.js";

/** A decimal as a client sends it: a JSON number (kept as text when a double cannot hold it) or a string. */
type DecimalValue = string | number | JsonNumber;

export const RULE_TYPES = ["usage", "subscription", "minimum", "one_time"] as const;
export const RULE_MODELS = ["flat", "percentage", "graduated", "volume", "package"] as const;
export type RuleType = (typeof RULE_TYPES)[number];
export type RuleModel = (typeof RULE_MODELS)[number];

/** A tier of a graduated or volume rule: units up to `up_to` (inclusive; null on the last tier, unbounded). */
export interface Tier {
  up_to: string | null;
  unit_amount: string;
  flat_amount: string | null;
}

/**
 * A pricing rule as stored in a program version. Decimals are strings; absent fields are null. The fields after
 * `pair` came with the models beyond flat and percentage and are present only when set: a rule without them (and
 * every rule stored before them) is stored and shown exactly as before.
 */
export interface PricingRule {
  id: string;
  name: string;
  type: RuleType;
  model: RuleModel;
  amount: string | null;
  rate: string | null;
  metric: string | null;
  frequency: "monthly" | null;
  monthly_cap: string | null;
  currency: string;
  counterparty: string | null;
  counterparty_side: string | null;
  pair: string | null;
  /** graduated and volume: the tiers, in order. */
  tiers?: readonly Tier[];
  /** package: units per package (a positive integer, as text); the price of a started package is `amount`. */
  package_size?: string;
  /** percentage: added to each event's charge. */
  fixed_fee?: string;
  /** percentage: the least one event is charged, fixed fee included. */
  min_fee?: string;
  /** percentage: the most one event is charged, fixed fee included. */
  max_fee?: string;
  /** percentage: a rate above 1 (100 %) is meant, not a percentage typed as a fraction. */
  allow_rate_above_one?: true;
  /** usage: its charges are collected for a third party (minimum-terms.ts): no minimum counts them, no credit pays them. */
  pass_through?: true;
  /** minimum: what it counts, when not the default (minimum-terms.ts). */
  counts?: MinimumCounts;
}

/** Rule fields as a client sends them (add: all optional but what `normalizeRule` requires; update: merged). */
export interface RuleFields extends ChargeScopeFields {
  id?: string | undefined;
  name?: string | null | undefined;
  type?: string | null | undefined;
  model?: string | null | undefined;
  amount?: DecimalValue | null | undefined;
  rate?: DecimalValue | null | undefined;
  metric?: string | null | undefined;
  frequency?: string | null | undefined;
  monthly_cap?: DecimalValue | null | undefined;
  currency?: string | null | undefined;
  counterparty?: string | null | undefined;
  counterparty_side?: string | null | undefined;
  pair?: string | null | undefined;
  tiers?: readonly TierFields[] | null | undefined;
  package_size?: DecimalValue | null | undefined;
  fixed_fee?: DecimalValue | null | undefined;
  min_fee?: DecimalValue | null | undefined;
  max_fee?: DecimalValue | null | undefined;
  allow_rate_above_one?: boolean | null | undefined;
}

/** A tier as a client sends it. */
export interface TierFields {
  up_to?: DecimalValue | null | undefined;
  unit_amount?: DecimalValue | null | undefined;
  flat_amount?: DecimalValue | null | undefined;
}

/**
 * The most tiers a graduated or volume rule may have (docs/api.md, "Limits"). Pricing an event costs a binary
 * search over them (usage/pricers.ts), but a rule's tiers are parsed, stored, shown and printed whole.
 */
export const MAX_RULE_TIERS = 250;

/**
 * The most rules a contract's program may hold, whether uploaded, previewed or added one at a time (docs/api.md,
 * "Limits"): a contract's rules are read on every usage write.
 */
export const MAX_PROGRAM_RULES = 100;

/** The models priced by tiers. */
const TIERED: readonly RuleModel[] = ["graduated", "volume"];

const newRuleId = (): string => `rule_${randomBytes(8).toString("hex")}`;

function decimalField(
  value: DecimalValue | null | undefined,
  path: string,
  maxDigits: number,
  errors: ErrorDetail[],
): Big | null {
  if (value === null || value === undefined) return null;
  const read = readDecimal(value, path, maxDigits);
  if (read instanceof Big) return read;
  errors.push({ path, message: read.message.slice(path.length + 1) });
  return null;
}

/** A money string with at least the currency's minor-unit digits: 20 → "20.00", 0.015 → "0.015". */
function moneyString(value: Big, currency: string): string {
  return value.toFixed(Math.max(minorUnitExponent(currency), fractionDigits(value)));
}

/**
 * Turns client fields into a complete, valid rule, or lists what is wrong with them. Pure.
 * Where the client leaves them out, `type` is `usage` when a metric is given and `model` is `percentage`
 * when a rate is given, so that the volume-plus-fee setup, a usage rule with a metric and rate 0, needs nothing
 * more (docs/api.md, "Pricing programs and rules").
 */
export function normalizeRule(
  fields: RuleFields,
  contractCurrency: string,
): { rule: PricingRule; errors?: undefined } | { rule?: undefined; errors: ErrorDetail[] } {
  const errors: ErrorDetail[] = [];
  const type = (fields.type ?? (fields.metric ? "usage" : undefined)) as RuleType | undefined;
  if (!type) errors.push({ path: "type", message: `is required: one of ${RULE_TYPES.join(", ")}` });
  else if (!RULE_TYPES.includes(type))
    errors.push({ path: "type", message: `must be one of ${RULE_TYPES.join(", ")}` });

  const model = (fields.model ??
    (fields.rate !== undefined && fields.rate !== null ? "percentage" : "flat")) as RuleModel;
  if (!RULE_MODELS.includes(model)) errors.push({ path: "model", message: `must be one of ${RULE_MODELS.join(", ")}` });

  const currency = (fields.currency ?? contractCurrency).toUpperCase();
  if (!SUPPORTED_CURRENCIES.has(currency))
    errors.push({ path: "currency", message: "is not a supported ISO 4217 code" });
  else if (currency !== contractCurrency) {
    errors.push({ path: "currency", message: `must be the contract's currency, ${contractCurrency}` });
  }

  const amount = decimalField(fields.amount, "amount", CHARGE_DP, errors);
  const rate = decimalField(fields.rate, "rate", CHARGE_DP, errors);
  const cap = decimalField(fields.monthly_cap, "monthly_cap", minorUnitExponent(currency), errors);
  const metric = fields.metric ?? null;
  const scoped = fields.counterparty != null || fields.counterparty_side != null || fields.pair != null;
  // "Required" means not supplied: a supplied but malformed value already has its own error above.
  const amountGiven = fields.amount != null;
  const rateGiven = fields.rate != null;

  if (type === "usage") {
    if (!metric) errors.push({ path: "metric", message: "is required on a usage rule" });
    if (model === "percentage" && !rateGiven)
      errors.push({ path: "rate", message: "is required on a percentage rule" });
    if (model === "flat" && !amountGiven)
      errors.push({ path: "amount", message: "is required on a flat rule (the price per unit)" });
    if (model === "package" && !amountGiven)
      errors.push({ path: "amount", message: "is required on a package rule (the price of each started package)" });
  } else if (type) {
    if (model !== "flat") errors.push({ path: "model", message: `must be flat on a ${type} rule` });
    if (!amountGiven) errors.push({ path: "amount", message: `is required on a ${type} rule` });
    if (metric) errors.push({ path: "metric", message: "applies to usage rules only" });
    if (cap !== null) errors.push({ path: "monthly_cap", message: "applies to usage rules only" });
    if (scoped) errors.push({ path: "counterparty", message: "counterparty scopes apply to usage rules only" });
  }
  if (model === "percentage" && amount !== null)
    errors.push({ path: "amount", message: "is for flat rules; a percentage rule has a rate" });
  if (model !== "percentage" && rate !== null)
    errors.push({ path: "rate", message: `is for percentage rules; a ${model} rule has ${priceFieldOf[model]}` });
  if (model === "percentage" && rate?.gt(1) && fields.allow_rate_above_one !== true) {
    errors.push({
      path: "rate",
      message: `is a fraction: 0.0235 is 2.35 %, so ${rate.toFixed()} is ${rate.times(100).toFixed()} %; a rate above 1 needs "allow_rate_above_one": true`,
    });
  }
  const extra = modelFields(fields, model, currency, errors);
  const scope = readChargeScope(fields, type, errors);
  if (TIERED.includes(model) && amount !== null)
    errors.push({ path: "amount", message: `is for flat and package rules; a ${model} rule prices by its tiers` });

  const frequency = fields.frequency ?? (type === "subscription" || type === "minimum" ? "monthly" : null);
  if (frequency !== null && frequency !== "monthly") errors.push({ path: "frequency", message: "must be monthly" });
  if (frequency !== null && (type === "usage" || type === "one_time")) {
    errors.push({ path: "frequency", message: `does not apply to ${type} rules` });
  }

  if (errors.length > 0) return { errors };
  return {
    rule: {
      id: fields.id ?? newRuleId(),
      name: fields.name ?? (type === "usage" ? metric! : defaultName[type!]),
      type: type!,
      model,
      amount: amount === null ? null : moneyString(amount, currency),
      rate: rate === null ? null : rate.toFixed(),
      metric,
      frequency: frequency as "monthly" | null,
      monthly_cap: cap === null ? null : moneyString(cap, currency),
      currency,
      counterparty: fields.counterparty ?? null,
      counterparty_side: fields.counterparty_side ?? null,
      pair: fields.pair ?? null,
      ...extra,
      ...scope,
    },
  };
}

/** The field that holds a model's price, for the words of a refusal. */
const priceFieldOf: Record<RuleModel, string> = {
  flat: "an amount",
  percentage: "a rate",
  graduated: "tiers",
  volume: "tiers",
  package: "an amount and a package_size",
};

/**
 * The fields of the models beyond flat and percentage, checked, as the rule stores them: only those that are set
 * (a rule without them is stored and shown exactly as before they existed).
 */
function modelFields(
  fields: RuleFields,
  model: RuleModel,
  currency: string,
  errors: ErrorDetail[],
): Pick<PricingRule, "tiers" | "package_size" | "fixed_fee" | "min_fee" | "max_fee" | "allow_rate_above_one"> {
  const out: ReturnType<typeof modelFields> = {};
  const only = (path: string, models: string) => errors.push({ path, message: `applies to ${models} rules only` });

  if (fields.tiers != null) {
    if (!TIERED.includes(model)) only("tiers", "graduated and volume");
    else {
      const tiers = readTiers(fields.tiers, currency, errors);
      if (tiers) out.tiers = tiers;
    }
  } else if (TIERED.includes(model)) {
    errors.push({ path: "tiers", message: `is required on a ${model} rule: [{up_to, unit_amount, flat_amount?}, …]` });
  }

  if (fields.package_size != null) {
    if (model !== "package") only("package_size", "package");
    else {
      const size = decimalField(fields.package_size, "package_size", 0, errors);
      if (size?.eq(0)) errors.push({ path: "package_size", message: "must be a positive integer" });
      else if (size !== null) out.package_size = size.toFixed();
    }
  } else if (model === "package") {
    errors.push({ path: "package_size", message: "is required on a package rule (units per package)" });
  }

  const fees: Partial<Record<"fixed_fee" | "min_fee" | "max_fee", Big>> = {};
  for (const name of ["fixed_fee", "min_fee", "max_fee"] as const) {
    if (fields[name] == null) continue;
    if (model !== "percentage") {
      only(name, "percentage");
      continue;
    }
    const value = decimalField(fields[name], name, CHARGE_DP, errors);
    if (value !== null) {
      fees[name] = value;
      out[name] = moneyString(value, currency);
    }
  }
  if (fees.min_fee && fees.max_fee && fees.min_fee.gt(fees.max_fee))
    errors.push({ path: "min_fee", message: `must not be above max_fee (${fees.max_fee.toFixed()})` });

  if (fields.allow_rate_above_one != null) {
    if (model !== "percentage") only("allow_rate_above_one", "percentage");
    else if (fields.allow_rate_above_one) out.allow_rate_above_one = true;
  }
  return out;
}

/**
 * Tiers in order: each `up_to` above the one before, only the last without one (null: no upper bound), which the
 * last must be, so that every quantity has a price. Money as the exact-number rules read it.
 */
function readTiers(tiers: readonly TierFields[], currency: string, errors: ErrorDetail[]): Tier[] | undefined {
  if (!Array.isArray(tiers) || tiers.length === 0 || tiers.length > MAX_RULE_TIERS) {
    errors.push({ path: "tiers", message: `must list 1 to ${MAX_RULE_TIERS} tiers` });
    return undefined;
  }
  const before = errors.length;
  const read: Tier[] = [];
  let lower: Big | null = new Big(0);
  tiers.forEach((tier, i) => {
    const path = `tiers.${i}`;
    if (tier === null || typeof tier !== "object") {
      errors.push({ path, message: "must be an object {up_to, unit_amount, flat_amount?}" });
      return;
    }
    const last = i === tiers.length - 1;
    const upTo = decimalField(tier.up_to, `${path}.up_to`, CHARGE_DP, errors);
    const unit = decimalField(tier.unit_amount, `${path}.unit_amount`, CHARGE_DP, errors);
    const flat = decimalField(tier.flat_amount, `${path}.flat_amount`, CHARGE_DP, errors);
    if (tier.unit_amount == null) errors.push({ path: `${path}.unit_amount`, message: "is required" });
    if (tier.up_to == null && !last)
      errors.push({ path: `${path}.up_to`, message: "is required but on the last tier (only the last is unbounded)" });
    if (tier.up_to != null && last)
      errors.push({
        path: `${path}.up_to`,
        message: "must be null on the last tier, so that every quantity has a price",
      });
    if (upTo !== null && lower !== null && !upTo.gt(lower))
      errors.push({
        path: `${path}.up_to`,
        message: `must be above the previous tier's (${lower.toFixed()}): tiers go in order and do not overlap`,
      });
    lower = upTo;
    read.push({
      up_to: upTo === null ? null : upTo.toFixed(),
      unit_amount: unit === null ? "0" : moneyString(unit, currency),
      flat_amount: flat === null ? null : moneyString(flat, currency),
    });
  });
  return errors.length === before ? read : undefined;
}

const defaultName: Record<RuleType, string> = {
  usage: "Usage",
  subscription: "Subscription",
  minimum: "Monthly minimum",
  one_time: "One-time fee",
};

/** The metrics a program accepts: those of its usage rules, in rule order, each once. */
/**
 * A whole program (an uploaded contract's, a previewed one) through normalizeRule, as adding each rule would, with
 * each error under `rules.{i}` and ids unique; a 400 invalid_pricing_rule listing every error.
 */
export function normalizeProgram(fields: readonly RuleFields[], currency: string): PricingRule[] {
  const errors: ErrorDetail[] = [];
  const rules: PricingRule[] = [];
  const ids = new Set<string>();
  fields.forEach((ruleFields, index) => {
    if (ruleFields.id !== undefined && ids.has(ruleFields.id))
      errors.push({ path: `rules.${index}.id`, message: "is used by another rule of this contract" });
    if (ruleFields.id !== undefined) ids.add(ruleFields.id);
    const result = normalizeRule(ruleFields, currency);
    if (result.errors)
      errors.push(...result.errors.map((e) => ({ path: `rules.${index}.${e.path}`, message: e.message })));
    else rules.push(result.rule);
  });
  if (errors.length > 0) {
    throw new ValidationError(
      `Invalid pricing rule: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
      "invalid_pricing_rule",
      errors,
    );
  }
  return rules;
}

export function metricsOf(rules: readonly PricingRule[]): string[] {
  return [...new Set(rules.filter((r) => r.type === "usage" && r.metric).map((r) => r.metric!))];
}

/**
 * The rule as the API shows it: `rate` is a number, its exact text; money amounts stay strings (docs/api.md,
 * "Pricing programs and rules").
 */
export function presentRule(rule: PricingRule) {
  const { tiers, package_size, ...rest } = rule;
  return {
    ...rest,
    rate: rule.rate === null ? null : toJsonDecimal(rule.rate),
    ...(tiers ? { tiers: tiers.map((t) => ({ ...t, up_to: t.up_to === null ? null : toJsonDecimal(t.up_to) })) } : {}),
    ...(package_size ? { package_size: toJsonDecimal(package_size) } : {}),
  };
}
export type PresentedRule = ReturnType<typeof presentRule>;
