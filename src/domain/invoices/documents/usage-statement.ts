import { toDecimalString, toMoneyString } from "../../kernel/money.js";
import type { BilledInvoice, BilledLine } from "../invoice-figures.js";
import type { StatementRow } from "./statement-repository.js";

/**
 * An invoice's usage statement (docs/api.md, "Invoices", usage statement): every line of the invoice and every
 * event billed on it, then its tax and total, one CSV row each, told apart by the first column, `row_type`:
 * - `event`: one per event, in the order the events were stored, decimals exactly as stored (a charge keeps its
 *   12 decimals, so that the rows of a line add up to the line's exact total, which rounds to its amount);
 * - `line`: one per line of the invoice, in its order, with the figures GET answers (`line_kind`,
 *   `description`, `quantity`, `unit_price`, `amount`): subscriptions, one-time fees, usage, fees, the minimum's
 *   true-up, credits;
 * - `tax`, then `total`: the invoice's, in `amount`. The `line` amounts and the tax add up to the total.
 * RFC 4180: comma-separated, CRLF line ends, a field quoted when it holds a comma, a quote, a line break or a
 * leading or trailing space. A text cell that a spreadsheet would run as a formula is written as text
 * (spreadsheetText).
 */
const STATEMENT_COLUMNS = [
  "row_type",
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
  "line_kind",
  "description",
  "unit_price",
  "amount",
] as const;

/** The columns after an event's: empty on an event row. */
const NO_LINE = ",,,,";

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
    "event",
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
  ].join(",")}${NO_LINE}\r\n`;
}

/** One line of the invoice: its metric, quantity and rule where it has them, then its kind, name and figures. */
function invoiceLineRow(line: BilledLine, currency: string): string {
  return `${[
    "line",
    "",
    "",
    spreadsheetText(line.metric),
    "",
    "",
    "",
    csvField(toDecimalString(line.quantity)),
    "",
    "",
    "",
    spreadsheetText(line.ruleId),
    "",
    csvField(line.kind),
    spreadsheetText(line.description),
    csvField(toDecimalString(line.unitPrice)),
    csvField(toMoneyString(line.amount, currency)),
  ].join(",")}\r\n`;
}

/** A row with an amount alone: the tax, the total. */
const amountRow = (type: string, description: string, amount: string): string =>
  `${type}${",".repeat(STATEMENT_COLUMNS.length - 3)}${description},,${amount}\r\n`;

/** The statement's summary: a row per line of the invoice, then its tax and its total (figures as GET answers). */
export function statementSummary(billed: BilledInvoice, currency: string): string {
  return [
    ...billed.lines.map((line) => invoiceLineRow(line, currency)),
    amountRow("tax", "Tax", toMoneyString(billed.tax, currency)),
    amountRow("total", "Total", toMoneyString(billed.total, currency)),
  ].join("");
}
