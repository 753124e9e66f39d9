import { minorUnitExponent } from "./money.js";

/**
 * An amount as a reader of a document expects it: "$1,234.50", "¥1,500", "KWD 1.002", by the platform's own
 * Intl.NumberFormat (English), formatted from the decimal's text, never through a double. At least the
 * currency's minor unit and at most `maxDecimals` decimals (a unit price keeps its 12).
 */
export function formatMoney(amount: string, currency: string, maxDecimals?: number): string {
  const minor = minorUnitExponent(currency);
  return new Intl.NumberFormat("en-US", {
    style: "currency",
    currency,
    minimumFractionDigits: minor,
    maximumFractionDigits: Math.max(minor, maxDecimals ?? minor),
    roundingMode: "halfEven",
  } as Intl.NumberFormatOptions).format(amount as unknown as number);
}
