import type { CompanyScope } from "../../db/company-scope.js";
import type { ProgramSegment } from "../contracts/program-timeline.js";
import { type InvoiceRow, LINES_JSON } from "./invoice-repository.js";

// Invoices as they are read: one with its lines, a page of them, the month's drafts, one with the parties its
// PDF names. Each reads the lines in the same statement (LINES_JSON).

/** An invoice's own columns (`i`), without its contract's metrics or its lines. */
export const INVOICE_OWN_COLUMNS = `i.company_id, i.number, i.seq, i.contract_id, i.status, i.currency, i.period_start, i.period_end,
  i.minimum_amount::text AS minimum_amount, i.projected_at, i.billed, i.issued_at, i.issued_date, i.due_date, i.paid_date, i.created_at,
  i.updated_at`;

const INVOICE_COLUMNS = `${INVOICE_OWN_COLUMNS}, c.metrics, ${LINES_JSON} AS lines`;

export async function findInvoice(db: CompanyScope, number: string): Promise<InvoiceRow | undefined> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS}
       FROM invoices i JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
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

export interface InvoiceFilter {
  contractId?: string | undefined;
  status?: string | undefined;
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
       FROM invoices i JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
      WHERE i.company_id = $1
        AND ($2::text IS NULL OR i.contract_id = $2)
        AND ($3::text IS NULL OR i.status = $3)
        AND ($4::date IS NULL OR i.period_start >= $4)
        AND ($5::date IS NULL OR i.period_end <= $5)
        AND ($6::bigint IS NULL OR i.seq < $6)
      ORDER BY i.seq DESC
      LIMIT $7`,
    [
      filter.contractId ?? null,
      filter.status ?? null,
      filter.from ?? null,
      filter.to ?? null,
      afterSeq ?? null,
      limit + 1,
    ],
  );
  return rows;
}

/**
 * The currency, minimum and stored lines of every invoice with this status and period start, in pages of
 * `limit` after `afterSeq` (the dashboard's month to date sums their derived totals).
 */
export async function listInvoiceStates(
  db: CompanyScope,
  status: string,
  periodStart: string,
  afterSeq: string | null,
  limit: number,
): Promise<Pick<InvoiceRow, "seq" | "currency" | "minimum_amount" | "lines">[]> {
  const { rows } = await db.query<Pick<InvoiceRow, "seq" | "currency" | "minimum_amount" | "lines">>(
    `SELECT i.seq, i.currency, i.minimum_amount::text AS minimum_amount, ${LINES_JSON} AS lines
       FROM invoices i
      WHERE i.company_id = $1 AND i.status = $2 AND i.period_start = $3 AND ($4::bigint IS NULL OR i.seq > $4)
      ORDER BY i.seq
      LIMIT $5`,
    [status, periodStart, afterSeq, limit],
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
       FROM invoices i
       JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
       LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id
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

/** The invoice of a contract's billing period, with its lines, if it has one. */
export async function findPeriodInvoice(
  db: CompanyScope,
  contractId: string,
  periodStart: string,
): Promise<InvoiceRow | undefined> {
  const { rows } = await db.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS}
       FROM invoices i JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
      WHERE i.company_id = $1 AND i.contract_id = $2 AND i.period_start = $3`,
    [contractId, periodStart],
  );
  return rows[0];
}
