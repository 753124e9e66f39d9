import type { JsonNumber } from "../../platform/exact-json.js";
import { Big, minorUnitExponent } from "../kernel/money.js";
import { formatMoney } from "../kernel/money-format.js";

// How a pricing rule's price reads, in words: the one wording the dashboard pages and the agreement PDF
// both print, so a customer never reads the same rule two ways ("$20.00 per unit", "2.9% of the event's
// value"). Pure; money in English by the platform's Intl.NumberFormat, the same everywhere.

/** A decimal as the domain hands it out: text, a number, or a JSON number's exact text. */
export type DecimalWords = string | number | JsonNumber;

/** The rule fields a price is worded from (a stored rule, a presented one, or an agreement's row). */
export interface PricedRule {
  type: string;
  model: string;
  amount?: DecimalWords | null | undefined;
  rate?: DecimalWords | null | undefined;
  currency?: string | null | undefined;
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

/** What follows a usage rule's flat price, and a percentage rule's rate. */
const PER_UNIT = " per unit";
const OF_THE_VALUE = " of the event's value";

/** A price per unit: "$20.00 per unit". */
export function perUnitWords(amount: DecimalWords, currency: string | null | undefined): string {
  return `${moneyWords(amount, currency)}${PER_UNIT}`;
}

/**
 * What a rule charges: a share of the event's value, a price per unit, or a flat amount (subscription,
 * minimum, one-time fee). "—" when the rule has no price to show. `currency` stands in for a rule that
 * carries none of its own (the contract's).
 */
export function rulePriceWords(rule: PricedRule, currency?: string): string {
  if (rule.model === "percentage") return rule.rate == null ? "—" : `${percentWords(rule.rate)}${OF_THE_VALUE}`;
  if (rule.amount == null) return "—";
  const ruleCurrency = rule.currency ?? currency;
  return rule.type === "usage" ? perUnitWords(rule.amount, ruleCurrency) : moneyWords(rule.amount, ruleCurrency);
}

// Reading the words back: the inverse of the wording above, for text read off a document (an uploaded
// agreement). Exact, by string and big.js, never through a double. Whitespace is not significant, so that a
// price reads the same wherever a narrow column wrapped it ("2.9% of the event's" / "value",
// "KWD 5,000.00" / "0"): no wording above has a space inside a number.

/** Grouped digits as decimalWords writes them, optionally with a fraction: "1,234.50", "0.0025", "1500". */
const GROUPED_DECIMAL = "\\d{1,3}(?:,\\d{3})*(?:\\.\\d+)?";
/**
 * moneyWords's "$1,234.50", "KWD 1.002", "CA$5", "F CFA 100", with whitespace removed: the currency as Intl
 * writes it in English (a code, or a symbol after up to three capitals), then the amount.
 */
const MONEY_RE = new RegExp(`^(?:[A-Z]{3,4}|[A-Z]{0,3}\\p{Sc})(${GROUPED_DECIMAL})$`, "u");
const PERCENT_RE = new RegExp(`^(${GROUPED_DECIMAL})%$`);

const squeezed = (text: string): string => text.replace(/\s+/g, "");

/**
 * The amount moneyWords wrote: "$1,234.50" → "1234.50", "€0.0025" → "0.0025", "KWD 1.002" → "1.002",
 * "¥1,500" → "1500": the decimal as printed, every digit kept. Undefined for anything else ("—", "12.50 —",
 * a bare number, a negative amount).
 */
export function readMoneyWords(text: string): string | undefined {
  const amount = MONEY_RE.exec(squeezed(text))?.[1];
  return amount?.replaceAll(",", "");
}

/** What rulePriceWords wrote a price from: a flat amount (per unit or not) or a percentage rule's rate. */
export type RulePriceReading =
  | { model: "flat"; amount: string; perUnit: boolean }
  | { model: "percentage"; rate: string };

/**
 * The price rulePriceWords wrote: "$20.00 per unit" → flat 20.00 per unit, "€99.00" → flat 99.00, "2.9% of
 * the event's value" → percentage rate 0.029 (the percentage shifted two places, exactly). Undefined for "—"
 * and anything else.
 */
export function readRulePriceWords(text: string): RulePriceReading | undefined {
  const words = squeezed(text);
  const ofTheValue = squeezed(OF_THE_VALUE);
  if (words.endsWith(ofTheValue)) {
    const percent = PERCENT_RE.exec(words.slice(0, -ofTheValue.length))?.[1];
    return percent === undefined
      ? undefined
      : { model: "percentage", rate: new Big(percent.replaceAll(",", "")).times("0.01").toFixed() };
  }
  const perUnit = words.endsWith(squeezed(PER_UNIT));
  const amount = readMoneyWords(perUnit ? words.slice(0, -squeezed(PER_UNIT).length) : words);
  return amount === undefined ? undefined : { model: "flat", amount, perUnit };
}
