import type { StatementRow } from "../usage/usage-repository.js";

/**
 * An invoice's usage statement (docs/api.md, "Invoices", usage statement): one CSV row per event billed on it,
 * in the order the events were stored, decimals exactly as stored (a charge keeps its 12 decimals, so that the
 * rows of a line add up to the line's exact total, which rounds to its amount). RFC 4180: comma-separated,
 * CRLF line ends, a field quoted when it holds a comma, a quote, a line break or a leading or trailing space.
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

export const STATEMENT_HEADER = `${STATEMENT_COLUMNS.join(",")}\r\n`;

export function statementLine(row: StatementRow): string {
  return `${[
    row.id,
    row.event_timestamp.toISOString(),
    row.metric,
    row.counterparty,
    row.counterparty_side,
    row.pair,
    row.quantity,
    row.fee_amount,
    row.applied_rate,
    row.rated_amount,
    row.rule_id,
    String(row.pricing_version),
  ]
    .map(csvField)
    .join(",")}\r\n`;
}
