import Big from "big.js";

// Money never passes through a binary float in arithmetic (decisions.md "Money").
// big.js keeps every digit; division is the only operation that needs a precision setting.
Big.DP = 24;
Big.RM = Big.roundHalfEven;

export { Big };
export type Decimal = Big;

/** Per-event charges keep this many fractional digits (decisions.md "Money"). */
export const CHARGE_DP = 12;

/** ISO 4217 minor-unit exponents that differ from 2. Every other supported currency uses 2. */
const EXPONENT_EXCEPTIONS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0,
  VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** Currencies the service accepts (ISO 4217 active codes in common commercial use). */
export const SUPPORTED_CURRENCIES: ReadonlySet<string> = new Set([
  ..."AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR ZMW ZWL".split(" "),
  ...Object.keys(EXPONENT_EXCEPTIONS),
]);

export function minorUnitExponent(currency: string): number {
  return EXPONENT_EXCEPTIONS[currency] ?? 2;
}

/** Rounds half-even to the currency's minor unit: the rounding of invoice lines (decisions.md "Money"). */
export function roundToMinorUnit(amount: Big, currency: string): Big {
  return amount.round(minorUnitExponent(currency), Big.roundHalfEven);
}

/** Rounds a per-event charge to its stored precision. */
export function roundCharge(amount: Big): Big {
  return amount.round(CHARGE_DP, Big.roundHalfEven);
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
 * The JSON number for a decimal. Only for presentation, where the spec types a field as `number`; the
 * value came from an exact decimal with few digits, so the shortest float prints the same digits.
 */
export function toJsonNumber(value: string | Big): number {
  return Number(typeof value === "string" ? value : value.toFixed());
}

const DECIMAL_RE = /^-?\d+(\.\d+)?$/;

/** Parses a decimal string strictly (no exponent, no spaces); undefined when it is not one. */
export function parseDecimal(text: string): Big | undefined {
  return DECIMAL_RE.test(text) ? new Big(text) : undefined;
}

/**
 * A JSON number as a decimal: JavaScript prints the shortest string that reads back as the same double,
 * which is the decimal the client wrote for any number of up to 15 significant digits.
 */
export function decimalFromJsonNumber(value: number): Big {
  return new Big(value);
}

/** Number of digits after the decimal point. */
export function fractionDigits(value: Big): number {
  return Math.max(0, value.c.length - value.e - 1);
}
