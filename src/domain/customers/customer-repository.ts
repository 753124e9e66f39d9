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
  payment_terms_days: number | null;
  tax_id: string | null;
  invoice_memo: string | null;
  invoice_delivery: "email" | "none";
  created_at: Date;
  updated_at: Date | null;
  /** What credit notes left on the customer's balance, per currency (read only; none on a new row). */
  credit_balances?: { currency: string; amount: string }[];
}

const COLUMNS =
  "company_id, id, name, external_id, email, domain, country, address, registration_number, payment_terms_days, tax_id, invoice_memo, invoice_delivery, created_at, updated_at";

/**
 * The columns a read answers: the row's, and its credit balances, what credit notes on its paid invoices left
 * it (credit_notes.to_balance), summed per currency, decimals as text.
 */
const READ_COLUMNS = `${COLUMNS}, COALESCE((
  SELECT json_agg(json_build_object('currency', b.currency, 'amount', b.amount::text) ORDER BY b.currency)
    FROM (SELECT n.currency, sum(n.to_balance) AS amount FROM credit_notes n
           WHERE n.company_id = customers.company_id AND n.customer_id = customers.id
           GROUP BY n.currency HAVING sum(n.to_balance) > 0) AS b), '[]'::json) AS credit_balances`;

/** Inserts unless the company already has this external_id; returns the row only when it was inserted. */
export async function insertCustomerUnlessExternalIdTaken(
  db: CompanyScope,
  c: CustomerRow,
): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `INSERT INTO customers (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
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
      c.payment_terms_days,
      c.tax_id,
      c.invoice_memo,
      c.invoice_delivery,
      c.created_at,
      c.updated_at,
    ],
  );
  return rows[0];
}

export async function findCustomerById(db: CompanyScope, id: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${READ_COLUMNS} FROM customers WHERE company_id = $1 AND id = $2`,
    [id],
  );
  return rows[0];
}

export async function findCustomerByExternalId(db: CompanyScope, externalId: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${READ_COLUMNS} FROM customers WHERE company_id = $1 AND external_id = $2`,
    [externalId],
  );
  return rows[0];
}

/** The columns a PATCH may set, as stored. */
export type CustomerChanges = Partial<
  Pick<
    CustomerRow,
    | "name"
    | "external_id"
    | "email"
    | "domain"
    | "country"
    | "address"
    | "registration_number"
    | "payment_terms_days"
    | "tax_id"
    | "invoice_memo"
    | "invoice_delivery"
  >
>;

/** Locks a customer for a change (FOR UPDATE). */
export async function lockCustomer(tx: CompanyScope, id: string): Promise<CustomerRow | undefined> {
  const { rows } = await tx.query<CustomerRow>(
    `SELECT ${READ_COLUMNS} FROM customers WHERE company_id = $1 AND id = $2 FOR UPDATE`,
    [id],
  );
  return rows[0];
}

/**
 * Writes the changed columns of a locked customer. Answers undefined when the new external_id is taken by
 * another customer of the company (the unique index decides, under concurrency too).
 */
export async function updateCustomer(
  tx: CompanyScope,
  id: string,
  changes: CustomerChanges,
  now: Date,
): Promise<CustomerRow | undefined> {
  const columns = Object.keys(changes) as (keyof CustomerChanges)[];
  const sets = columns.map((column, i) => `${column} = $${i + 3}`);
  const { rows } = await tx
    .query<CustomerRow>(
      `UPDATE customers SET ${[...sets, `updated_at = $${columns.length + 3}`].join(", ")}
        WHERE company_id = $1 AND id = $2
        RETURNING ${READ_COLUMNS}`,
      [id, ...columns.map((column) => changes[column]), now],
    )
    .catch((error: unknown) => {
      // The unique index on (company_id, external_id): the caller throws, so the transaction is rolled back.
      if ((error as { code?: string }).code === "23505") return { rows: [] as CustomerRow[] };
      throw error;
    });
  return rows[0];
}

/**
 * Newest first; `after` is the last customer of the previous page. Fetches limit + 1 rows. `search` matches
 * a name containing it (case-insensitive) or an external id equal to it.
 */
export async function listCustomers(
  db: CompanyScope,
  filter: { externalId?: string | undefined; search?: string | undefined },
  after: { created_at: Date; id: string } | undefined,
  limit: number,
): Promise<CustomerRow[]> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${READ_COLUMNS} FROM customers
      WHERE company_id = $1
        AND ($2::text IS NULL OR external_id = $2)
        AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4::uuid))
        AND ($6::text IS NULL OR external_id = $6
             OR strpos(lower(name), lower($6)) > 0)
      ORDER BY created_at DESC, id DESC
      LIMIT $5`,
    [filter.externalId ?? null, after?.created_at ?? null, after?.id ?? null, limit + 1, filter.search ?? null],
  );
  return rows;
}
