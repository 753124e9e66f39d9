import type { CompanyScope } from "../../db/company-scope.js";

export interface CustomerRow {
  company_id: string;
  id: string;
  name: string;
  external_id: string | null;
  email: string | null;
  domain: string | null;
  country: string | null;
  address: string | null;
  registration_number: string | null;
  payment_terms: string | null;
  created_at: Date;
}

const COLUMNS =
  "company_id, id, name, external_id, email, domain, country, address, registration_number, payment_terms, created_at";

/** Inserts unless the company already has this external_id; returns the row only when it was inserted. */
export async function insertCustomerUnlessExternalIdTaken(
  db: CompanyScope,
  c: CustomerRow,
): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `INSERT INTO customers (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (company_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      c.id,
      c.name,
      c.external_id,
      c.email,
      c.domain,
      c.country,
      c.address,
      c.registration_number,
      c.payment_terms,
      c.created_at,
    ],
  );
  return rows[0];
}

export async function findCustomerById(db: CompanyScope, id: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE company_id = $1 AND id = $2`, [
    id,
  ]);
  return rows[0];
}

export async function findCustomerByExternalId(db: CompanyScope, externalId: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${COLUMNS} FROM customers WHERE company_id = $1 AND external_id = $2`,
    [externalId],
  );
  return rows[0];
}

/** Newest first; `after` is the last customer of the previous page. Fetches limit + 1 rows. */
export async function listCustomers(
  db: CompanyScope,
  filter: { externalId?: string | undefined },
  after: { created_at: Date; id: string } | undefined,
  limit: number,
): Promise<CustomerRow[]> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${COLUMNS} FROM customers
      WHERE company_id = $1
        AND ($2::text IS NULL OR external_id = $2)
        AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4::uuid))
      ORDER BY created_at DESC, id DESC
      LIMIT $5`,
    [filter.externalId ?? null, after?.created_at ?? null, after?.id ?? null, limit + 1],
  );
  return rows;
}
