import { z } from "zod";
import { dateRefusal, FIRST_DAY, instantRefusal, INSTANT_RANGE_WORDS, LAST_DAY } from "./time-range.js";

/**
 * A `YYYY-MM-DD` calendar date, for every date a request carries (list filters, billing periods, contract
 * terms), from 1970-01-01 to 9999-12-31 (time-range.ts). zod's ISO date alone also took year 0000, which
 * PostgreSQL's `date` does not have: such a date passed validation and failed in SQL as a 500.
 */
export const calendarDate = () =>
  z.iso
    .date()
    .superRefine((text, ctx) => {
      const refusal = dateRefusal(text);
      if (refusal) ctx.addIssue({ code: "custom", message: refusal, input: text });
    })
    .meta({ description: `A date from ${FIRST_DAY} to ${LAST_DAY}` });

/**
 * An ISO 8601 instant with seconds and a zone (Z or an offset up to ±15:59), at most microseconds, within
 * the service's range (time-range.ts). `billable`: it dates usage, so its UTC month must be a billing month.
 */
export const instantInput = (billable = false) =>
  z
    .string()
    .superRefine((text, ctx) => {
      const refusal = instantRefusal(text, billable);
      if (refusal) ctx.addIssue({ code: "custom", message: refusal, input: text });
    })
    .meta({
      format: "date-time",
      description: `ISO 8601 with seconds and a time zone (Z or ±hh:mm up to ±15:59), ${INSTANT_RANGE_WORDS}`,
    });

/** Why a `from` after `to` is refused, beside `from` (the dashboard words it for a form: page-kit.ts). */
export const DATES_OUT_OF_ORDER = "must be on or before to";

/**
 * A list filter's `from` must not come after its `to`. Such a range asks for nothing, and was answered with an
 * empty list (or, within one month, with that month's events, the two dates being read as overlap bounds), which
 * a reader takes for "no data". The usage list's one rule, for the API and the dashboard alike.
 */
export function datesInOrder<T extends z.ZodType<{ from?: string | undefined; to?: string | undefined }>>(
  schema: T,
): T {
  return schema.refine((range) => range.from === undefined || range.to === undefined || range.from <= range.to, {
    path: ["from"],
    message: DATES_OUT_OF_ORDER,
  });
}

/** The months' names in English, January first: how agreements and documents write a date's month. */
export const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;
