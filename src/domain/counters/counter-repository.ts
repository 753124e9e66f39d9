import type { CompanyScope } from "../../db/company-scope.js";

/** Adds `count` to a per-company counter (created at `count`) and returns its new value; locks the row until commit. */
export async function addToCounter(tx: CompanyScope, name: string, count: number): Promise<number> {
  const { rows } = await tx.query<{ value: string }>(
    `INSERT INTO company_counters (company_id, name, value) VALUES ($1, $2, $3)
     ON CONFLICT (company_id, name) DO UPDATE SET value = company_counters.value + EXCLUDED.value
     RETURNING value`,
    [name, count],
  );
  return Number(rows[0]!.value);
}
