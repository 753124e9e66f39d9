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
  const month = instant.getUTCMonth();
  return {
    start: toDateString(new Date(Date.UTC(year, month, 1))),
    end: toDateString(new Date(Date.UTC(year, month + 1, 0))),
  };
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses `YYYY-MM-DD` into a UTC midnight Date, refusing impossible dates such as 2026-02-30. */
export function parseDate(text: string): Date | undefined {
  const match = DATE_RE.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date;
}

/** Whether `start`..`end` is exactly one calendar month. */
export function isCalendarMonth(start: string, end: string): boolean {
  const startDate = parseDate(start);
  if (!startDate || !parseDate(end)) return false;
  const period = periodOf(startDate);
  return period.start === start && period.end === end;
}

/** `date` plus `days` days. */
export function addDays(date: string, days: number): string {
  const parsed = parseDate(date);
  if (!parsed) throw new Error(`not a date: ${date}`);
  return toDateString(new Date(parsed.getTime() + days * 86_400_000));
}

/** `date` plus `years` years, minus one day: the last day of a term of that many years. */
export function termEnd(start: string, years: number): string {
  const parsed = parseDate(start);
  if (!parsed) throw new Error(`not a date: ${start}`);
  const next = new Date(Date.UTC(parsed.getUTCFullYear() + years, parsed.getUTCMonth(), parsed.getUTCDate()));
  return toDateString(new Date(next.getTime() - 86_400_000));
}
