import type { StatementRow } from "./statement-repository.js";

/**
 * An invoice's usage statement (docs/api.md, "Invoices", usage statement): one CSV row per event billed on it,
 * in the order the events were stored, decimals exactly as stored (a charge keeps its 12 decimals, so that the
 * rows of a line add up to the line's exact total, which rounds to its amount). RFC 4180: comma-separated,
 * CRLF line ends, a field quoted when it holds a comma, a quote, a line break or a leading or trailing space.
 * A text cell that a spreadsheet would run as a formula is written as text (spreadsheetText).
 */
const STATEMENT_COLUMNS = [
  "event_id",
  "timestamp",
  "metric",
  "counterparty",
  "counterparty_side",
  "pair",
  "quantity",
  "fee_amount",
  "applied_rate",
  "rated_amount",
  "rule_id",
  "pricing_version",
] as const;

function csvField(value: string | null): string {
  if (value === null) return "";
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** What a spreadsheet takes for the start of a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell as a spreadsheet must show it: text that would start a formula (`=HYPERLINK(…)`, `@SUM(…)`,
 * `+1`, `-1+2`, or a tab or carriage return before one) gets a leading `'`, which spreadsheets read as "this
 * is text" and hide. Every cell a client wrote goes through here. Numbers do not: they are the database's
 * text for a `numeric` (never a client's), and a genuine number is no formula; a `'` would turn it into text.
 */
export function spreadsheetText(value: string | null): string {
  if (value === null) return "";
  return csvField(FORMULA_START.test(value) ? `'${value}` : value);
}

export const STATEMENT_HEADER = `${STATEMENT_COLUMNS.join(",")}\r\n`;

export function statementLine(row: StatementRow): string {
  return `${[
    spreadsheetText(row.id),
    csvField(row.event_timestamp.toISOString()),
    spreadsheetText(row.metric),
    spreadsheetText(row.counterparty),
    spreadsheetText(row.counterparty_side),
    spreadsheetText(row.pair),
    csvField(row.quantity),
    csvField(row.fee_amount),
    csvField(row.applied_rate),
    csvField(row.rated_amount),
    spreadsheetText(row.rule_id),
    csvField(String(row.pricing_version)),
  ].join(",")}\r\n`;
}
