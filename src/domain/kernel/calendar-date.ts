import { z } from "zod";

/**
 * A `YYYY-MM-DD` calendar date, for every date a request carries (list filters, billing periods). zod's ISO
 * date also takes year 0000, which PostgreSQL's `date` does not have (1 BC precedes 0001-01-01): such a date
 * passed validation and failed in SQL as a 500. Years 0001 to 9999.
 */
export const calendarDate = () =>
  z.iso.date().refine((text) => !text.startsWith("0000-"), "year 0000 does not exist (years are 0001 to 9999)");
