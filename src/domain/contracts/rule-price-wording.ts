import type { JsonNumber } from "../../platform/exact-json.js";
import { Big, minorUnitExponent } from "../kernel/money.js";
import { formatMoney } from "../kernel/money-format.js";

// How a pricing rule's price reads, in words: the one wording the dashboard pages and the agreement PDF
// both print, so a customer never reads the same rule two ways ("$20.00 per unit", "2.9% of the event's
// value"). Pure; money in English by the platform's Intl.NumberFormat, the same everywhere.

/** A decimal as the domain hands it out: text, a number, or a JSON number's exact text. */
export type DecimalWords = string | number | JsonNumber;

/** A tier of a graduated or volume rule, as worded: units up to `up_to` (none on the last tier). */
export interface PricedTier {
  up_to?: DecimalWords | null | undefined;
  unit_amount: DecimalWords;
  flat_amount?: DecimalWords | null | undefined;
}

/** The rule fields a price is worded from (a stored rule, a presented one, or an agreement's row). */
export interface PricedRule {
  type: string;
  model: string;
  amount?: DecimalWords | null | undefined;
  rate?: DecimalWords | null | undefined;
  currency?: string | null | undefined;
  tiers?: readonly PricedTier[] | null | undefined;
  package_size?: DecimalWords | null | undefined;
  fixed_fee?: DecimalWords | null | undefined;
  min_fee?: DecimalWords | null | undefined;
  max_fee?: DecimalWords | null | undefined;
}

/** Plain notation through big.js (never "3e-7"); undefined for text that is not a number. */
function plain(value: DecimalWords): string | undefined {
  try {
    return new Big(typeof value === "object" ? value.text : value).toFixed();
  } catch {
    return undefined;
  }
}

/** The integer part grouped in thousands, the fraction padded to `minDecimals`; never drops a digit. */
function grouped(text: string, minDecimals: number): string {
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = (negative ? text.slice(1) : text).split(".");
  const digits = fraction.padEnd(minDecimals, "0");
  return `${negative ? "-" : ""}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}${digits ? `.${digits}` : ""}`;
}

/**
 * An amount in its currency, as Intl.NumberFormat writes it (formatMoney): "$1,000.00", "¥1,500", "$0.0025",
 * "KWD 1.002". At least the currency's minor-unit digits and every digit the amount has. Without a currency
 * it shows "—" in its place rather than a guess; text that is not a number is shown as given.
 */
export function moneyWords(amount: DecimalWords, currency: string | null | undefined): string {
  const text = plain(amount);
  if (text !== undefined && currency) {
    try {
      return formatMoney(text, currency, EVERY_DIGIT);
    } catch {
      // Not a currency Intl knows: the amount and the code as given.
    }
  }
  return `${decimalWords(amount, currency ? minorUnitExponent(currency) : 2)} ${currency || "—"}`;
}

/** Decimals an amount may show: more than any stored amount has, so that formatting never drops a digit. */
const EVERY_DIGIT = 20;

/**
 * A quantity, rate or amount in plain notation with grouped thousands, padded to `minDecimals` and keeping
 * every digit it has: 1e21 reads "1,000,000,000,000,000,000,000", 3e-7 "0.0000003". Not a number: as given.
 */
export function decimalWords(value: DecimalWords, minDecimals = 0): string {
  const text = plain(value);
  return text === undefined ? String(value) : grouped(text, minDecimals);
}

/** A rate (a fraction) as a percentage, shifted in decimal: "0.029" reads "2.9%", never 2.9000000000000004. */
export function percentWords(rate: DecimalWords): string {
  const text = plain(rate);
  return text === undefined ? String(rate) : `${decimalWords(new Big(text).times(100).toFixed())}%`;
}

/**
 * A percentage as the fraction a rule stores, shifted two places in decimal: "2.35" → "0.0235", "235" → "2.35",
 * never through a double. The inverse of percentWords's shift; undefined for text that is not a plain decimal.
 */
export function fractionOfPercent(percent: string): string | undefined {
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(percent.trim())) return undefined;
  return new Big(percent.trim()).times("0.01").toFixed();
}

/**
 * A stored fraction as the percentage a form shows, shifted two places in decimal: "0.0235" → "2.35", never through
 * a double. The inverse of fractionOfPercent; undefined for text that is not a plain decimal.
 */
export function percentOfFraction(fraction: string): string | undefined {
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(fraction.trim())) return undefined;
  return new Big(fraction.trim()).times(100).toFixed();
}

/** What follows a usage rule's flat price, and a percentage rule's rate. */
const PER_UNIT = " per unit";
const OF_THE_VALUE = " of the event's value";

/** A price per unit: "$20.00 per unit". */
export function perUnitWords(amount: DecimalWords, currency: string | null | undefined): string {
  return `${moneyWords(amount, currency)}${PER_UNIT}`;
}

/** No price to show. */
const NO_PRICE = "—";

/**
 * What a rule charges: a share of the event's value (with its fees), a price per unit, tiers, a price per
 * package, or a flat amount (subscription, minimum, one-time fee). "—" when the rule has no price to show.
 * `currency` stands in for a rule that carries none of its own (the contract's).
 */
export function rulePriceWords(rule: PricedRule, currency?: string): string {
  const ruleCurrency = rule.currency ?? currency;
  switch (rule.model) {
    case "percentage":
      return rule.rate == null ? NO_PRICE : percentageWords(rule.rate, rule, ruleCurrency);
    case "graduated":
      return rule.tiers?.length ? graduatedWords(rule.tiers, ruleCurrency) : NO_PRICE;
    case "volume":
      return rule.tiers?.length ? volumeWords(rule.tiers, ruleCurrency) : NO_PRICE;
    case "package":
      return rule.amount == null || rule.package_size == null
        ? NO_PRICE
        : packageWords(rule.amount, rule.package_size, ruleCurrency);
  }
  if (rule.amount == null) return NO_PRICE;
  return rule.type === "usage" ? perUnitWords(rule.amount, ruleCurrency) : moneyWords(rule.amount, ruleCurrency);
}

/**
 * "2.9% of the event's value + $0.30 per event, at least $0.50, at most $4,000.00": the fees as the rule has
 * them (the bounds include the fixed fee); without fees, the share alone.
 */
function percentageWords(rate: DecimalWords, fees: PricedRule, currency: string | null | undefined): string {
  const fixed = fees.fixed_fee == null ? "" : ` + ${moneyWords(fees.fixed_fee, currency)} per event`;
  const least = fees.min_fee == null ? "" : `, at least ${moneyWords(fees.min_fee, currency)}`;
  const most = fees.max_fee == null ? "" : `, at most ${moneyWords(fees.max_fee, currency)}`;
  return `${percentWords(rate)}${OF_THE_VALUE}${fixed}${least}${most}`;
}

/**
 * Where each tier ends: "up to 1,000" (inclusive), "above 10,000" on the last (unbounded) tier, nothing for a
 * single unbounded tier.
 */
function tierBounds(tiers: readonly PricedTier[]): string[] {
  return tiers.map((tier, i) => {
    if (tier.up_to != null) return ` up to ${decimalWords(tier.up_to)}`;
    const below = tiers[i - 1]?.up_to;
    return below == null ? "" : ` above ${decimalWords(below)}`;
  });
}

/**
 * "graduated: $0.10 per unit up to 1,000; $0.08 per unit up to 10,000 + $5.00 on entering; $0.05 per unit above
 * 10,000": each unit at the price of the tier the period's running quantity puts it in, a tier's flat amount
 * once when the period enters it.
 */
function graduatedWords(tiers: readonly PricedTier[], currency: string | null | undefined): string {
  const bounds = tierBounds(tiers);
  const parts = tiers.map(
    (tier, i) =>
      `${perUnitWords(tier.unit_amount, currency)}${bounds[i]}${
        tier.flat_amount == null ? "" : ` + ${moneyWords(tier.flat_amount, currency)} on entering`
      }`,
  );
  return `graduated: ${parts.join("; ")}`;
}

/**
 * "volume: every unit at $0.10 up to 1,000; at $0.08 up to 10,000 + $5.00; at $0.05 above 10,000": every unit
 * of the period at the price of the tier its total reaches, plus that tier's flat amount.
 */
function volumeWords(tiers: readonly PricedTier[], currency: string | null | undefined): string {
  const bounds = tierBounds(tiers);
  const parts = tiers.map(
    (tier, i) =>
      `${i === 0 ? "every unit " : ""}at ${moneyWords(tier.unit_amount, currency)}${bounds[i]}${
        tier.flat_amount == null ? "" : ` + ${moneyWords(tier.flat_amount, currency)}`
      }`,
  );
  return `volume: ${parts.join("; ")}`;
}

/** "$10.00 per started 1,000 units": the amount for each package the period starts. */
function packageWords(amount: DecimalWords, size: DecimalWords, currency: string | null | undefined): string {
  const units = plain(size) === "1" ? "unit" : "units";
  return `${moneyWords(amount, currency)} per started ${decimalWords(size)} ${units}`;
}
