import type { Queryable } from "../../db/database.js";
import type { FrozenBill } from "../invoices/invoice-figures.js";
import type { LineRecord } from "../invoices/invoice-lines.js";
import type { MinimumTermRecord } from "../contracts/minimum-terms.js";
import { LINES_JSON } from "../invoices/invoice-repository.js";

export interface LineEventMismatch {
  company_id: string;
  invoice_number: string;
  line_key: string;
  line_charge_total: string | null;
  line_quantity: string | null;
  events_charge_total: string | null;
  events_quantity: string | null;
}

/**
 * Usage and fee lines whose exact sums differ from the events rated onto them, and events whose line is
 * missing: every stored event but a voided one must be on exactly one line of its invoice (issue: invariants).
 */
export async function findLineEventMismatches(db: Queryable, companyId: string | null): Promise<LineEventMismatch[]> {
  const { rows } = await db.query<LineEventMismatch>(
    `WITH e AS (
       SELECT company_id, invoice_number, line_key, sum(rated_amount) AS charge_total, sum(quantity) AS quantity
         FROM usage_events WHERE ($1::uuid IS NULL OR company_id = $1) AND status <> 'voided'
        GROUP BY company_id, invoice_number, line_key
     ), l AS (
       SELECT company_id, invoice_number, line_key, charge_total, quantity
         FROM invoice_lines WHERE kind IN ('usage', 'fee') AND ($1::uuid IS NULL OR company_id = $1)
     )
     SELECT COALESCE(l.company_id, e.company_id) AS company_id, COALESCE(l.invoice_number, e.invoice_number) AS invoice_number,
            COALESCE(l.line_key, e.line_key) AS line_key, l.charge_total::text AS line_charge_total,
            l.quantity::text AS line_quantity, e.charge_total::text AS events_charge_total, e.quantity::text AS events_quantity
       FROM l FULL JOIN e ON e.company_id = l.company_id AND e.invoice_number = l.invoice_number AND e.line_key = l.line_key
      WHERE l.line_key IS NULL OR e.line_key IS NULL OR l.charge_total <> e.charge_total OR l.quantity <> e.quantity
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export async function countUsageEvents(
  db: Queryable,
  companyId: string | null,
): Promise<{ count: number; ratedTotal: string }> {
  const { rows } = await db.query<{ count: string; rated_total: string }>(
    `SELECT count(*) AS count, COALESCE(sum(rated_amount), 0)::text AS rated_total FROM usage_events
      WHERE ($1::uuid IS NULL OR company_id = $1) AND status <> 'voided'`,
    [companyId],
  );
  return { count: Number(rows[0]!.count), ratedTotal: rows[0]!.rated_total };
}

export interface MisplacedEvent {
  id: string;
  invoice_number: string;
  contract_id: string;
  service_period_start: string;
}

/** Events whose invoice is missing, or belongs to another contract or month. */
export async function findMisplacedEvents(db: Queryable, companyId: string | null): Promise<MisplacedEvent[]> {
  const { rows } = await db.query<MisplacedEvent>(
    `SELECT e.id, e.invoice_number, e.contract_id, e.service_period_start
       FROM usage_events e
       LEFT JOIN invoices i ON i.company_id = e.company_id AND i.number = e.invoice_number
      WHERE ($1::uuid IS NULL OR e.company_id = $1)
        AND (i.number IS NULL OR i.contract_id <> e.contract_id OR i.period_start <> e.service_period_start)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface EventOutsideItsPeriod {
  id: string;
  event_timestamp: Date;
  service_period_start: string;
  service_period_end: string;
}

/** Events whose service period does not hold their timestamp's UTC date (the month an event is billed in). */
export async function findEventsOutsideTheirPeriod(
  db: Queryable,
  companyId: string | null,
): Promise<EventOutsideItsPeriod[]> {
  const { rows } = await db.query<EventOutsideItsPeriod>(
    `SELECT id, event_timestamp, service_period_start, service_period_end
       FROM usage_events
      WHERE ($1::uuid IS NULL OR company_id = $1)
        AND ((event_timestamp AT TIME ZONE 'UTC')::date < service_period_start
             OR (event_timestamp AT TIME ZONE 'UTC')::date > service_period_end)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface CapExcess {
  invoice_number: string;
  rule_id: string;
  capped_total: string;
  monthly_cap: string;
}

/** Rules whose capped charges on one invoice (one contract and month) exceed the largest cap they ever had. */
export async function findCapExcesses(db: Queryable, companyId: string | null): Promise<CapExcess[]> {
  const { rows } = await db.query<CapExcess>(
    `WITH caps AS (
       SELECT v.company_id, v.contract_id, r->>'id' AS rule_id, max((r->>'monthly_cap')::numeric) AS monthly_cap
         FROM pricing_program_versions v, jsonb_array_elements(v.rules) AS r
        WHERE ($1::uuid IS NULL OR v.company_id = $1) AND r->>'monthly_cap' IS NOT NULL
        GROUP BY 1, 2, 3
     )
     SELECT l.invoice_number, l.rule_id, sum(l.capped_total)::text AS capped_total, c.monthly_cap::text AS monthly_cap
       FROM invoice_lines l
       JOIN invoices i ON i.company_id = l.company_id AND i.number = l.invoice_number
       JOIN caps c ON c.company_id = l.company_id AND c.contract_id = i.contract_id AND c.rule_id = l.rule_id
      WHERE l.kind = 'usage' AND ($1::uuid IS NULL OR l.company_id = $1)
      GROUP BY l.invoice_number, l.rule_id, c.monthly_cap
     HAVING sum(l.capped_total) > c.monthly_cap
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface VersionGap {
  contract_id: string;
  current_version: number;
  versions: number;
  max_version: number | null;
}

/** Contracts whose program versions are not exactly 1..current_version. */
export async function findVersionGaps(db: Queryable, companyId: string | null): Promise<VersionGap[]> {
  const { rows } = await db.query<VersionGap>(
    `SELECT c.id AS contract_id, c.current_version, count(v.version)::int AS versions, max(v.version) AS max_version
       FROM contracts c
       LEFT JOIN pricing_program_versions v ON v.company_id = c.company_id AND v.contract_id = c.id
      WHERE ($1::uuid IS NULL OR c.company_id = $1)
      GROUP BY c.company_id, c.id, c.current_version
     HAVING count(v.version) <> c.current_version OR max(v.version) IS DISTINCT FROM c.current_version OR min(v.version) <> 1
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface OrphanDelivery {
  id: string;
  event_id: string;
}

/** Deliveries of real (not test) events that have no event row: the outbox must be their only source. */
export async function findOrphanDeliveries(db: Queryable, companyId: string | null): Promise<OrphanDelivery[]> {
  const { rows } = await db.query<OrphanDelivery>(
    `SELECT d.id, d.event_id FROM webhook_deliveries d
       LEFT JOIN events e ON e.company_id = d.company_id AND e.id = d.event_id
      WHERE NOT d.test AND e.id IS NULL AND ($1::uuid IS NULL OR d.company_id = $1)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface UndeliveredEvent {
  id: string;
  endpoint_id: string;
}

/**
 * Events without a delivery for an endpoint that was enabled, subscribed to the type, and created before
 * the event, and that was never disabled since (updated_at before the event): such an event was lost.
 */
export async function findUndeliveredEvents(db: Queryable, companyId: string | null): Promise<UndeliveredEvent[]> {
  const { rows } = await db.query<UndeliveredEvent>(
    `SELECT ev.id, w.id AS endpoint_id
       FROM events ev
       JOIN webhook_endpoints w ON w.company_id = ev.company_id AND ev.type = ANY (w.events) AND w.enabled
                               AND w.created_at < ev.created_at AND w.updated_at < ev.created_at
      WHERE ($1::uuid IS NULL OR ev.company_id = $1)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                         WHERE d.company_id = ev.company_id AND d.event_id = ev.id AND d.endpoint_id = w.id)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface FrozenInvoiceRow {
  company_id: string;
  number: string;
  currency: string;
  minimum_amount: string | null;
  minimum_terms: MinimumTermRecord[] | null;
  billed: FrozenBill;
  lines: LineRecord[];
}

/**
 * Every invoice that has left draft, with the figures it was issued with and its stored lines; but a void
 * invoice that was reissued, whose lines its reissue took over (findReissueLeftovers checks that it kept none).
 */
export async function listFrozenInvoices(db: Queryable, companyId: string | null): Promise<FrozenInvoiceRow[]> {
  const { rows } = await db.query<FrozenInvoiceRow>(
    `SELECT i.company_id, i.number, i.currency, i.minimum_amount::text AS minimum_amount, i.minimum_terms, i.billed, ${LINES_JSON} AS lines
       FROM invoices i
      WHERE ($1::uuid IS NULL OR i.company_id = $1) AND i.status <> 'draft'
        AND NOT EXISTS (SELECT 1 FROM invoices r WHERE r.company_id = i.company_id AND r.reissue_of = i.number)
      ORDER BY i.company_id, i.seq`,
    [companyId],
  );
  return rows;
}

/** Events stored on an invoice after it was issued (at most 1,000). */
export async function findEventsAfterIssue(
  db: Queryable,
  companyId: string | null,
): Promise<{ id: string; invoice_number: string; ingested_at: Date; issued_at: Date }[]> {
  const { rows } = await db.query<{ id: string; invoice_number: string; ingested_at: Date; issued_at: Date }>(
    `SELECT e.id, e.invoice_number, e.ingested_at, i.issued_at
       FROM usage_events e JOIN invoices i ON i.company_id = e.company_id AND i.number = e.invoice_number
      WHERE ($1::uuid IS NULL OR e.company_id = $1) AND i.issued_at IS NOT NULL AND e.ingested_at > i.issued_at
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

/** Uploaded agreements whose bytes no longer have the SHA-256 stored when they were uploaded (at most 1,000). */
export async function findAlteredDocuments(
  db: Queryable,
  companyId: string | null,
): Promise<{ id: string; contract_id: string | null }[]> {
  const { rows } = await db.query<{ id: string; contract_id: string | null }>(
    `SELECT d.id, c.id AS contract_id
       FROM contract_documents d
       LEFT JOIN contracts c ON c.company_id = d.company_id AND c.document_id = d.id
      WHERE ($1::uuid IS NULL OR d.company_id = $1) AND encode(sha256(d.content), 'hex') <> d.sha256
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface CreditMismatch {
  grant_id: string;
  balance: string;
  ledger_total: string | null;
}

/** Credit grants whose balance is not the sum of their ledger entries. */
export async function findCreditBalanceMismatches(db: Queryable, companyId: string | null): Promise<CreditMismatch[]> {
  const { rows } = await db.query<CreditMismatch>(
    `SELECT g.id AS grant_id, g.balance::text AS balance, l.total::text AS ledger_total
       FROM credit_grants g
       LEFT JOIN (SELECT company_id, grant_id, sum(amount) AS total FROM credit_ledger
                   WHERE ($1::uuid IS NULL OR company_id = $1) GROUP BY company_id, grant_id) AS l
         ON l.company_id = g.company_id AND l.grant_id = g.id
      WHERE ($1::uuid IS NULL OR g.company_id = $1) AND g.balance IS DISTINCT FROM COALESCE(l.total, 0)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface CreditLineMismatch {
  invoice_number: string;
  grant_id: string;
  line_total: string | null;
  burned: string | null;
}

/**
 * Credit lines that differ from what their grant's ledger burned on that invoice (its burns and give-backs), and
 * invoices whose credits exceed their usage.
 */
export async function findCreditLineMismatches(db: Queryable, companyId: string | null): Promise<CreditLineMismatch[]> {
  const { rows } = await db.query<CreditLineMismatch>(
    `WITH b AS (
       SELECT company_id, invoice_number, grant_id, sum(amount) AS burned FROM credit_ledger
        WHERE kind IN ('burn', 'void') AND ($1::uuid IS NULL OR company_id = $1)
        GROUP BY company_id, invoice_number, grant_id
     ), l AS (
       SELECT company_id, invoice_number, substr(line_key, 8) AS grant_id, charge_total FROM invoice_lines
        WHERE kind = 'credit' AND ($1::uuid IS NULL OR company_id = $1)
     )
     SELECT COALESCE(l.invoice_number, b.invoice_number) AS invoice_number, COALESCE(l.grant_id, b.grant_id) AS grant_id,
            l.charge_total::text AS line_total, b.burned::text AS burned
       FROM l FULL JOIN b ON b.company_id = l.company_id AND b.invoice_number = l.invoice_number AND b.grant_id = l.grant_id
      WHERE COALESCE(l.charge_total, 0) <> COALESCE(b.burned, 0)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

/** Invoices whose credit lines take off more than the lines credits may pay charge (usage, fees not passed through). */
export async function findOvercreditedInvoices(
  db: Queryable,
  companyId: string | null,
): Promise<{ invoice_number: string; usage: string; credit: string }[]> {
  const { rows } = await db.query<{ invoice_number: string; usage: string; credit: string }>(
    `SELECT invoice_number, sum(charge_total) FILTER (WHERE billing_line_is_creditable(kind, line_key))::text AS usage,
            (-sum(charge_total) FILTER (WHERE kind = 'credit'))::text AS credit
       FROM invoice_lines WHERE ($1::uuid IS NULL OR company_id = $1)
      GROUP BY company_id, invoice_number
     HAVING -COALESCE(sum(charge_total) FILTER (WHERE kind = 'credit'), 0)
            > GREATEST(COALESCE(sum(charge_total) FILTER (WHERE billing_line_is_creditable(kind, line_key)), 0), 0)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

/**
 * Void and reissue: a reissued invoice must name a void invoice of its own contract and period, a void invoice
 * has at most one reissue, and a reissued void invoice keeps no line, no event and no credit burn (its reissue
 * took them over). At most 1,000.
 */
export async function findReissueProblems(
  db: Queryable,
  companyId: string | null,
): Promise<{ number: string; problem: string }[]> {
  const { rows } = await db.query<{ number: string; problem: string }>(
    `SELECT r.number, 'reissues ' || r.reissue_of || ', which is not a void invoice of its contract and period' AS problem
       FROM invoices r LEFT JOIN invoices v ON v.company_id = r.company_id AND v.number = r.reissue_of
      WHERE ($1::uuid IS NULL OR r.company_id = $1) AND r.reissue_of IS NOT NULL
        AND (v.number IS NULL OR billing_invoice_is_live(v.status) OR v.contract_id <> r.contract_id OR v.period_start <> r.period_start)
     UNION ALL
     SELECT r.reissue_of, 'is reissued ' || count(*) || ' times' FROM invoices r
      WHERE ($1::uuid IS NULL OR r.company_id = $1) AND r.reissue_of IS NOT NULL
      GROUP BY r.company_id, r.reissue_of HAVING count(*) > 1
     UNION ALL
     SELECT v.number, 'was reissued but still holds ' || what FROM invoices v
       JOIN invoices r ON r.company_id = v.company_id AND r.reissue_of = v.number
       CROSS JOIN LATERAL (
         SELECT 'lines' AS what WHERE EXISTS (SELECT 1 FROM invoice_lines l WHERE l.company_id = v.company_id AND l.invoice_number = v.number)
         UNION ALL
         SELECT 'usage events' WHERE EXISTS (SELECT 1 FROM usage_events e WHERE e.company_id = v.company_id
           AND e.contract_id = v.contract_id AND e.service_period_start = v.period_start AND e.invoice_number = v.number)
         UNION ALL
         SELECT 'credit burns' WHERE EXISTS (SELECT 1 FROM credit_ledger c WHERE c.company_id = v.company_id AND c.invoice_number = v.number)
       ) AS left_over
      WHERE ($1::uuid IS NULL OR v.company_id = $1)
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

/**
 * Payments and credit notes: an invoice's amount_paid and amount_credited are the sums of its payments and
 * credit notes; only issued and paid invoices have either; a paid invoice has nothing due, an issued one
 * something. At most 1,000.
 */
export async function findCollectionProblems(
  db: Queryable,
  companyId: string | null,
): Promise<{ number: string; problem: string }[]> {
  const { rows } = await db.query<{ number: string; problem: string }>(
    `WITH sums AS (
       SELECT i.company_id, i.number, i.status, i.amount_paid, i.amount_credited, (i.billed->>'total')::numeric AS total,
              (SELECT COALESCE(sum(p.amount), 0) FROM invoice_payments p WHERE p.company_id = i.company_id AND p.invoice_number = i.number) AS paid,
              (SELECT COALESCE(sum(n.amount), 0) FROM credit_notes n WHERE n.company_id = i.company_id AND n.invoice_number = i.number) AS credited
         FROM invoices i
        WHERE ($1::uuid IS NULL OR i.company_id = $1)
     )
     SELECT number, 'amount_paid ' || amount_paid || ' but its payments sum to ' || paid AS problem FROM sums WHERE amount_paid <> paid
     UNION ALL
     SELECT number, 'amount_credited ' || amount_credited || ' but its credit notes sum to ' || credited FROM sums WHERE amount_credited <> credited
     UNION ALL
     SELECT number, 'is ' || status || ' but has payments or credit notes' FROM sums
      WHERE status IN ('draft', 'void') AND (paid > 0 OR credited > 0)
     UNION ALL
     SELECT number, 'is paid but ' || (total - amount_paid - amount_credited) || ' is due' FROM sums
      WHERE status = 'paid' AND amount_paid + amount_credited < total
     UNION ALL
     SELECT number, 'credits ' || credited || ', more than its total ' || total FROM sums WHERE credited > total
     UNION ALL
     SELECT number, 'was paid ' || paid || ', more than its total ' || total FROM sums WHERE paid > total
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}
