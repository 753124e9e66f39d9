import type { CompanyScope } from "../../../db/company-scope.js";
import { sqlStatusesThat } from "../invoice-states.js";
import type { ProgramSegment } from "../../contracts/program-timeline.js";
import type { FrozenBill } from "../invoice-figures.js";
import { INVOICE_CUSTOMER_COLUMNS, INVOICE_OWN_COLUMNS } from "../invoice-read-repository.js";
import type { InvoiceRow } from "../invoice-repository.js";

// The statements of an invoice's changes of status (finalize, pay, void), each under the invoice's row lock,
// and what projection and finalizing read of its contract.

/**
 * An invoice locked for a change of its status, with what the change and its answer need: the invoice's own
 * columns (read under the lock, so current), its contract's metrics, the current pricing rules and the
 * payment terms (what finalizing projects and dates it with). Not its lines: a statement that
 * waited for the lock reads other rows with the snapshot it started with, so a draft's lines are read after
 * it (`findLinesOfInvoices`).
 */
export interface InvoiceForChange extends Omit<InvoiceRow, "lines"> {
  /** The contract's program over time (null only were it missing): the invoice bills the version in force on its last day. */
  programs: ProgramSegment[] | null;
  payment_terms_days: number;
}

/** Locks one invoice by number (FOR UPDATE), for a change of its status: one statement, the one lock. */
export async function lockInvoiceForChange(db: CompanyScope, number: string): Promise<InvoiceForChange | undefined> {
  const { rows } = await db.query<InvoiceForChange>(
    `SELECT ${INVOICE_OWN_COLUMNS}, c.metrics, ${INVOICE_CUSTOMER_COLUMNS}, billing_program_segments(c.company_id, c.id) AS programs,
            billing_payment_terms_days(c.company_id, c.id) AS payment_terms_days
       FROM invoices i
       JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
       LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id
      WHERE i.company_id = $1 AND i.number = $2
      FOR UPDATE OF i`,
    [number],
  );
  return rows[0];
}

/** What projection bills a contract's draft with: its term, currency, program over time, payment terms. */
export interface ContractTerms {
  id: string;
  start_date: string;
  end_date: string | null;
  currency: string;
  programs: ProgramSegment[];
  payment_terms_days: number;
}

export async function findContractTerms(db: CompanyScope, contractId: string): Promise<ContractTerms | undefined> {
  const { rows } = await db.query<ContractTerms>(
    `SELECT c.id, c.start_date, c.end_date, c.currency, billing_program_segments(c.company_id, c.id) AS programs,
            billing_payment_terms_days(c.company_id, c.id) AS payment_terms_days
       FROM contracts c
      WHERE c.company_id = $1 AND c.id = $2`,
    [contractId],
  );
  return rows[0];
}

/** Issues a locked draft: its status, dates and the figures it is issued with, frozen from now on. */
export async function issueInvoice(
  db: CompanyScope,
  issue: { number: string; at: Date; issuedDate: string; dueDate: string; billed: FrozenBill },
): Promise<void> {
  await db.query(
    `UPDATE invoices
        SET status = 'issued', issued_at = $3, issued_date = $4, due_date = $5, billed = $6, updated_at = $3
      WHERE company_id = $1 AND number = $2 AND status IN (${sqlStatusesThat("finalize")})`,
    [issue.number, issue.at, issue.issuedDate, issue.dueDate, JSON.stringify(issue.billed)],
  );
}

/** Marks a locked, issued invoice paid. */
export async function payInvoice(db: CompanyScope, number: string, paidDate: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE invoices SET status = 'paid', paid_date = $3, paid_at = $4, updated_at = $4
      WHERE company_id = $1 AND number = $2 AND status IN (${sqlStatusesThat("pay")})`,
    [number, paidDate, at],
  );
}

/** Voids a locked, issued invoice. */
export async function voidInvoice(db: CompanyScope, number: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE invoices SET status = 'void', voided_at = $3, updated_at = $3
      WHERE company_id = $1 AND number = $2 AND status IN (${sqlStatusesThat("void")})`,
    [number, at],
  );
}

/**
 * Reissues a voided invoice: a new draft for the same contract and period (`reissue_of` naming the void one)
 * takes over its stored lines, so that the month can be billed again, nothing lost and nothing twice; the usage
 * events and the credit rows on them are moved by their own modules (void-invoice.ts asks them). The void
 * invoice keeps its figures as issued (`billed`). In the voiding transaction.
 */
export async function reissueInvoice(
  tx: CompanyScope,
  reissue: { from: string; number: string; seq: number; issuedDate: string; dueDate: string; at: Date },
): Promise<void> {
  await tx.query(
    `INSERT INTO invoices (company_id, number, seq, contract_id, status, currency, period_start, period_end,
                           minimum_amount, minimum_terms, projected_at, issued_date, due_date, created_at, updated_at, reissue_of)
     SELECT company_id, $3, $4, contract_id, 'draft', currency, period_start, period_end, minimum_amount,
            minimum_terms, projected_at, $5, $6, $7, $7, number
       FROM invoices WHERE company_id = $1 AND number = $2`,
    [reissue.from, reissue.number, reissue.seq, reissue.issuedDate, reissue.dueDate, reissue.at],
  );
  await tx.query("UPDATE invoice_lines SET invoice_number = $3 WHERE company_id = $1 AND invoice_number = $2", [
    reissue.from,
    reissue.number,
  ]);
}
