import { formatMoney } from "./money-format.js";

/**
 * How documents write dates and money for people (docs/decisions.md, "Invoice documents"): the invoice PDF, the
 * credit note PDF, the hosted page and the email all call these, in the company's locale (en-US by default).
 * Pure and clock-free: the same date and locale always read the same.
 */

/** The locale documents are written in when the account sets none. */
export const DEFAULT_LOCALE = "en-US";

/**
 * The locale as Intl will use it, or undefined when it is not a well-formed tag that Intl supports for both
 * dates and numbers ("en-US", "de-DE", "fr"; not "xx-nope" nor "en_US").
 */
export function supportedLocale(tag: string): string | undefined {
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
  if (canonical === undefined) return undefined;
  const dates = Intl.DateTimeFormat.supportedLocalesOf([canonical], { localeMatcher: "lookup" });
  const numbers = Intl.NumberFormat.supportedLocalesOf([canonical], { localeMatcher: "lookup" });
  return dates.length > 0 && numbers.length > 0 ? canonical : undefined;
}

/** A calendar date (YYYY-MM-DD) as a person reads it: "December 1, 2026" in en-US, "1. Dezember 2026" in de-DE. */
export function formatDate(isoDate: string, locale: string = DEFAULT_LOCALE): string {
  const day = new Date(`${isoDate.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(day.getTime())) return isoDate;
  return new Intl.DateTimeFormat(supportedLocale(locale) ?? DEFAULT_LOCALE, {
    year: "numeric",
    month: "long",
    day: "numeric",
    timeZone: "UTC",
  }).format(day);
}

/** Whole days from one calendar date to another (due − issued: the payment terms an invoice was issued with). */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** The due date with its terms: "December 31, 2026 (Net 30)"; "(due on receipt)" for terms of 0 days. */
export function dueWords(issuedDate: string, dueDate: string, locale: string = DEFAULT_LOCALE): string {
  const days = daysBetween(issuedDate, dueDate);
  const terms = days <= 0 ? "due on receipt" : `Net ${days}`;
  return `${formatDate(dueDate, locale)} (${terms})`;
}

/** Money in a document: the one formatter (formatMoney: from the decimal's text, never a double), in the locale. */
export function documentMoney(amount: string, currency: string, locale: string = DEFAULT_LOCALE): string {
  return formatMoney(amount, currency, undefined, supportedLocale(locale) ?? DEFAULT_LOCALE);
}
