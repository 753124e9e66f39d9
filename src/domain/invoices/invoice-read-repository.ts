import type { CompanyScope } from "../../db/company-scope.js";
import { type InvoiceRow, LINES_JSON } from "./invoice-repository.js";

// Invoices as they are read: one with its lines, a page of them, the month's drafts, one with the parties its
// PDF names. Each reads the lines in the same statement (LINES_JSON).

/** An invoice's own columns (`i`), without its contract's metrics or its lines. */
export const INVOICE_OWN_COLUMNS = `i.company_id, i.number, i.seq, i.contract_id, i.status, i.currency, i.period_start, i.period_end,
  i.minimum_amount::text AS minimum_amount, i.projected_at, i.billed, i.issued_at, i.issued_date, i.due_date, i.paid_date, i.created_at,
  i.updated_at, i.hosted_url`;

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

/** An invoice with the parties its PDF names: the seller (the company) and the customer billed. */
export interface InvoiceDocumentRow extends InvoiceRow {
  seller_name: string | null;
  /** The customer's name, or the contract's copy of it when the customer is gone. */
  customer_name: string;
  customer_address: string | null;
  customer_email: string | null;
}

export async function findInvoiceDocument(db: CompanyScope, number: string): Promise<InvoiceDocumentRow | undefined> {
  const { rows } = await db.query<InvoiceDocumentRow>(
    `SELECT ${INVOICE_COLUMNS}, co.name AS seller_name, COALESCE(cu.name, c.customer_name) AS customer_name,
            cu.address AS customer_address, cu.email AS customer_email
       FROM invoices i
       JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
       LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id
       LEFT JOIN companies co ON co.id = i.company_id
      WHERE i.company_id = $1 AND i.number = $2`,
    [number],
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
