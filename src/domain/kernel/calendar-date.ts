import { z } from "zod";

/**
 * A `YYYY-MM-DD` calendar date, for every date a request carries (list filters, billing periods). zod's ISO
 * date also takes year 0000, which PostgreSQL's `date` does not have (1 BC precedes 0001-01-01): such a date
 * passed validation and failed in SQL as a 500. Years 0001 to 9999.
 */
export const calendarDate = () =>
  z.iso.date().refine((text) => !text.startsWith("0000-"), "year 0000 does not exist (years are 0001 to 9999)");

/** Why a `from` after `to` is refused, beside `from` (the dashboard words it for a form: page-kit.ts). */
export const DATES_OUT_OF_ORDER = "must be on or before to";

/**
 * A list filter's `from` must not come after its `to`. Such a range asks for nothing, and was answered with an
 * empty list (or, within one month, with that month's events, the two dates being read as overlap bounds), which
 * a reader takes for "no data". The usage list's one rule, for the API and the dashboard alike.
 */
export function datesInOrder<T extends z.ZodType<{ from?: string | undefined; to?: string | undefined }>>(schema: T): T {
  return schema.refine((range) => range.from === undefined || range.to === undefined || range.from <= range.to, { path: ["from"], message: DATES_OUT_OF_ORDER });
}
