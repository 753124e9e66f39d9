import type { CompanyScope } from "../../../db/company-scope.js";

// An invoice's usage statement is the invoices module's read of usage_events: the events billed on one invoice,
// in the order they were stored (docs/api.md, "Invoices", usage statement; the CSV is usage-statement.ts).

/** One row of an invoice's usage statement, decimals as text. */
export interface StatementRow {
  seq: string;
  id: string;
  event_timestamp: Date;
  metric: string;
  counterparty: string | null;
  counterparty_side: string | null;
  pair: string | null;
  quantity: string;
  fee_amount: string | null;
  applied_rate: string | null;
  rated_amount: string;
  rule_id: string;
  pricing_version: number;
}

/**
 * The highest event sequence number on an invoice of this contract and month now: a statement lists the
 * events up to it, so that reading it twice (once for its digest, once to send it) gives the same rows.
 */
export async function findLastStatementSeq(
  db: CompanyScope,
  invoice: { contractId: string; periodStart: string; number: string },
): Promise<string | null> {
  const { rows } = await db.query<{ seq: string | null }>(
    `SELECT max(seq)::text AS seq FROM usage_events
      WHERE company_id = $1 AND contract_id = $2 AND service_period_start = $3 AND invoice_number = $4`,
    [invoice.contractId, invoice.periodStart, invoice.number],
  );
  return rows[0]?.seq ?? null;
}

/** A page of an invoice's events in the order they were stored, after `afterSeq` and up to `lastSeq`. */
export async function listStatementRows(
  db: CompanyScope,
  invoice: { contractId: string; periodStart: string; number: string },
  afterSeq: string | null,
  lastSeq: string,
  limit: number,
): Promise<StatementRow[]> {
  // (company_id, contract_id, service_period_start, seq) serves the order and the cursor: no sort, no scan.
  const { rows } = await db.query<StatementRow>(
    `SELECT seq::text, id, event_timestamp, metric, counterparty, counterparty_side, pair, quantity::text, fee_amount::text,
            applied_rate::text, rated_amount::text, rule_id, pricing_version
       FROM usage_events
      WHERE company_id = $1 AND contract_id = $2 AND service_period_start = $3 AND invoice_number = $4
        AND status <> 'voided' AND ($5::bigint IS NULL OR seq > $5) AND seq <= $6
      ORDER BY usage_events.seq -- the column: a bare "seq" would be the text of the select list
      LIMIT $7`,
    [invoice.contractId, invoice.periodStart, invoice.number, afterSeq, lastSeq, limit],
  );
  return rows;
}

/** What an invoice's usage lines hold, by line: how many events, and their quantity. */
export interface LineEventCount {
  line_key: string;
  events: number;
}

/** The events on each line of an invoice (its stored events, voided ones left out), in one grouped read. */
export async function countLineEvents(db: CompanyScope, invoice: { number: string }): Promise<LineEventCount[]> {
  // (company_id, invoice_number, line_key) is usage_events_invoice_idx: an index-only count per line.
  const { rows } = await db.query<LineEventCount>(
    `SELECT line_key, count(*)::int AS events
       FROM usage_events
      WHERE company_id = $1 AND invoice_number = $2 AND status <> 'voided'
      GROUP BY line_key`,
    [invoice.number],
  );
  return rows;
}

/** A page of one line's events, as priced: what the line's uncapped amount is priced again from. */
export interface LineEventRow {
  seq: string;
  metric: string;
  quantity: string;
  applied_rate: string | null;
  counterparty: string | null;
  counterparty_side: string | null;
  pair: string | null;
}

export async function listLineEvents(
  db: CompanyScope,
  invoice: { number: string },
  lineKey: string,
  afterSeq: string | null,
  limit: number,
): Promise<LineEventRow[]> {
  const { rows } = await db.query<LineEventRow>(
    `SELECT seq::text, metric, quantity::text, applied_rate::text, counterparty, counterparty_side, pair
       FROM usage_events
      WHERE company_id = $1 AND invoice_number = $2 AND line_key = $3 AND status <> 'voided'
        AND fee_amount IS NULL AND ($4::bigint IS NULL OR seq > $4)
      ORDER BY usage_events.seq
      LIMIT $5`,
    [invoice.number, lineKey, afterSeq, limit],
  );
  return rows;
}
