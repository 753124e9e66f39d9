import type { Queryable } from "../../db/database.js";

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
 * missing: every stored event must be on exactly one line of its invoice (issue: invariants).
 */
export async function findLineEventMismatches(db: Queryable, companyId: string | null): Promise<LineEventMismatch[]> {
  const { rows } = await db.query<LineEventMismatch>(
    `WITH e AS (
       SELECT company_id, invoice_number, line_key, sum(rated_amount) AS charge_total, sum(quantity) AS quantity
         FROM usage_events WHERE ($1::uuid IS NULL OR company_id = $1)
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

export interface InvoiceTotalsRow {
  company_id: string;
  number: string;
  currency: string;
  subtotal: string;
  tax: string;
  total: string;
  lines_amount: string;
}

export async function findInvoiceTotalMismatches(db: Queryable, companyId: string | null): Promise<InvoiceTotalsRow[]> {
  const { rows } = await db.query<InvoiceTotalsRow>(
    `SELECT i.company_id, i.number, i.currency, i.subtotal::text, i.tax::text, i.total::text,
            COALESCE(sum(l.amount), 0)::text AS lines_amount
       FROM invoices i
       LEFT JOIN invoice_lines l ON l.company_id = i.company_id AND l.invoice_number = i.number
      WHERE ($1::uuid IS NULL OR i.company_id = $1)
      GROUP BY i.company_id, i.number
     HAVING i.subtotal <> COALESCE(sum(l.amount), 0) OR i.total <> i.subtotal + i.tax
      LIMIT 1000`,
    [companyId],
  );
  return rows;
}

export interface LineAmountRow {
  company_id: string;
  invoice_number: string;
  line_key: string;
  currency: string;
  charge_total: string;
  amount: string;
}

/** Every line with its invoice's currency, for the rounding check (done in code: SQL round() is not half-even). */
export async function listLineAmounts(db: Queryable, companyId: string | null): Promise<LineAmountRow[]> {
  const { rows } = await db.query<LineAmountRow>(
    `SELECT l.company_id, l.invoice_number, l.line_key, i.currency, l.charge_total::text, l.amount::text
       FROM invoice_lines l JOIN invoices i ON i.company_id = l.company_id AND i.number = l.invoice_number
      WHERE ($1::uuid IS NULL OR l.company_id = $1)`,
    [companyId],
  );
  return rows;
}

export async function countUsageEvents(db: Queryable, companyId: string | null): Promise<{ count: number; ratedTotal: string }> {
  const { rows } = await db.query<{ count: string; rated_total: string }>(
    `SELECT count(*) AS count, COALESCE(sum(rated_amount), 0)::text AS rated_total FROM usage_events
      WHERE ($1::uuid IS NULL OR company_id = $1)`,
    [companyId],
  );
  return { count: Number(rows[0]!.count), ratedTotal: rows[0]!.rated_total };
}
