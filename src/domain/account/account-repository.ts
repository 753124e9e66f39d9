import type { CompanyScope } from "../../db/company-scope.js";
import type { Queryable } from "../../db/database.js";
import type { PaperSize } from "./account-schemas.js";

export interface AccountRow {
  id: string;
  name: string;
  legal_name: string | null;
  address: string | null;
  tax_id: string | null;
  payment_instructions: string | null;
  invoice_footer: string | null;
  paper_size: PaperSize;
  locale: string;
  payment_terms_days: number;
  reminder_days: number[];
  updated_at: Date | null;
  logo_type: "image/png" | "image/jpeg" | null;
  logo_size: number | null;
  logo_sha256: string | null;
}

const SELECT_ACCOUNT = `SELECT co.id, co.name, co.legal_name, co.address, co.tax_id, co.payment_instructions, co.invoice_footer,
        co.paper_size, co.locale, co.payment_terms_days, co.reminder_days, co.updated_at,
        l.content_type AS logo_type, octet_length(l.bytes) AS logo_size, l.sha256 AS logo_sha256
   FROM companies co LEFT JOIN company_logos l ON l.company_id = co.id
  WHERE co.id = $1`;

export async function findAccount(db: CompanyScope): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>(SELECT_ACCOUNT, []);
  return rows[0];
}

/** The profile columns a PATCH sets. */
export type AccountChanges = Partial<
  Pick<
    AccountRow,
    | "legal_name"
    | "address"
    | "tax_id"
    | "payment_instructions"
    | "invoice_footer"
    | "paper_size"
    | "locale"
    | "payment_terms_days"
    | "reminder_days"
  >
>;

export async function updateAccount(tx: CompanyScope, changes: AccountChanges, now: Date): Promise<void> {
  const columns = Object.keys(changes) as (keyof AccountChanges)[];
  const sets = [...columns.map((column, i) => `${column} = $${i + 2}`), `updated_at = $${columns.length + 2}`];
  await tx.query(`UPDATE companies SET ${sets.join(", ")} WHERE id = $1`, [
    ...columns.map((column) => changes[column]),
    now,
  ]);
}

export async function upsertLogo(
  tx: CompanyScope,
  logo: { contentType: string; bytes: Uint8Array; sha256: string },
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO company_logos (company_id, content_type, bytes, sha256, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (company_id) DO UPDATE SET content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes,
       sha256 = EXCLUDED.sha256, updated_at = EXCLUDED.updated_at`,
    [logo.contentType, logo.bytes, logo.sha256, now],
  );
  await tx.query("UPDATE companies SET updated_at = $2 WHERE id = $1", [now]);
}

/**
 * Replaces the logo whose SHA-256 is `sha256` by the same logo made small, unless another logo took its place
 * meanwhile; the account's `updated_at` stays (its owner changed nothing).
 */
export async function replaceLogoBytes(
  db: CompanyScope,
  sha256: string,
  logo: { contentType: string; bytes: Uint8Array; sha256: string },
): Promise<void> {
  await db.query(
    "UPDATE company_logos SET content_type = $3, bytes = $4, sha256 = $5 WHERE company_id = $1 AND sha256 = $2",
    [sha256, logo.contentType, logo.bytes, logo.sha256],
  );
}

export async function deleteLogo(tx: CompanyScope, now: Date): Promise<void> {
  await tx.query("DELETE FROM company_logos WHERE company_id = $1", []);
  await tx.query("UPDATE companies SET updated_at = $2 WHERE id = $1", [now]);
}

export async function findLogo(
  db: CompanyScope,
): Promise<{ content_type: "image/png" | "image/jpeg"; bytes: Uint8Array } | undefined> {
  const { rows } = await db.query<{ content_type: "image/png" | "image/jpeg"; bytes: Uint8Array }>(
    "SELECT content_type, bytes FROM company_logos WHERE company_id = $1",
    [],
  );
  return rows[0];
}

/** A new company: its id, name and creation time; the rest of its profile takes the columns' defaults. */
export async function insertCompany(
  db: Queryable,
  company: { id: string; name: string; created_at: Date },
): Promise<void> {
  await db.query("INSERT INTO companies (id, name, created_at) VALUES ($1, $2, $3)", [
    company.id,
    company.name,
    company.created_at,
  ]);
}
