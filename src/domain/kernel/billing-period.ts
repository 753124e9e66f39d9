import { daysInMonth, utcDayMs } from "./time-range.js";

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
