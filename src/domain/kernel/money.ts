import Big from "big.js";
import { JsonNumber } from "../../platform/exact-json.js";

// Money never passes through a binary float in arithmetic (docs/decisions.md, "Money").
// big.js keeps every digit; division is the only operation that needs a precision setting.
Big.DP = 24;
Big.RM = Big.roundHalfEven;

export { Big };

/** Per-event charges keep this many fractional digits (docs/decisions.md, "Money"). */
export const CHARGE_DP = 12;

/** ISO 4217 minor-unit exponents that differ from 2. Every other supported currency uses 2. */
const EXPONENT_EXCEPTIONS: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** Currencies the service accepts (ISO 4217 active codes in common commercial use). */
export const SUPPORTED_CURRENCIES: ReadonlySet<string> = new Set([
  ..."AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR ZMW ZWL".split(
    " ",
  ),
  ...Object.keys(EXPONENT_EXCEPTIONS),
]);

export function minorUnitExponent(currency: string): number {
  return EXPONENT_EXCEPTIONS[currency] ?? 2;
}

/** Rounds half-even to the currency's minor unit: the rounding of invoice lines (docs/decisions.md, "Money"). */
export function roundToMinorUnit(amount: Big, currency: string): Big {
  return amount.round(minorUnitExponent(currency), Big.roundHalfEven);
}

/** Rounds a per-event charge to its stored precision. */
export function roundCharge(amount: Big): Big {
  return amount.round(CHARGE_DP, Big.roundHalfEven);
}

/**
 * dividend / divisor rounded once, half-even, to a per-event charge's precision. Dividing at Big.DP and
 * rounding again would round twice: 0.01 / 6666666666.667 = 1.49999999999992…e-12 reads 1.5e-12 at 24
 * places, then 2e-12 at 12, where the quotient itself rounds to 1e-12.
 */
export function divideToChargePrecision(dividend: Big, divisor: Big): Big {
  const dp = Big.DP;
  Big.DP = CHARGE_DP;
  try {
    return dividend.div(divisor);
  } finally {
    Big.DP = dp;
  }
}

/** A plain decimal string ("12.5", "0", "-3.25"), never exponent notation. */
export function toDecimalString(amount: Big): string {
  return amount.toFixed();
}

/** A decimal string with exactly the currency's minor-unit digits ("1000.00", "15", "1.250"). */
export function toMoneyString(amount: Big, currency: string): string {
  // Rounded first: big.js's toFixed keeps the sign of the unrounded value, printing -0.001 as "-0.00".
  return roundToMinorUnit(amount, currency).toFixed(minorUnitExponent(currency));
}

/**
 * A decimal as a JSON number whose text is the decimal itself (docs/api.md, "Numbers"): never a double.
 * From PostgreSQL's numeric text as it is stored ("1000.00" stays "1000.00"), or from a Big.
 */
export function toJsonDecimal(value: string | Big): JsonNumber {
  return new JsonNumber(typeof value === "string" ? value : value.toFixed());
}

/**
 * A money amount already in the currency's minor unit (an invoice line's amount, a total) as a JSON number
 * with exactly that many decimals: 925 USD reads 925.00 whichever path stored it, 15 JPY reads 15.
 */
export function toJsonMoney(value: string | Big, currency: string): JsonNumber {
  return new JsonNumber(toMoneyString(typeof value === "string" ? new Big(value) : value, currency));
}

/** Decimal text as a client may send it, as a JSON number or in a string: digits, point, exponent. */
const DECIMAL_INPUT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const DECIMAL_RE = /^-?\d+(\.\d+)?$/;
/** Longest decimal text accepted (a number's or a string's, trimmed): 15 digits, a point, 12 decimals and room. */
export const MAX_DECIMAL_TEXT = 40;
/** Every money amount, quantity and rate the service takes is below this; beyond it a value is a mistake. */
const MAX_DECIMAL = new Big("1e15");

/** Parses a plain decimal string strictly (no exponent, no spaces); undefined when it is not one. */
export function parseDecimal(text: string): Big | undefined {
  return DECIMAL_RE.test(text) ? new Big(text) : undefined;
}

/**
 * The exact decimal of a value a client sent, or why there is none: the one rule for every money amount,
 * quantity and rate on every surface (docs/api.md, "Numbers"). A JSON number and a decimal string follow
 * the same rules: the text as written (the parser keeps a number's text whenever a double cannot hold it,
 * exact-json.ts), not negative, below 10^15, at most `fractionDigits` decimals. Never rounded: a value is
 * taken exactly or refused. -0 is 0.
 */
export function readDecimal(
  value: unknown,
  what: string,
  fractionDigitsAllowed: number = CHARGE_DP,
): Big | { message: string } {
  let parsed: Big | undefined;
  if (typeof value === "number") {
    // A plain number here held its text exactly (exact-json.ts), and a double prints its shortest decimal.
    parsed = Number.isFinite(value) ? new Big(value) : undefined;
  } else if (value instanceof JsonNumber || typeof value === "string") {
    const text = typeof value === "string" ? value.trim() : value.text;
    if (text.length > MAX_DECIMAL_TEXT)
      return {
        message: `${what} has too many digits: at most 15 before the decimal point and ${fractionDigitsAllowed} after it`,
      };
    parsed = DECIMAL_INPUT.test(text) ? new Big(text) : undefined;
  }
  if (!parsed) return { message: `${what} must be a decimal number such as 12.5 (a JSON number or a string)` };
  if (parsed.lt(0)) return { message: `${what} must not be negative` };
  if (parsed.gte(MAX_DECIMAL))
    return { message: `${what} must be less than 10^15 (at most 15 digits before the decimal point)` };
  if (fractionDigits(parsed) > fractionDigitsAllowed)
    return { message: `${what} has more than ${fractionDigitsAllowed} decimal places` };
  return parsed.eq(0) ? new Big(0) : parsed;
}

/** Number of digits after the decimal point. */
export function fractionDigits(value: Big): number {
  return Math.max(0, value.c.length - value.e - 1);
}
