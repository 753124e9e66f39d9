import type { CompanyScope } from "../../../db/company-scope.js";

// Payments and credit notes of issued invoices; each written under the invoice's row lock
// (lockInvoiceForChange), in the transaction that changes the invoice's sums.

export interface PaymentRow {
  id: string;
  invoice_number: string;
  amount: string;
  paid_on: string;
  method: string;
  reference: string | null;
  created_at: Date;
}

/**
 * An invoice's payments as JSON, oldest first, decimals as text: read with the invoice in one statement
 * (INVOICE_OWN_COLUMNS), so that every answer that shows an invoice shows its payments.
 */
export const PAYMENTS_JSON = `COALESCE((
  SELECT json_agg(json_build_object('id', p.id, 'invoice_number', p.invoice_number, 'amount', p.amount::text,
    'paid_on', p.paid_on, 'method', p.method, 'reference', p.reference, 'created_at', p.created_at) ORDER BY p.seq)
  FROM invoice_payments p WHERE p.company_id = i.company_id AND p.invoice_number = i.number), '[]'::json)`;

/** Records a payment on a locked invoice and adds it to the invoice's amount_paid. */
export async function insertPayment(tx: CompanyScope, payment: PaymentRow): Promise<void> {
  await tx.query(
    `INSERT INTO invoice_payments (company_id, id, invoice_number, amount, paid_on, method, reference, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      payment.id,
      payment.invoice_number,
      payment.amount,
      payment.paid_on,
      payment.method,
      payment.reference,
      payment.created_at,
    ],
  );
  await tx.query(
    "UPDATE invoices SET amount_paid = amount_paid + $3, updated_at = $4 WHERE company_id = $1 AND number = $2",
    [payment.invoice_number, payment.amount, payment.created_at],
  );
}

export interface CreditNoteRow {
  number: string;
  seq: number;
  invoice_number: string;
  customer_id: string;
  currency: string;
  amount: string;
  applied_to_due: string;
  to_balance: string;
  reason: string;
  lines: { line: number | null; description: string; amount: string }[];
  issued_date: string;
  created_at: Date;
}

const CREDIT_NOTE_COLUMNS = `number, seq, invoice_number, customer_id, currency, amount::text AS amount,
  applied_to_due::text AS applied_to_due, to_balance::text AS to_balance, reason, lines, issued_date, created_at`;

/** Records a credit note on a locked invoice and adds it to the invoice's amount_credited. */
export async function insertCreditNote(tx: CompanyScope, note: CreditNoteRow): Promise<void> {
  await tx.query(
    `INSERT INTO credit_notes (company_id, number, seq, invoice_number, customer_id, currency, amount, applied_to_due,
                               to_balance, reason, lines, issued_date, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      note.number,
      note.seq,
      note.invoice_number,
      note.customer_id,
      note.currency,
      note.amount,
      note.applied_to_due,
      note.to_balance,
      note.reason,
      JSON.stringify(note.lines),
      note.issued_date,
      note.created_at,
    ],
  );
  await tx.query(
    "UPDATE invoices SET amount_credited = amount_credited + $3, updated_at = $4 WHERE company_id = $1 AND number = $2",
    [note.invoice_number, note.amount, note.created_at],
  );
}

/** An invoice's credit notes, oldest first. */
export async function listCreditNotesOf(db: CompanyScope, invoiceNumber: string): Promise<CreditNoteRow[]> {
  const { rows } = await db.query<CreditNoteRow>(
    `SELECT ${CREDIT_NOTE_COLUMNS} FROM credit_notes WHERE company_id = $1 AND invoice_number = $2 ORDER BY seq`,
    [invoiceNumber],
  );
  return rows;
}

export async function findCreditNote(db: CompanyScope, number: string): Promise<CreditNoteRow | undefined> {
  const { rows } = await db.query<CreditNoteRow>(
    `SELECT ${CREDIT_NOTE_COLUMNS} FROM credit_notes WHERE company_id = $1 AND number = $2`,
    [number],
  );
  return rows[0];
}

/** The customer an invoice bills (its contract's). */
export async function findInvoiceCustomer(db: CompanyScope, contractId: string): Promise<string> {
  const { rows } = await db.query<{ customer_id: string }>(
    "SELECT customer_id FROM contracts WHERE company_id = $1 AND id = $2",
    [contractId],
  );
  return rows[0]!.customer_id;
}
