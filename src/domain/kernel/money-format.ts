import { minorUnitExponent } from "./money.js";

/**
 * An amount as a reader of a document expects it: "$1,234.50", "¥1,500", "KWD 1.002", by the platform's own
 * Intl.NumberFormat (English unless a document's locale says otherwise: document-format.ts), formatted from the
 * decimal's text, never through a double. At least the currency's minor unit and at most `maxDecimals` decimals
 * (a unit price keeps its 12). The one money formatter of every surface: the PDFs, the hosted page, the email and
 * the dashboard.
 */
export function formatMoney(amount: string, currency: string, maxDecimals?: number, locale = "en-US"): string {
  const minor = minorUnitExponent(currency);
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency,
    minimumFractionDigits: minor,
    maximumFractionDigits: Math.max(minor, maxDecimals ?? minor),
    roundingMode: "halfEven",
  } as Intl.NumberFormatOptions).format(amount as unknown as number);
}
