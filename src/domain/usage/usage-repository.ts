import type { CompanyScope } from "../../db/company-scope.js";
import { toDecimalString } from "../kernel/money.js";
import { groupByLine, type GroupableEvent } from "../invoices/line-deltas.js";

export interface UsageEventRow {
  id: string;
  seq: string;
  contract_id: string;
  metric: string;
  quantity: string;
  fee_amount: string | null;
  applied_rate: string | null;
  counterparty: string | null;
  counterparty_side: string | null;
  pair: string | null;
  rated_amount: string;
  rule_id: string;
  pricing_version: number;
  invoice_number: string;
  service_period_start: string;
  service_period_end: string;
  event_timestamp: Date;
  ingested_at: Date;
  status: string;
  voided_at: Date | null;
  void_reason: string | null;
}

/** A rated event ready to store; decimals as strings. */
export interface RatedEventWrite {
  id: string;
  contractId: string;
  metric: string;
  quantity: string;
  feeAmount: string | null;
  appliedRate: string | null;
  /** The rate the event named itself (null: none, or a fee event); `appliedRate` is the rate it was billed at. */
  sentRate: string | null;
  counterparty: string | null;
  counterpartySide: string | null;
  pair: string | null;
  ratedAmount: string;
  ruleId: string;
  pricingVersion: number;
  invoiceNumber: string;
  lineKey: string;
  periodStart: string;
  periodEnd: string;
  timestamp: string;
}

export const EVENT_COLUMNS = `id, seq, contract_id, metric, quantity, fee_amount, applied_rate, counterparty, counterparty_side, pair,
  rated_amount, rule_id, pricing_version, invoice_number, service_period_start, service_period_end, event_timestamp,
  ingested_at, status, voided_at, void_reason`;

/**
 * The columns both writes share, one array each, in this order: id, contract, metric, quantity, fee,
 * applied rate, counterparty, side, pair, rated amount, rule, version, line key, period start and end,
 * timestamp, sent rate.
 */
function ratedColumns(events: readonly Omit<RatedEventWrite, "invoiceNumber">[]): unknown[][] {
  return [
    events.map((e) => e.id),
    events.map((e) => e.contractId),
    events.map((e) => e.metric),
    events.map((e) => e.quantity),
    events.map((e) => e.feeAmount),
    events.map((e) => e.appliedRate),
    events.map((e) => e.counterparty),
    events.map((e) => e.counterpartySide),
    events.map((e) => e.pair),
    events.map((e) => e.ratedAmount),
    events.map((e) => e.ruleId),
    events.map((e) => e.pricingVersion),
    events.map((e) => e.lineKey),
    events.map((e) => e.periodStart),
    events.map((e) => e.periodEnd),
    events.map((e) => e.timestamp),
    events.map((e) => e.sentRate),
  ];
}

/** Which of these event ids the company has stored already. */
export async function findStoredEventIds(db: CompanyScope, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM usage_events WHERE company_id = $1 AND id = ANY($2::text[])",
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * A copy of an event sent under an id that is stored already (a duplicate), as compared with the stored
 * event; decimals as strings. `appliedRate` is the copy's own (null when it sent none); `ruleId`,
 * `version` and `ruleRate` name the rule that would price the copy now, and that rule's own rate (null
 * when the copy was refused).
 */
export interface DuplicateCopy {
  id: string;
  contractId: string;
  metric: string;
  quantity: string;
  timestamp: string;
  feeAmount: string | null;
  appliedRate: string | null;
  counterparty: string | null;
  counterpartySide: string | null;
  pair: string | null;
  ruleId: string | null;
  version: number | null;
  ruleRate: string | null;
}

/**
 * Which of these copies differ from the event stored under their id (by position in `copies`): in
 * contract, metric, quantity, timestamp (as instants), fee, rate or scope fields. Decimals compare by
 * value, an absent field equals a stored NULL. The stored `applied_rate` is the rate used, so a copy
 * without one asks for the rate of the stored event's rule: taken from `ruleRate` when the copy's rule
 * and version are the stored event's (the usual retry), else read from that program version. A fee
 * was billed as is and stored no rate: a copy with the same fee is not compared on its rate. The same
 * judgement as the ingest function's for a replayed batch (migrations/functions/billing_ingest_usage_lines.sql), for the duplicates it did not
 * judge. One statement; an index probe per copy (LATERAL ... LIMIT 1, never a join over the company's events).
 */
export async function findDifferingCopies(db: CompanyScope, copies: readonly DuplicateCopy[]): Promise<Set<number>> {
  if (copies.length === 0) return new Set();
  // Columns that are NULL for every copy go as empty arrays (unnest pads them with NULLs).
  const optional = <T>(values: T[]): T[] => (values.some((v) => v !== null) ? values : []);
  const { rows } = await db.query<{ i: number }>(
    `SELECT n.i::int AS i
       FROM unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::timestamptz[], $7::numeric[], $8::numeric[],
                   $9::text[], $10::text[], $11::text[], $12::text[], $13::int[], $14::numeric[]) WITH ORDINALITY
            AS n(id, contract_id, metric, quantity, ts, fee, rate, counterparty, side, pair, rule_id, version, rule_rate, i)
       CROSS JOIN LATERAL (SELECT s.contract_id, s.metric, s.quantity, s.event_timestamp, s.fee_amount, s.applied_rate,
                                  s.counterparty, s.counterparty_side, s.pair, s.rule_id, s.pricing_version
                             FROM usage_events s WHERE s.company_id = $1 AND s.id = n.id LIMIT 1) AS s
      WHERE s.contract_id <> n.contract_id OR s.metric <> n.metric OR s.quantity <> n.quantity OR s.event_timestamp <> n.ts
         OR s.fee_amount IS DISTINCT FROM n.fee OR s.counterparty IS DISTINCT FROM n.counterparty
         OR s.counterparty_side IS DISTINCT FROM n.side OR s.pair IS DISTINCT FROM n.pair
         OR (s.fee_amount IS NULL AND s.applied_rate <> COALESCE(n.rate,
               CASE WHEN s.rule_id = n.rule_id AND s.pricing_version = n.version THEN n.rule_rate
                    -- the rule's own rate, as ruleRate (pricers.ts) reads it
                    ELSE (SELECT COALESCE(CASE WHEN r->>'model' = 'percentage' THEN r->>'rate' ELSE r->>'amount' END, '0')::numeric
                            FROM pricing_program_versions v CROSS JOIN jsonb_array_elements(v.rules) AS r
                           WHERE v.company_id = $1 AND v.contract_id = s.contract_id AND v.version = s.pricing_version
                             AND r->>'id' = s.rule_id
                           LIMIT 1) END))`,
    [
      copies.map((c) => c.id),
      copies.map((c) => c.contractId),
      copies.map((c) => c.metric),
      copies.map((c) => c.quantity),
      copies.map((c) => c.timestamp),
      optional(copies.map((c) => c.feeAmount)),
      optional(copies.map((c) => c.appliedRate)),
      optional(copies.map((c) => c.counterparty)),
      optional(copies.map((c) => c.counterpartySide)),
      optional(copies.map((c) => c.pair)),
      optional(copies.map((c) => c.ruleId)),
      optional(copies.map((c) => c.version)),
      optional(copies.map((c) => c.ruleRate)),
    ],
  );
  return new Set(rows.map((r) => r.i - 1));
}

/**
 * Stores rated events in one statement. An id stored meanwhile by a concurrent request is skipped
 * (ON CONFLICT DO NOTHING); the caller compares the returned ids with what it sent.
 */
export async function insertRatedEvents(
  tx: CompanyScope,
  events: readonly RatedEventWrite[],
  ingestedAt: Date,
): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty,
                               counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number, line_key,
                               service_period_start, service_period_end, event_timestamp, sent_rate, ingested_at, status)
     SELECT $1, v.*, $20, 'rated'
       FROM unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::numeric[], $7::numeric[], $8::text[], $9::text[],
                   $10::text[], $11::numeric[], $12::text[], $13::int[], $14::text[], $15::text[], $16::date[], $17::date[],
                   $18::timestamptz[], $19::numeric[])
            AS v(id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty, counterparty_side, pair,
                 rated_amount, rule_id, pricing_version, invoice_number, line_key, period_start, period_end, event_timestamp,
                 sent_rate)
     ON CONFLICT (company_id, id) DO NOTHING
     RETURNING id`,
    [
      ...ratedColumns(events).slice(0, 12),
      events.map((e) => e.invoiceNumber),
      ...ratedColumns(events).slice(12),
      ingestedAt,
    ],
  );
  return rows.map((r) => r.id);
}

/** A rated event for the one-round-trip path; its invoice is found by the database function. */
export interface BatchEventWrite extends Omit<RatedEventWrite, "invoiceNumber">, GroupableEvent {}

export type BatchOutcome = {
  stale: string[];
  missing: { contractId: string; periodStart: string }[];
  /** New events whose period's invoice is no longer a draft: refused (then nothing was written). */
  closed: string[];
  stored: "all" | string[];
  /** The duplicates were compared with their stored events (migrations/functions/billing_ingest_usage_lines.sql): those in `differs` differ,
   *  those in `recheck` were not judged, the others are identical. When false, none was compared. */
  compared: boolean;
  differs: string[];
  recheck: string[];
};

/**
 * Stores a rated batch and folds it into its draft invoices in one call of billing_ingest_usage_lines
 * (migrations/functions/billing_ingest_usage_lines.sql): one round trip, one short transaction; the lines' sums go along, already added up.
 * Reports contracts that changed since they were read, drafts that must be created first, or periods whose
 * invoice has been issued (then nothing was written), else which events it stored: all of them, or those listed (the others were duplicates),
 * and, for a call of replays, which duplicates differ from their stored events (migrations/functions/billing_ingest_usage_lines.sql).
 */
export async function ingestRatedBatch(
  db: CompanyScope,
  events: readonly BatchEventWrite[],
  now: Date,
): Promise<BatchOutcome> {
  const { pairs, lines, eventLines } = groupByLine(events);
  // The parameter arrays, each filled in one pass; indexes become 1-based for SQL. An event's metric and
  // applied rate are its line's. A column that is NULL for every event goes as an empty array (unnest pads
  // it with NULLs): most events have no fee, counterparty, side or pair.
  const n = events.length;
  const ids = new Array<string>(n);
  const lineOf = new Array<number>(n);
  const quantities = new Array<string>(n);
  const charges = new Array<string>(n);
  const ruleIds = new Array<string>(n);
  const timestamps = new Array<string>(n);
  const fees = new Array<string | null>(n);
  const counterparties = new Array<string | null>(n);
  const sides = new Array<string | null>(n);
  const scopePairs = new Array<string | null>(n);
  const sentRates = new Array<string | null>(n);
  let anySentRate = false;
  let anyFee = false;
  let anyCounterparty = false;
  let anySide = false;
  let anyPair = false;
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    ids[i] = e.id;
    lineOf[i] = eventLines[i]! + 1;
    quantities[i] = e.quantity;
    charges[i] = e.ratedAmount;
    ruleIds[i] = e.ruleId;
    timestamps[i] = e.timestamp;
    fees[i] = e.feeAmount;
    counterparties[i] = e.counterparty;
    sides[i] = e.counterpartySide;
    scopePairs[i] = e.pair;
    sentRates[i] = e.sentRate;
    if (e.sentRate !== null) anySentRate = true;
    if (e.feeAmount !== null) anyFee = true;
    if (e.counterparty !== null) anyCounterparty = true;
    if (e.counterpartySide !== null) anySide = true;
    if (e.pair !== null) anyPair = true;
  }
  const { rows } = await db.query<{
    outcome: string;
    contract_id: string | null;
    period_start: string | null;
    event_id: string | null;
  }>(
    `SELECT outcome, contract_id, period_start, event_id FROM billing_ingest_usage_lines(
       $1, $2, $3::text[], $4::int[], $5::date[], $6::date[],
       $7::int[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::numeric[], $14::numeric[], $15::numeric[],
       $16::text[], $17::int[], $18::numeric[], $19::numeric[], $20::text[], $21::timestamptz[],
       $22::numeric[], $23::text[], $24::text[], $25::text[], $26::numeric[], $27::int[])`,
    [
      now,
      pairs.map((p) => p.contractId),
      pairs.map((p) => p.version),
      pairs.map((p) => p.periodStart),
      pairs.map((p) => p.periodEnd),
      lines.map((l) => l.pair + 1),
      lines.map((l) => l.key),
      lines.map((l) => l.kind),
      lines.map((l) => l.ruleId),
      lines.map((l) => l.metric),
      lines.map((l) => l.description),
      lines.map((l) => l.unitPrice),
      lines.map((l) => toDecimalString(l.quantity)),
      lines.map((l) => toDecimalString(l.charge)),
      ids,
      lineOf,
      quantities,
      charges,
      ruleIds,
      timestamps,
      anyFee ? fees : [],
      anyCounterparty ? counterparties : [],
      anySide ? sides : [],
      anyPair ? scopePairs : [],
      anySentRate ? sentRates : [],
      pairs.map((p) => p.head),
    ],
  );
  const outcome: BatchOutcome = {
    stale: [],
    missing: [],
    closed: [],
    stored: [],
    compared: false,
    differs: [],
    recheck: [],
  };
  const stored: string[] = [];
  for (const row of rows) {
    if (row.outcome === "stored") {
      if (row.event_id === null) outcome.stored = "all";
      else stored.push(row.event_id);
    } else if (row.outcome === "stale") outcome.stale.push(row.contract_id!);
    else if (row.outcome === "missing")
      outcome.missing.push({ contractId: row.contract_id!, periodStart: row.period_start! });
    else if (row.outcome === "closed") outcome.closed.push(row.event_id!);
    else if (row.outcome === "compared") outcome.compared = true;
    else if (row.outcome === "differs") outcome.differs.push(row.event_id!);
    else if (row.outcome === "recheck") outcome.recheck.push(row.event_id!);
    else throw new Error(`billing_ingest_usage_lines answered an unknown outcome '${row.outcome}'`);
  }
  if (outcome.stored !== "all") outcome.stored = stored;
  return outcome;
}

/**
 * Contracts (of these) that changed since they were read: not active, another newest program version, or credits
 * where the reader saw none (or the reverse).
 */
export async function findStaleContracts(
  db: CompanyScope,
  seen: ReadonlyMap<string, { version: number; hasCredits: boolean }>,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT w.id FROM unnest($2::text[], $3::int[], $4::boolean[]) AS w(id, version, has_credits)
       LEFT JOIN contracts k ON k.company_id = $1 AND k.id = w.id
      WHERE k.id IS NULL OR k.current_version <> w.version OR k.status <> 'active' OR k.has_credits <> w.has_credits`,
    [[...seen.keys()], [...seen.values()].map((s) => s.version), [...seen.values()].map((s) => s.hasCredits)],
  );
  return rows.map((r) => r.id);
}
