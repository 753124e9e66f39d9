import type { Queryable } from "../../db/database.js";
import { sqlStatusesThat } from "./invoice-states.js";
import type { CompanyScope } from "../../db/company-scope.js";
import type { FrozenBill } from "./invoice-figures.js";
import type { PaymentRow } from "./collections/collection-repository.js";
import type { LineRecord } from "./invoice-lines.js";
import type { MinimumTermRecord } from "../contracts/minimum-terms.js";

export interface InvoiceRow {
  company_id: string;
  number: string;
  seq: string;
  contract_id: string;
  status: string;
  currency: string;
  period_start: string;
  period_end: string;
  minimum_amount: string | null;
  /** The month's commitments (contracts/minimum-terms.ts); null on an invoice stored before they were kept. */
  minimum_terms: MinimumTermRecord[] | null;
  projected_at: Date | null;
  /** Issued, paid and void invoices: the figures they were issued with (null on drafts). */
  billed: FrozenBill | null;
  issued_at: Date | null;
  issued_date: string;
  due_date: string;
  paid_date: string | null;
  /** The hosted page's link (null on drafts): invoice-delivery.ts. */
  hosted_url: string | null;
  created_at: Date;
  updated_at: Date;
  /** Sums of its payments and credit notes (billing verify checks both). */
  amount_paid: string;
  amount_credited: string;
  /** A reissued invoice: the void one it replaces. */
  reissue_of: string | null;
  /** A void invoice that was reissued: the draft (or later invoice) that took over its period. */
  reissued_as: string | null;
  /** Its payments, oldest first (PAYMENTS_JSON); dates and instants as JSON gives them. */
  payments: (Omit<PaymentRow, "created_at"> & { created_at: string })[];
  metrics: string[];
  /** The contract's customer. */
  customer_id: string;
  /** The customer's name, or the contract's copy of it when the customer is gone. */
  customer_name: string;
  /** The stored lines: exact sums, from which every figure is derived (invoice-figures.ts). */
  lines: LineRow[];
}

export type LineRow = LineRecord;

export interface LockedInvoice {
  number: string;
  contract_id: string;
  period_start: string;
  currency: string;
  minimum_amount: string | null;
  minimum_terms: MinimumTermRecord[] | null;
  status: string;
}

export interface PeriodKey {
  contractId: string;
  periodStart: string;
}

/**
 * The stored lines of invoice `i` as JSON (LineRecord), decimals as text so that no amount passes through a
 * float: for the reads here and for billing verify.
 */
export const LINES_JSON = `COALESCE((
  SELECT json_agg(json_build_object(
    'key', l.line_key, 'kind', l.kind, 'rule_id', l.rule_id, 'metric', l.metric, 'description', l.description,
    'quantity', l.quantity::text, 'rate', l.rate::text, 'charge_total', l.charge_total::text,
    'capped_total', l.capped_total::text, 'tiers', l.tiers) ORDER BY l.line_key)
  FROM invoice_lines l WHERE l.company_id = i.company_id AND l.invoice_number = i.number), '[]'::json)`;

/**
 * Locks the draft invoices of these (contract, period) pairs in number order, the order the ingest function
 * locks them in too (migrations/functions/billing_ingest_usage_lines.sql), so that requests on either path never wait for each other in a
 * cycle. Pairs without an invoice are simply absent. Read the lines with `findLinesOfInvoices` in a
 * statement of its own: a statement that waited for a lock still reads with the snapshot it started with.
 */
export async function lockInvoices(tx: CompanyScope, keys: readonly PeriodKey[]): Promise<LockedInvoice[]> {
  const { rows } = await tx.query<LockedInvoice>(
    `SELECT i.number, i.contract_id, i.period_start, i.currency, i.minimum_amount::text AS minimum_amount, i.minimum_terms, i.status
       FROM invoices i
      WHERE i.company_id = $1 AND billing_invoice_is_live(i.status)
        AND (i.contract_id, i.period_start) IN (SELECT * FROM unnest($2::text[], $3::date[]))
      ORDER BY i.number
      FOR UPDATE OF i`,
    [keys.map((k) => k.contractId), keys.map((k) => k.periodStart)],
  );
  return rows;
}

/** Which of these (contract, period) pairs have a draft, without locking anything. */
export async function findExistingPeriods(db: CompanyScope, keys: readonly PeriodKey[]): Promise<PeriodKey[]> {
  const { rows } = await db.query<{ contract_id: string; period_start: string }>(
    `SELECT contract_id, period_start FROM invoices
      WHERE company_id = $1 AND billing_invoice_is_live(status)
        AND (contract_id, period_start) IN (SELECT * FROM unnest($2::text[], $3::date[]))`,
    [keys.map((k) => k.contractId), keys.map((k) => k.periodStart)],
  );
  return rows.map((r) => ({ contractId: r.contract_id, periodStart: r.period_start }));
}

export async function findLinesOfInvoices(
  tx: CompanyScope,
  numbers: readonly string[],
): Promise<(LineRow & { invoice_number: string })[]> {
  const { rows } = await tx.query<LineRow & { invoice_number: string }>(
    `SELECT invoice_number, line_key AS key, kind, rule_id, metric, description, quantity::text, rate::text,
            charge_total::text, capped_total::text, tiers
       FROM invoice_lines WHERE company_id = $1 AND invoice_number = ANY($2::text[])`,
    [numbers],
  );
  return rows;
}

export interface NewInvoice {
  number: string;
  seq: number;
  contractId: string;
  currency: string;
  periodStart: string;
  periodEnd: string;
  issuedDate: string;
  dueDate: string;
}

/** Inserts empty draft invoices; a pair that got its invoice meanwhile keeps that one. Returns the inserted numbers. */
export async function insertDraftInvoices(
  tx: CompanyScope,
  invoices: readonly NewInvoice[],
  now: Date,
): Promise<string[]> {
  const { rows } = await tx.query<{ number: string }>(
    `INSERT INTO invoices (company_id, number, seq, contract_id, status, currency, period_start, period_end,
                           issued_date, due_date, created_at, updated_at)
     SELECT $1, v.number, v.seq, v.contract_id, 'draft', v.currency, v.period_start, v.period_end, v.issued_date, v.due_date, $2, $2
       FROM unnest($3::text[], $4::bigint[], $5::text[], $6::text[], $7::date[], $8::date[], $9::date[], $10::date[])
            AS v(number, seq, contract_id, currency, period_start, period_end, issued_date, due_date)
     ON CONFLICT (company_id, contract_id, period_start) WHERE billing_invoice_is_live(status) DO NOTHING
     RETURNING number`,
    [
      now,
      invoices.map((i) => i.number),
      invoices.map((i) => i.seq),
      invoices.map((i) => i.contractId),
      invoices.map((i) => i.currency),
      invoices.map((i) => i.periodStart),
      invoices.map((i) => i.periodEnd),
      invoices.map((i) => i.issuedDate),
      invoices.map((i) => i.dueDate),
    ],
  );
  return rows.map((r) => r.number);
}

export interface LineWrite {
  invoiceNumber: string;
  key: string;
  kind: string;
  ruleId: string | null;
  metric: string | null;
  description: string;
  quantity: string;
  rate: string | null;
  chargeTotal: string;
  cappedTotal: string;
  /** The line's tier sums as JSON text (tiersToRecord), or null. */
  tiers: string | null;
}

export interface InvoiceStateWrite {
  number: string;
  minimumAmount: string | null;
  minimumTerms: MinimumTermRecord[] | null;
  projectedAt: Date | null;
}

/**
 * Writes the new state of locked draft invoices in one statement: upserted lines (absolute exact sums,
 * computed under the lock), removed lines, and the invoices' monthly minimum.
 */
export async function saveDraftState(
  tx: CompanyScope,
  state: {
    lines: readonly LineWrite[];
    removed: readonly { invoiceNumber: string; key: string }[];
    invoices: readonly InvoiceStateWrite[];
  },
  now: Date,
): Promise<void> {
  const { lines, removed, invoices } = state;
  await tx.query(
    `WITH upserted AS (
       INSERT INTO invoice_lines (company_id, invoice_number, line_key, kind, rule_id, metric, description,
                                  quantity, rate, charge_total, capped_total, tiers)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                $8::numeric[], $9::numeric[], $10::numeric[], $11::numeric[], $12::jsonb[])
       ON CONFLICT (company_id, invoice_number, line_key) DO UPDATE SET
         kind = EXCLUDED.kind, rule_id = EXCLUDED.rule_id, metric = EXCLUDED.metric, description = EXCLUDED.description,
         quantity = EXCLUDED.quantity, rate = EXCLUDED.rate, charge_total = EXCLUDED.charge_total,
         capped_total = EXCLUDED.capped_total, tiers = EXCLUDED.tiers
       RETURNING 1
     ), removed AS (
       DELETE FROM invoice_lines
        WHERE company_id = $1 AND (invoice_number, line_key) IN (SELECT * FROM unnest($13::text[], $14::text[]))
       RETURNING 1
     )
     UPDATE invoices i
        SET minimum_amount = v.minimum_amount, minimum_terms = v.minimum_terms,
            projected_at = COALESCE(v.projected_at, i.projected_at), updated_at = $18
       FROM unnest($15::text[], $16::numeric[], $17::timestamptz[], $19::jsonb[])
         AS v(number, minimum_amount, projected_at, minimum_terms)
      WHERE i.company_id = $1 AND i.number = v.number`,
    [
      lines.map((l) => l.invoiceNumber),
      lines.map((l) => l.key),
      lines.map((l) => l.kind),
      lines.map((l) => l.ruleId),
      lines.map((l) => l.metric),
      lines.map((l) => l.description),
      lines.map((l) => l.quantity),
      lines.map((l) => l.rate),
      lines.map((l) => l.chargeTotal),
      lines.map((l) => l.cappedTotal),
      lines.map((l) => l.tiers),
      removed.map((r) => r.invoiceNumber),
      removed.map((r) => r.key),
      invoices.map((i) => i.number),
      invoices.map((i) => i.minimumAmount),
      invoices.map((i) => i.projectedAt),
      now,
      invoices.map((i) => (i.minimumTerms === null ? null : JSON.stringify(i.minimumTerms))),
    ],
  );
}

/** One-time rules of a contract already billed on an invoice other than `exceptNumber`. */
export async function findOneTimeRulesBilled(
  db: CompanyScope,
  contractId: string,
  exceptNumber: string,
): Promise<Set<string>> {
  const { rows } = await db.query<{ rule_id: string }>(oneTimeRulesBilledSql("$1", "$2", "$3"), [
    contractId,
    exceptNumber,
  ]);
  return new Set(rows.map((r) => r.rule_id));
}

/**
 * The one-time rules billed on a contract's invoices other than one (projection bills a one-time fee once):
 * a SELECT of `rule_id` rows over SQL expressions for the company, the contract and the invoice left out, so that
 * `findOneTimeRulesBilled` and the drafts' projected figures (invoice-read-repository.ts) ask the same question.
 */
export const oneTimeRulesBilledSql = (company: string, contract: string, except: string): string =>
  `SELECT DISTINCT ol.rule_id FROM invoice_lines ol
     JOIN invoices oi ON oi.company_id = ol.company_id AND oi.number = ol.invoice_number
    WHERE ol.company_id = ${company} AND oi.contract_id = ${contract} AND ol.kind = 'one_time'
      AND ol.rule_id IS NOT NULL AND ol.invoice_number <> ${except}`;

/**
 * Drafts of every company whose billing period ended on or before `lastPeriodEnd` (the invoice worker's
 * search: it serves all companies, each row naming its own), oldest period first.
 */
export async function findDraftsDue(
  db: Queryable,
  lastPeriodEnd: string,
  limit: number,
): Promise<{ company_id: string; number: string }[]> {
  const { rows } = await db.query<{ company_id: string; number: string }>(
    `SELECT company_id, number FROM invoices
      WHERE status IN (${sqlStatusesThat("finalize")}) AND period_end <= $1 AND reissue_of IS NULL
      ORDER BY period_end, company_id, number
      LIMIT $2`,
    [lastPeriodEnd, limit],
  );
  return rows;
}

/** A contract's invoices whose period ends on or after `day`, oldest period first (no lock). */
export async function findInvoicesEndingFrom(
  db: CompanyScope,
  contractId: string,
  day: string,
): Promise<{ number: string; status: string; period_start: string; period_end: string }[]> {
  const { rows } = await db.query<{ number: string; status: string; period_start: string; period_end: string }>(
    `SELECT number, status, period_start, period_end FROM invoices
      WHERE company_id = $1 AND contract_id = $2 AND period_end >= $3 AND billing_invoice_is_live(status)
      ORDER BY period_start`,
    [contractId, day],
  );
  return rows;
}

/**
 * Holds these contracts against a change of their pricing program (FOR KEY SHARE) until the transaction ends: a
 * draft is never created under a program change that would not see it (contracts/pricing-versions.ts).
 */
export async function holdContracts(tx: CompanyScope, contractIds: readonly string[]): Promise<void> {
  await tx.query(`SELECT 1 FROM contracts WHERE company_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR KEY SHARE`, [
    contractIds,
  ]);
}
