// What re-rating, voids and reissues read and write of stored usage events: a month's events a page at a time,
// their new figures, an event locked and voided, a void invoice's events moved to its reissue.
import type { CompanyScope } from "../../db/company-scope.js";
import { EVENT_COLUMNS, type UsageEventRow } from "./usage-repository.js";

/** A stored event as re-rating reads it: what prices it, and what it was priced at. */
export interface StoredRatingRow {
  id: string;
  /** The order it was stored in (bigint as text). */
  seq: string;
  metric: string;
  quantity: string;
  fee_amount: string | null;
  sent_rate: string | null;
  counterparty: string | null;
  counterparty_side: string | null;
  pair: string | null;
  event_timestamp: Date;
  rated_amount: string;
  applied_rate: string | null;
  rule_id: string;
  pricing_version: number;
  line_key: string;
}

/**
 * Events per page of a period's events (periodEvents in rerate.ts): a page is one statement, which on the embedded
 * database (one session) every other company's statement waits behind; 500 rows read there in about 5 ms.
 */
const PERIOD_PAGE = 500;

/**
 * A page of the events of a contract's service period that count on its invoice (every one but the voided), in
 * the order they were stored (the order ingestion priced them in): those stored after `after` (a seq; null: from
 * the first) and up to `upTo` (null: the last).
 */
export async function listPeriodEventsPage(
  db: CompanyScope,
  which: { contractId: string; periodStart: string; after: string | null; upTo: string | null },
): Promise<StoredRatingRow[]> {
  const { rows } = await db.query<StoredRatingRow>(
    `SELECT id, seq::text, metric, quantity::text, fee_amount::text, sent_rate::text, counterparty, counterparty_side,
            pair, event_timestamp, rated_amount::text, applied_rate::text, rule_id, pricing_version, line_key
       FROM usage_events
      WHERE company_id = $1 AND contract_id = $2 AND service_period_start = $3 AND status <> 'voided'
        AND usage_events.seq > coalesce($4::bigint, 0) AND ($5::bigint IS NULL OR usage_events.seq <= $5::bigint)
      ORDER BY usage_events.seq -- the column, not the text the select list names seq: '10' sorts before '8'
      LIMIT ${PERIOD_PAGE}`,
    [which.contractId, which.periodStart, which.after, which.upTo],
  );
  return rows;
}

/**
 * The stored order (seq) of the last event a contract's service period holds, voided ones included; null when it
 * holds none. One step down the period's index: what bounds a reading of the period to the events stored so far.
 */
export async function lastPeriodSeq(db: CompanyScope, contractId: string, periodStart: string): Promise<string | null> {
  const { rows } = await db.query<{ seq: string }>(
    `SELECT seq::text AS seq FROM usage_events
      WHERE company_id = $1 AND contract_id = $2 AND service_period_start = $3
      ORDER BY usage_events.seq DESC LIMIT 1`,
    [contractId, periodStart],
  );
  return rows[0]?.seq ?? null;
}

/** A re-rated event's new figures; decimals as strings. */
export interface EventRatingWrite {
  id: string;
  ratedAmount: string;
  appliedRate: string | null;
  ruleId: string;
  pricingVersion: number;
  lineKey: string;
}

/** Stores the new figures of re-rated events (one statement). */
export async function updateEventRatings(tx: CompanyScope, events: readonly EventRatingWrite[]): Promise<void> {
  if (events.length === 0) return;
  await tx.query(
    `UPDATE usage_events e
        SET rated_amount = v.rated_amount, applied_rate = v.applied_rate, rule_id = v.rule_id,
            pricing_version = v.pricing_version, line_key = v.line_key
       FROM unnest($2::text[], $3::numeric[], $4::numeric[], $5::text[], $6::int[], $7::text[])
            AS v(id, rated_amount, applied_rate, rule_id, pricing_version, line_key)
      WHERE e.company_id = $1 AND e.id = v.id`,
    [
      events.map((e) => e.id),
      events.map((e) => e.ratedAmount),
      events.map((e) => e.appliedRate),
      events.map((e) => e.ruleId),
      events.map((e) => e.pricingVersion),
      events.map((e) => e.lineKey),
    ],
  );
}

/** The event, locked for the rest of the transaction. */
export async function lockUsageEvent(tx: CompanyScope, id: string): Promise<UsageEventRow | undefined> {
  const { rows } = await tx.query<UsageEventRow>(
    `SELECT ${EVENT_COLUMNS} FROM usage_events WHERE company_id = $1 AND id = $2 FOR UPDATE`,
    [id],
  );
  return rows[0];
}

/** Marks an event voided (it keeps its figures as they were). */
export async function markEventVoided(tx: CompanyScope, id: string, reason: string | null, at: Date): Promise<void> {
  await tx.query(
    `UPDATE usage_events SET status = 'voided', voided_at = $3, void_reason = $4 WHERE company_id = $1 AND id = $2`,
    [id, at, reason],
  );
}

/**
 * Moves the events billed on a voided invoice to the draft that reissues it (invoices/lifecycle/void-invoice.ts).
 * By their contract and period first: the index they are found by (invoices/documents/statement-repository.ts).
 */
export async function moveEventsToInvoice(tx: CompanyScope, from: string, to: string): Promise<void> {
  await tx.query(
    `UPDATE usage_events e SET invoice_number = $3
       FROM invoices i
      WHERE i.company_id = $1 AND i.number = $2
        AND e.company_id = $1 AND e.contract_id = i.contract_id AND e.service_period_start = i.period_start
        AND e.invoice_number = $2`,
    [from, to],
  );
}
