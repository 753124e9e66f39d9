import { randomBytes } from "node:crypto";
import type { ErrorDetail } from "../kernel/errors.js";
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

/** A decimal as a client sends it: a JSON number (kept as text when a double cannot hold it) or a string. */
type DecimalValue = string | number | JsonNumber;

export const RULE_TYPES = ["usage", "subscription", "minimum", "one_time"] as const;
export const RULE_MODELS = ["flat", "percentage"] as const;
export type RuleType = (typeof RULE_TYPES)[number];
export type RuleModel = (typeof RULE_MODELS)[number];

/** A pricing rule as stored in a program version. Decimals are strings; absent fields are null. */
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
}

/** Rule fields as a client sends them (add: all optional but what `normalizeRule` requires; update: merged). */
export interface RuleFields {
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
}

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
  } else if (type) {
    if (model !== "flat") errors.push({ path: "model", message: `must be flat on a ${type} rule` });
    if (!amountGiven) errors.push({ path: "amount", message: `is required on a ${type} rule` });
    if (metric) errors.push({ path: "metric", message: "applies to usage rules only" });
    if (cap !== null) errors.push({ path: "monthly_cap", message: "applies to usage rules only" });
    if (scoped) errors.push({ path: "counterparty", message: "counterparty scopes apply to usage rules only" });
  }
  if (model === "percentage" && amount !== null)
    errors.push({ path: "amount", message: "is for flat rules; a percentage rule has a rate" });
  if (model === "flat" && rate !== null)
    errors.push({ path: "rate", message: "is for percentage rules; a flat rule has an amount" });
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
    },
  };
}

const defaultName: Record<RuleType, string> = {
  usage: "Usage",
  subscription: "Subscription",
  minimum: "Monthly minimum",
  one_time: "One-time fee",
};

/** The metrics a program accepts: those of its usage rules, in rule order, each once. */
export function metricsOf(rules: readonly PricingRule[]): string[] {
  return [...new Set(rules.filter((r) => r.type === "usage" && r.metric).map((r) => r.metric!))];
}

/**
 * The rule as the API shows it: `rate` is a number, its exact text; money amounts stay strings (docs/api.md,
 * "Pricing programs and rules").
 */
export function presentRule(rule: PricingRule) {
  return { ...rule, rate: rule.rate === null ? null : toJsonDecimal(rule.rate) };
}
export type PresentedRule = ReturnType<typeof presentRule>;
