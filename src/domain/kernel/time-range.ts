/**
 * The one range of time the service keeps (docs/decisions.md, "Dates and times"). Every instant and date a
 * request carries is checked against it where it enters, so that both engines store it as sent and the
 * date arithmetic (billing months, issue and due dates) never leaves it:
 *
 * - an instant is ISO 8601 with seconds and a zone: `Z`, or an offset of at most ±15:59 (PostgreSQL refuses
 *   larger ones), at most 6 fractional digits (PostgreSQL keeps microseconds: a seventh digit would be rounded,
 *   and could move the event into the next month), and in UTC on or after 1970-01-01 and before year 10000
 *   (an instant is read back from PostgreSQL's timestamptz as a JavaScript Date: the epoch on keeps it simple);
 * - a date is `YYYY-MM-DD` from 0001-01-01 to 9999-12-31 (what the API's reference says: every real day of the
 *   years 0001 to 9999; PostgreSQL's `date` holds them all, and they come back as text);
 * - a billing month (an event's month, a projected month) is from 1970-01 to 9989-12: its invoice is issued the
 *   day after it ends and falls due up to 3,650 days later (the longest payment terms), still within year 9999.
 */
export const FIRST_DAY = "0001-01-01";
export const LAST_DAY = "9999-12-31";
/** The first day of the instants the service keeps. */
const FIRST_INSTANT_DAY = "1970-01-01";
const FIRST_MONTH = "1970-01";
const LAST_MONTH = "9989-12";
/** At most this many fractional digits of a second: PostgreSQL's precision. */
const MAX_FRACTION_DIGITS = 6;

/** How the range reads in a refusal. */
export const INSTANT_RANGE_WORDS = `from ${FIRST_INSTANT_DAY}T00:00:00Z to ${LAST_DAY}T23:59:59.999999Z`;
export const BILLING_RANGE_WORDS = `from ${FIRST_MONTH} to ${LAST_MONTH}`;

/**
 * An ISO 8601 instant as we take it: a real calendar date, hh:mm:ss (no leap second: 23:59:60 is refused,
 * as JavaScript and PostgreSQL do not agree on it), an optional fraction, and Z or ±hh:mm up to ±15:59.
 */
const INSTANT_RE =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d+))?(?:Z|([+-])(0\d|1[0-5]):([0-5]\d))$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days before each month of a common year. */
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
export const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

function realDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** A UTC calendar date as milliseconds since the epoch, right for every year 1 to 9999 (Date.UTC maps 0-99 to 1900-1999). */
export function utcDayMs(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

const LAST_INSTANT_EXCLUSIVE_MS = utcDayMs(10000, 1, 1);
const FIRST_INSTANT_MS = utcDayMs(1970, 1, 1);
/** The first instant after the last billing month. */
const AFTER_LAST_MONTH_MS = utcDayMs(Number(LAST_MONTH.slice(0, 4)), Number(LAST_MONTH.slice(5, 7)) + 1, 1);

/**
 * Why `text` is not an instant the service keeps (a sentence without the field's name), or undefined when it
 * is. `billable`: it also dates an event, so its UTC month must be a billing month.
 */
export function instantRefusal(text: string, billable = false): string | undefined {
  const match = INSTANT_RE.exec(text);
  if (!match) {
    if (/[+-](1[6-9]|2\d):?\d\d$/.test(text)) return "the UTC offset must be at most ±15:59";
    if (/T\d\d:\d\d:60/.test(text)) return "leap seconds (:60) are not accepted; use :59.999999";
    return "must be an ISO 8601 date and time with seconds and a time zone (Z or ±hh:mm), e.g. 2026-01-15T10:00:00Z";
  }
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (!realDate(year, month, day)) return `${match[1]}-${match[2]}-${match[3]} is not a calendar date`;
  if (match[7] !== undefined && match[7].length > MAX_FRACTION_DIGITS) {
    return `at most ${MAX_FRACTION_DIGITS} fractional digits of a second (microseconds) are kept`;
  }
  const ms = Date.parse(text);
  if (!(ms >= FIRST_INSTANT_MS && ms < LAST_INSTANT_EXCLUSIVE_MS)) return `must be ${INSTANT_RANGE_WORDS}`;
  if (billable && ms >= AFTER_LAST_MONTH_MS) return `must fall in a billing month ${BILLING_RANGE_WORDS} (UTC)`;
  return undefined;
}

/** Why `text` is not a date the service keeps, or undefined when it is. */
export function dateRefusal(text: string): string | undefined {
  const match = DATE_RE.exec(text);
  if (!match) return "must be a date as YYYY-MM-DD";
  if (!realDate(Number(match[1]), Number(match[2]), Number(match[3]))) return `${text} is not a calendar date`;
  if (text < FIRST_DAY || text > LAST_DAY) return `must be from ${FIRST_DAY} to ${LAST_DAY}`;
  return undefined;
}

/** Whether the month `YYYY-MM` (or the month of a date) is a billing month. */
export const isBillingMonth = (dateOrMonth: string): boolean => {
  const month = dateOrMonth.slice(0, 7);
  return month >= FIRST_MONTH && month <= LAST_MONTH;
};
