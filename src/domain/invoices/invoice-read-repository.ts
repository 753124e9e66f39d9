import type { CompanyScope } from "../../db/company-scope.js";
import { PAYMENTS_JSON } from "./collection-repository.js";
import { type InvoiceRow, LINES_JSON } from "./invoice-repository.js";

// Invoices as they are read: one with its lines, a page of them, the month's drafts, one with the parties its
// PDF names. Each reads the lines in the same statement (LINES_JSON).

/** An invoice's own columns (`i`), without its contract's metrics or its lines. */
export const INVOICE_OWN_COLUMNS = `i.company_id, i.number, i.seq, i.contract_id, i.status, i.currency, i.period_start, i.period_end,
  i.minimum_amount::text AS minimum_amount, i.projected_at, i.billed, i.issued_at, i.issued_date, i.due_date, i.paid_date, i.created_at,
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
export type InvoiceState = Pick<InvoiceRow, "seq" | "currency" | "minimum_amount" | "lines" | "billed">;

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
    `SELECT i.seq, i.currency, i.minimum_amount::text AS minimum_amount, i.billed,
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

/** An invoice with the parties its PDF names: the seller (the company) and the customer billed. */
export interface InvoiceDocumentRow extends InvoiceRow {
  seller_name: string | null;
  customer_address: string | null;
  customer_email: string | null;
}

export async function findInvoiceDocument(db: CompanyScope, number: string): Promise<InvoiceDocumentRow | undefined> {
  const { rows } = await db.query<InvoiceDocumentRow>(
    `SELECT ${INVOICE_COLUMNS}, co.name AS seller_name, cu.address AS customer_address, cu.email AS customer_email
       FROM ${INVOICE_JOINS}
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
       FROM ${INVOICE_JOINS}
      WHERE i.company_id = $1 AND i.contract_id = $2 AND i.period_start = $3 AND i.status <> 'void'`,
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
