import type { CompanyScope } from "../../db/company-scope.js";
import type { Queryable } from "../../db/database.js";
import type { PricingRule } from "./pricing-rule.js";
import type { ProgramSegment } from "./program-timeline.js";

export interface ContractRow {
  company_id: string;
  id: string;
  contract_number: string;
  customer_id: string;
  customer_name: string;
  status: string;
  start_date: string;
  end_date: string | null;
  currency: string;
  billing_cadence: string;
  sample: boolean;
  current_version: number;
  metrics: string[];
  pdf_token: string;
  /** The uploaded agreement, or null when the agreement is the generated one. */
  document_id: string | null;
  /** Its own payment terms over its customer's; null: the customer's (billing_payment_terms_days). */
  payment_terms_days: number | null;
  created_at: Date;
}

export interface ProgramVersionRow {
  company_id: string;
  contract_id: string;
  version: number;
  /** The date shown: a dated change's date, or the day an undated change was made. */
  effective_date: string;
  /** The first day the version prices events of (program-timeline.ts). */
  applies_from: string;
  rules: PricingRule[];
  created_at: Date;
}

const CONTRACT_COLUMNS = `company_id, id, contract_number, customer_id, customer_name, status, start_date, end_date, currency,
  billing_cadence, sample, current_version, metrics, pdf_token, document_id, created_at, payment_terms_days`;

/** Inserts unless the id is taken; returns whether it was inserted. */
export async function insertContractUnlessIdTaken(tx: CompanyScope, c: ContractRow): Promise<boolean> {
  const result = await tx.query(
    `INSERT INTO contracts (${CONTRACT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     ON CONFLICT (company_id, id) DO NOTHING`,
    [
      c.id,
      c.contract_number,
      c.customer_id,
      c.customer_name,
      c.status,
      c.start_date,
      c.end_date,
      c.currency,
      c.billing_cadence,
      c.sample,
      c.current_version,
      c.metrics,
      c.pdf_token,
      c.document_id,
      c.created_at,
      c.payment_terms_days,
    ],
  );
  return result.rowCount === 1;
}

export async function findContract(db: CompanyScope, id: string): Promise<ContractRow | undefined> {
  const { rows } = await db.query<ContractRow>(
    `SELECT ${CONTRACT_COLUMNS} FROM contracts WHERE company_id = $1 AND id = $2`,
    [id],
  );
  return rows[0];
}

export async function lockContract(tx: CompanyScope, id: string): Promise<ContractRow | undefined> {
  const { rows } = await tx.query<ContractRow>(
    `SELECT ${CONTRACT_COLUMNS} FROM contracts WHERE company_id = $1 AND id = $2 FOR UPDATE`,
    [id],
  );
  return rows[0];
}

export async function findContractByPdfToken(db: Queryable, token: string): Promise<ContractRow | undefined> {
  const { rows } = await db.query<ContractRow>(`SELECT ${CONTRACT_COLUMNS} FROM contracts WHERE pdf_token = $1`, [
    token,
  ]);
  return rows[0];
}

/** All contracts of a company, newest first (the list is not paginated: docs/api.md, "Conventions"). */
export async function listContracts(db: CompanyScope, status: string | undefined): Promise<ContractRow[]> {
  const { rows } = await db.query<ContractRow>(
    `SELECT ${CONTRACT_COLUMNS} FROM contracts
      WHERE company_id = $1 AND ($2::text IS NULL OR status = $2)
      ORDER BY seq DESC`,
    [status ?? null],
  );
  return rows;
}

export async function setCurrentVersion(
  tx: CompanyScope,
  id: string,
  version: number,
  metrics: string[],
): Promise<void> {
  await tx.query("UPDATE contracts SET current_version = $3, metrics = $4 WHERE company_id = $1 AND id = $2", [
    id,
    version,
    metrics,
  ]);
}

export async function insertProgramVersion(tx: CompanyScope, v: ProgramVersionRow): Promise<void> {
  await tx.query(
    `INSERT INTO pricing_program_versions (company_id, contract_id, version, effective_date, applies_from, rules, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [v.contract_id, v.version, v.effective_date, v.applies_from, JSON.stringify(v.rules), v.created_at],
  );
}

/** What rating needs of each contract named in a batch, with its program over time, in one query. */
export interface RatingContextRow {
  id: string;
  status: string;
  start_date: string;
  end_date: string | null;
  currency: string;
  /** The program's newest version: what the write checks the contract is still at. */
  current_version: number;
  /** The program over time (program-timeline.ts): an event is priced by the segment in force on its day. */
  programs: ProgramSegment[];
  /** It has had a credit grant: its usage is rated on the locking path, where credits burn. */
  has_credits: boolean;
  /** Days of payment terms its invoices are dated with (billing_payment_terms_days). */
  payment_terms_days: number;
}

export async function findRatingContexts(db: CompanyScope, ids: readonly string[]): Promise<RatingContextRow[]> {
  const { rows } = await db.query<RatingContextRow>(
    `SELECT c.id, c.status, c.start_date, c.end_date, c.currency, c.current_version,
            billing_program_segments(c.company_id, c.id) AS programs, c.has_credits,
            billing_payment_terms_days(c.company_id, c.id) AS payment_terms_days
       FROM contracts c
      WHERE c.company_id = $1 AND c.id = ANY($2::text[])`,
    [ids],
  );
  return rows;
}

/** Marks a contract as one with credits (its usage is rated on the locking path from then on). */
export async function setHasCredits(tx: CompanyScope, id: string): Promise<void> {
  await tx.query("UPDATE contracts SET has_credits = true WHERE company_id = $1 AND id = $2 AND NOT has_credits", [id]);
}

/** A contract's program over time (program-timeline.ts); empty for an unknown contract. */
export async function findProgramSegments(db: CompanyScope, contractId: string): Promise<ProgramSegment[]> {
  const { rows } = await db.query<{ programs: ProgramSegment[] | null }>(
    "SELECT billing_program_segments($1, $2) AS programs",
    [contractId],
  );
  return rows[0]?.programs ?? [];
}

/** Every program version of a contract, oldest first (the dashboard's version history). */
export async function listProgramVersions(db: CompanyScope, contractId: string): Promise<ProgramVersionRow[]> {
  const { rows } = await db.query<ProgramVersionRow>(
    `SELECT company_id, contract_id, version, effective_date, applies_from, rules, created_at FROM pricing_program_versions
      WHERE company_id = $1 AND contract_id = $2
      ORDER BY version`,
    [contractId],
  );
  return rows;
}

/** An uploaded agreement: the PDF as sent. */
export interface ContractDocumentRow {
  id: string;
  filename: string;
  content: Buffer;
  sha256: string;
  reading: unknown;
  created_at: Date;
  /** The contract it belongs to; null while a dashboard upload waits for review. */
  contract_id: string | null;
}

export async function insertDocument(tx: CompanyScope, d: Omit<ContractDocumentRow, "contract_id">): Promise<void> {
  await tx.query(
    `INSERT INTO contract_documents (company_id, id, filename, content, sha256, reading, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [d.id, d.filename, d.content, d.sha256, d.reading === null ? null : JSON.stringify(d.reading), d.created_at],
  );
}

const DOCUMENT_SELECT = `SELECT d.id, d.filename, d.content, d.sha256, d.reading, d.created_at, c.id AS contract_id
   FROM contract_documents d
   LEFT JOIN contracts c ON c.company_id = d.company_id AND c.document_id = d.id`;

const asBuffer = (row: ContractDocumentRow | undefined): ContractDocumentRow | undefined =>
  row && { ...row, content: Buffer.isBuffer(row.content) ? row.content : Buffer.from(row.content as Uint8Array) };

/** A document by id, with the contract it belongs to; `lock` holds it until commit (one save per upload). */
export async function findDocument(
  db: CompanyScope,
  id: string,
  lock = false,
): Promise<ContractDocumentRow | undefined> {
  const { rows } = await db.query<ContractDocumentRow>(
    `${DOCUMENT_SELECT} WHERE d.company_id = $1 AND d.id = $2${lock ? " FOR UPDATE OF d" : ""}`,
    [id],
  );
  return asBuffer(rows[0]);
}

/** The contract a document belongs to, as committed now (a fresh statement: see saveStaged). */
export async function findContractIdOfDocument(db: CompanyScope, documentId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM contracts WHERE company_id = $1 AND document_id = $2",
    [documentId],
  );
  return rows[0]?.id;
}

/**
 * Uploads no contract took that are older than `before` (a review abandoned), or beyond the company's `keep`
 * newest: what a company's waiting uploads can hold is bounded.
 */
export async function deleteStaleDocuments(tx: CompanyScope, before: Date, keep: number): Promise<void> {
  await tx.query(
    `WITH waiting AS (
       SELECT d.id, d.created_at, row_number() OVER (ORDER BY d.seq DESC) AS newest
         FROM contract_documents d
        WHERE d.company_id = $1
          AND NOT EXISTS (SELECT 1 FROM contracts c WHERE c.company_id = d.company_id AND c.document_id = d.id)
     )
     DELETE FROM contract_documents d
      USING waiting w
      WHERE d.company_id = $1 AND d.id = w.id AND (w.created_at < $2 OR w.newest > $3)`,
    [before, keep],
  );
}
