import type { CompanyScope } from "../../db/company-scope.js";
import { PAYMENTS_JSON } from "./collections/collection-repository.js";
import type { ProgramSegment } from "../contracts/program-timeline.js";
import { type InvoiceRow, LINES_JSON, oneTimeRulesBilledSql } from "./invoice-repository.js";

// Invoices as they are read: one with its lines, a page of them, the month's drafts, one with the parties its
// PDF names. Each reads the lines in the same statement (LINES_JSON).

/** An invoice's own columns (`i`), without its contract's metrics or its lines. */
export const INVOICE_OWN_COLUMNS = `i.company_id, i.number, i.seq, i.contract_id, i.status, i.currency, i.period_start, i.period_end,
  i.minimum_amount::text AS minimum_amount, i.minimum_terms, i.projected_at, i.billed, i.issued_at, i.issued_date, i.due_date, i.paid_date, i.created_at,
  i.updated_at, i.hosted_url, i.amount_paid::text AS amount_paid, i.amount_credited::text AS amount_credited, i.reissue_of,
  (SELECT r.number FROM invoices r WHERE r.company_id = i.company_id AND r.reissue_of = i.number) AS reissued_as,
  ${PAYMENTS_JSON} AS payments`;

/**
 * The invoice's customer (`c` its contract, `cu` the customer): its id and name, or the contract's copy of the
 * name should the customer's row be missing.
 */
export const INVOICE_CUSTOMER_COLUMNS = "c.customer_id, COALESCE(cu.name, c.customer_name) AS customer_name";

/** The joins INVOICE_COLUMNS reads from: the invoice's contract and customer. */
const INVOICE_JOINS = `invoices i JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
       LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id`;

const INVOICE_COLUMNS = `${INVOICE_OWN_COLUMNS}, c.metrics, ${INVOICE_CUSTOMER_COLUMNS}, ${LINES_JSON} AS lines`;

export async function findInvoice(db: CompanyScope, number: string): Promise<InvoiceRow | undefined> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS}
       FROM ${INVOICE_JOINS}
      WHERE i.company_id = $1 AND i.number = $2`,
    [number],
  );
  return rows[0];
}

export async function findInvoiceSeq(db: CompanyScope, number: string): Promise<string | undefined> {
  const { rows } = await db.query<{ seq: string }>("SELECT seq FROM invoices WHERE company_id = $1 AND number = $2", [
    number,
  ]);
  return rows[0]?.seq;
}

/** A list's filter as stored columns: `statuses` any of these stored statuses, `dueBefore` a due_date before that day. */
export interface InvoiceFilter {
  contractId?: string | undefined;
  statuses?: readonly string[] | undefined;
  dueBefore?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** Newest first; fetches limit + 1 rows. */
export async function listInvoices(
  db: CompanyScope,
  filter: InvoiceFilter,
  afterSeq: string | undefined,
  limit: number,
): Promise<InvoiceRow[]> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS}
       FROM ${INVOICE_JOINS}
      WHERE i.company_id = $1
        AND ($2::text IS NULL OR i.contract_id = $2)
        AND ($3::text[] IS NULL OR i.status = ANY($3::text[]))
        AND ($4::date IS NULL OR i.period_start >= $4)
        AND ($5::date IS NULL OR i.period_end <= $5)
        AND ($6::bigint IS NULL OR i.seq < $6)
        AND ($8::date IS NULL OR i.due_date < $8)
      ORDER BY i.seq DESC
      LIMIT $7`,
    [
      filter.contractId ?? null,
      filter.statuses ? [...filter.statuses] : null,
      filter.from ?? null,
      filter.to ?? null,
      afterSeq ?? null,
      limit + 1,
      filter.dueBefore ?? null,
    ],
  );
  return rows;
}

/** What a month's totals need of an invoice: a draft's stored lines and minimum, any other's frozen figures. */
export type InvoiceState = Pick<
  InvoiceRow,
  "number" | "status" | "period_end" | "seq" | "currency" | "minimum_amount" | "minimum_terms" | "lines" | "billed"
>;

/**
 * The figures of every invoice with one of these statuses and this period start, in pages of `limit` after
 * `afterSeq` (the dashboard's month to date sums their totals). A draft's lines only: an issued invoice's
 * figures are frozen in `billed`.
 */
export async function listInvoiceStates(
  db: CompanyScope,
  statuses: readonly string[],
  periodStart: string,
  afterSeq: string | null,
  limit: number,
): Promise<InvoiceState[]> {
  const { rows } = await db.query<InvoiceState>(
    `SELECT i.number, i.status, i.period_end, i.seq, i.currency, i.minimum_amount::text AS minimum_amount,
            i.minimum_terms, i.billed,
            CASE WHEN i.billed IS NULL THEN ${LINES_JSON} ELSE '[]'::json END AS lines
       FROM invoices i
      WHERE i.company_id = $1 AND i.status = ANY($2::text[]) AND i.period_start = $3
        AND ($4::bigint IS NULL OR i.seq > $4)
      ORDER BY i.seq
      LIMIT $5`,
    [[...statuses], periodStart, afterSeq, limit],
  );
  return rows;
}

/** The customer an invoice bills, as its documents show it now (a draft's, and what issuing freezes). */
export interface LiveCustomerColumns {
  /** The customer's name, or the contract's copy of it when the customer is gone. */
  customer_name: string;
  customer_address: string | null;
  customer_country: string | null;
  customer_email: string | null;
  customer_tax_id: string | null;
  customer_memo: string | null;
}

const LIVE_CUSTOMER_COLUMNS = `COALESCE(cu.name, c.customer_name) AS customer_name, cu.address AS customer_address,
  cu.country AS customer_country, cu.email AS customer_email, cu.tax_id AS customer_tax_id,
  cu.invoice_memo AS customer_memo`;

/**
 * An invoice with what its documents name: the parties frozen when it was issued (null on a draft, and on an
 * invoice issued before they were kept), the customer as it is now, and the contract's program over time (the
 * rules its lines were priced by).
 */
export interface InvoiceDocumentRow extends InvoiceRow, LiveCustomerColumns {
  parties: unknown;
  programs: ProgramSegment[] | null;
}

export async function findInvoiceDocument(db: CompanyScope, number: string): Promise<InvoiceDocumentRow | undefined> {
  const { rows } = await db.query<InvoiceDocumentRow>(
    `SELECT ${INVOICE_COLUMNS}, i.parties, ${LIVE_CUSTOMER_COLUMNS},
            billing_program_segments(c.company_id, c.id) AS programs
       FROM ${INVOICE_JOINS}
      WHERE i.company_id = $1 AND i.number = $2`,
    [number],
  );
  return rows[0];
}

/** The customer an invoice bills, as it is now. */
export async function findLiveCustomer(db: CompanyScope, number: string): Promise<LiveCustomerColumns | undefined> {
  const { rows } = await db.query<LiveCustomerColumns>(
    `SELECT ${LIVE_CUSTOMER_COLUMNS}
       FROM invoices i
       JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
       LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id
      WHERE i.company_id = $1 AND i.number = $2`,
    [number],
  );
  return rows[0];
}

/**
 * Freezes what an invoice's documents show of its parties (`invoices.parties`), with the seller's logo kept by its
 * SHA-256 (once per company and content: an invoice issued earlier with the same logo shares it).
 */
export async function storeInvoiceParties(
  tx: CompanyScope,
  number: string,
  parties: unknown,
  logo: { sha256: string; contentType: string; bytes: Uint8Array } | null,
): Promise<void> {
  if (logo !== null)
    await tx.query(
      `INSERT INTO invoice_logos (company_id, sha256, content_type, bytes) VALUES ($1, $2, $3, $4)
       ON CONFLICT (company_id, sha256) DO NOTHING`,
      [logo.sha256, logo.contentType, logo.bytes],
    );
  await tx.query("UPDATE invoices SET parties = $3 WHERE company_id = $1 AND number = $2", [
    number,
    JSON.stringify(parties),
  ]);
}

/** A logo an issued invoice was issued with, by its SHA-256. */
export async function findInvoiceLogo(
  db: CompanyScope,
  sha256: string,
): Promise<{ content_type: "image/png" | "image/jpeg"; bytes: Uint8Array } | undefined> {
  const { rows } = await db.query<{ content_type: "image/png" | "image/jpeg"; bytes: Uint8Array }>(
    "SELECT content_type, bytes FROM invoice_logos WHERE company_id = $1 AND sha256 = $2",
    [sha256],
  );
  return rows[0];
}

/**
 * Replaces an issued invoice's logo by the same logo made small (documents/document-pool.ts): it keeps the name
 * the invoice's parties know it by, the SHA-256 of the bytes it was issued with.
 */
export async function replaceInvoiceLogo(
  db: CompanyScope,
  sha256: string,
  small: { contentType: string; bytes: Uint8Array },
): Promise<void> {
  await db.query("UPDATE invoice_logos SET content_type = $3, bytes = $4 WHERE company_id = $1 AND sha256 = $2", [
    sha256,
    small.contentType,
    small.bytes,
  ]);
}

/** The invoice of a contract's billing period, with its lines, if it has one. */
export async function findPeriodInvoice(
  db: CompanyScope,
  contractId: string,
  periodStart: string,
): Promise<InvoiceRow | undefined> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS}
       FROM ${INVOICE_JOINS}
      WHERE i.company_id = $1 AND i.contract_id = $2 AND i.period_start = $3 AND billing_invoice_is_live(i.status)`,
    [contractId, periodStart],
  );
  return rows[0];
}

/** What the receivables report needs of an issued invoice: what it owes (`amountDue`), when, and whose it is. */
export interface ReceivableInvoiceRow {
  seq: string;
  status: string;
  currency: string;
  due_date: string;
  /** The total it was issued with (decimal text). */
  total: string;
  amount_paid: string;
  amount_credited: string;
  customer_id: string;
  customer_name: string;
}

/**
 * The company's issued invoices (of one currency, or all), with their customer, in pages of `limit` after
 * `afterSeq`: one statement per page, the receivables report sums them.
 */
export async function listReceivableInvoices(
  db: CompanyScope,
  currency: string | null,
  afterSeq: string | null,
  limit: number,
): Promise<ReceivableInvoiceRow[]> {
  const { rows } = await db.query<ReceivableInvoiceRow>(
    `SELECT i.seq, i.status, i.currency, i.due_date, i.billed->>'total' AS total, i.amount_paid::text AS amount_paid,
            i.amount_credited::text AS amount_credited, ${INVOICE_CUSTOMER_COLUMNS}
       FROM ${INVOICE_JOINS}
      WHERE i.company_id = $1 AND i.status = 'issued' AND ($2::text IS NULL OR i.currency = $2)
        AND ($3::bigint IS NULL OR i.seq > $3)
      ORDER BY i.seq
      LIMIT $4`,
    [currency, afterSeq, limit],
  );
  return rows;
}

/** What projection reads of a draft beyond its lines (projected-bill.ts): its contract's program, the one-time rules billed elsewhere. */
export interface ProjectionInputRow {
  number: string;
  programs: ProgramSegment[] | null;
  one_time_billed: string[];
}

/** The projection inputs of these invoices (drafts: the reads' `projected` figures), one statement for all of them. */
export async function findProjectionInputs(
  db: CompanyScope,
  numbers: readonly string[],
): Promise<ProjectionInputRow[]> {
  if (numbers.length === 0) return [];
  const { rows } = await db.query<ProjectionInputRow>(
    `SELECT i.number, billing_program_segments(i.company_id, i.contract_id) AS programs,
            ARRAY(${oneTimeRulesBilledSql("i.company_id", "i.contract_id", "i.number")}) AS one_time_billed
       FROM invoices i
      WHERE i.company_id = $1 AND i.number = ANY($2::text[])`,
    [[...numbers]],
  );
  return rows;
}
