import type { CompanyScope } from "../../db/company-scope.js";
import type { Queryable } from "../../db/database.js";

export interface GrantRow {
  company_id: string;
  id: string;
  contract_id: string;
  name: string;
  type: string;
  amount: string;
  balance: string;
  currency: string;
  starts_on: string;
  expires_on: string | null;
  metrics: string[] | null;
  priority: number;
  status: string;
  invoice_number: string | null;
  created_at: Date;
  seq: string;
}

export interface LedgerRow {
  grant_id: string;
  kind: string;
  amount: string;
  invoice_number: string | null;
  created_at: Date;
}

const GRANT_COLUMNS = `company_id, id, contract_id, name, type, amount::text, balance::text, currency, starts_on, expires_on,
  metrics, priority, status, invoice_number, created_at, seq::text`;

export async function insertGrant(tx: CompanyScope, g: Omit<GrantRow, "company_id" | "seq">): Promise<void> {
  await tx.query(
    `INSERT INTO credit_grants (company_id, id, contract_id, name, type, amount, balance, currency, starts_on, expires_on,
                                metrics, priority, status, invoice_number, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      g.id,
      g.contract_id,
      g.name,
      g.type,
      g.amount,
      g.balance,
      g.currency,
      g.starts_on,
      g.expires_on,
      g.metrics,
      g.priority,
      g.status,
      g.invoice_number,
      g.created_at,
    ],
  );
}

/** Ledger entries, in this order (one statement). */
export async function insertLedgerEntries(
  tx: CompanyScope,
  entries: readonly { grantId: string; kind: string; amount: string; invoiceNumber: string | null }[],
  at: Date,
): Promise<void> {
  if (entries.length === 0) return;
  await tx.query(
    `INSERT INTO credit_ledger (company_id, grant_id, kind, amount, invoice_number, created_at)
     SELECT $1, e.grant_id, e.kind, e.amount, e.invoice_number, $6
       FROM unnest($2::text[], $3::text[], $4::numeric[], $5::text[]) WITH ORDINALITY AS e(grant_id, kind, amount, invoice_number, n)
      ORDER BY e.n`,
    [
      entries.map((e) => e.grantId),
      entries.map((e) => e.kind),
      entries.map((e) => e.amount),
      entries.map((e) => e.invoiceNumber),
      at,
    ],
  );
}

/** Stores new balances (one statement). */
export async function updateBalances(
  tx: CompanyScope,
  balances: readonly { id: string; balance: string }[],
): Promise<void> {
  if (balances.length === 0) return;
  await tx.query(
    `UPDATE credit_grants g SET balance = v.balance
       FROM unnest($2::text[], $3::numeric[]) AS v(id, balance)
      WHERE g.company_id = $1 AND g.id = v.id`,
    [balances.map((b) => b.id), balances.map((b) => b.balance)],
  );
}

/** The grants of these contracts, locked until the transaction ends (in one order: no deadlocks). */
export async function lockGrantsOfContracts(tx: CompanyScope, contractIds: readonly string[]): Promise<GrantRow[]> {
  const { rows } = await tx.query<GrantRow>(
    `SELECT ${GRANT_COLUMNS} FROM credit_grants
      WHERE company_id = $1 AND contract_id = ANY($2::text[])
      ORDER BY id
      FOR UPDATE`,
    [contractIds],
  );
  return rows;
}

/** The grants of a contract, oldest first (no lock). */
export async function listGrants(db: CompanyScope, contractId: string): Promise<GrantRow[]> {
  const { rows } = await db.query<GrantRow>(
    `SELECT ${GRANT_COLUMNS} FROM credit_grants WHERE company_id = $1 AND contract_id = $2 ORDER BY seq`,
    [contractId],
  );
  return rows;
}

export async function findGrant(db: CompanyScope, contractId: string, id: string): Promise<GrantRow | undefined> {
  const { rows } = await db.query<GrantRow>(
    `SELECT ${GRANT_COLUMNS} FROM credit_grants WHERE company_id = $1 AND contract_id = $2 AND id = $3`,
    [contractId, id],
  );
  return rows[0];
}

export async function listLedger(db: CompanyScope, grantId: string): Promise<LedgerRow[]> {
  const { rows } = await db.query<LedgerRow>(
    `SELECT grant_id, kind, amount::text, invoice_number, created_at FROM credit_ledger
      WHERE company_id = $1 AND grant_id = $2 ORDER BY seq`,
    [grantId],
  );
  return rows;
}

/** Active grants of every company whose last day has passed (the worker's round: each row names its company). */
export async function findExpiredGrants(
  db: Queryable,
  today: string,
  limit: number,
): Promise<{ company_id: string; id: string; contract_id: string }[]> {
  const { rows } = await db.query<{ company_id: string; id: string; contract_id: string }>(
    `SELECT company_id, id, contract_id FROM credit_grants
      WHERE status = 'active' AND expires_on < $1
      ORDER BY expires_on, company_id, id
      LIMIT $2`,
    [today, limit],
  );
  return rows;
}

/** Marks a locked grant expired with no balance. */
export async function expireGrant(tx: CompanyScope, id: string): Promise<void> {
  await tx.query("UPDATE credit_grants SET status = 'expired', balance = 0 WHERE company_id = $1 AND id = $2", [id]);
}

/**
 * Moves what a voided invoice carried of credits (the ledger entries burned on it, a prepaid grant billed on it)
 * to the draft that reissues it (invoices/lifecycle/void-invoice.ts).
 */
export async function moveCreditsToInvoice(tx: CompanyScope, from: string, to: string): Promise<void> {
  await tx.query("UPDATE credit_ledger SET invoice_number = $3 WHERE company_id = $1 AND invoice_number = $2", [
    from,
    to,
  ]);
  await tx.query("UPDATE credit_grants SET invoice_number = $3 WHERE company_id = $1 AND invoice_number = $2", [
    from,
    to,
  ]);
}
