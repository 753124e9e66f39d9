import { ValidationError } from "./errors.js";
import { BILLING_RANGE_WORDS, daysInMonth, isBillingMonth, utcDayMs } from "./time-range.js";

/** Billing periods are calendar months in UTC (docs/decisions.md, "Periods"). Dates are `YYYY-MM-DD` strings. */
export interface BillingPeriod {
  start: string;
  end: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

export const toDateString = (date: Date): string =>
  `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;

/** The calendar month (UTC) that holds `instant`. */
export function periodOf(instant: Date): BillingPeriod {
  const year = instant.getUTCFullYear();
  const month = instant.getUTCMonth() + 1;
  const prefix = `${pad(year, 4)}-${pad(month)}`;
  return { start: `${prefix}-01`, end: `${prefix}-${pad(daysInMonth(year, month))}` };
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses `YYYY-MM-DD` into a UTC midnight Date, refusing impossible dates such as 2026-02-30 (right for years 1 to 9999). */
export function parseDate(text: string): Date | undefined {
  const match = DATE_RE.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return new Date(utcDayMs(year, month, day));
}

/** Whether `start`..`end` is exactly one calendar month. */
export function isCalendarMonth(start: string, end: string): boolean {
  const startDate = parseDate(start);
  if (!startDate || !parseDate(end)) return false;
  const period = periodOf(startDate);
  return period.start === start && period.end === end;
}

/** `date` plus `days` days; a result past year 9999 is a bug of the caller (time-range.ts keeps inputs in range). */
export function addDays(date: string, days: number): string {
  const parsed = parseDate(date);
  if (!parsed) throw new Error(`not a date: ${date}`);
  const result = toDateString(new Date(parsed.getTime() + days * 86_400_000));
  if (!parseDate(result)) throw new Error(`not a date: ${result} (${date} plus ${days} days)`);
  return result;
}

/** `date` plus `years` years, minus one day: the last day of a term of that many years. */
export function termEnd(start: string, years: number): string {
  const parsed = parseDate(start);
  if (!parsed) throw new Error(`not a date: ${start}`);
  const next = utcDayMs(parsed.getUTCFullYear() + years, parsed.getUTCMonth() + 1, parsed.getUTCDate());
  return toDateString(new Date(next - 86_400_000));
}

/**
 * The billing period a request names (projection, pricing preview): exactly one calendar month, of the months the
 * service bills; else a 400 that says which.
 */
export function requireBillingPeriod(input: { periodStart: string; periodEnd: string }): BillingPeriod {
  if (!isCalendarMonth(input.periodStart, input.periodEnd)) {
    throw new ValidationError(
      "The billing period must be exactly one calendar month: its first day to its last day",
      "invalid_billing_period",
    );
  }
  if (!isBillingMonth(input.periodStart)) {
    throw new ValidationError(`The billing period must be a month ${BILLING_RANGE_WORDS}`, "invalid_billing_period");
  }
  return periodOf(parseDate(input.periodStart)!);
}

/** A 400 outside_contract_term unless the period overlaps the contract's term. */
export function requirePeriodInTerm(
  period: BillingPeriod,
  term: { start_date: string; end_date: string | null },
): void {
  if (period.end < term.start_date || (term.end_date !== null && period.start > term.end_date)) {
    throw new ValidationError(
      `The billing period lies outside the contract term ${term.start_date}..${term.end_date ?? "(open)"}`,
      "outside_contract_term",
    );
  }
}

/** A 400 outside_contract_term unless `day` (a change's effective_date) falls within the contract's term. */
export function requireDayInTerm(day: string, term: { start_date: string; end_date: string | null }): void {
  if (day < term.start_date || (term.end_date !== null && day > term.end_date)) {
    throw new ValidationError(
      `effective_date ${day} is outside the contract term ${term.start_date}..${term.end_date ?? "(open)"}`,
      "outside_contract_term",
      [{ path: "effective_date", message: "must fall within the contract term" }],
    );
  }
}
