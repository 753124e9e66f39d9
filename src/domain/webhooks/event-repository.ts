import type { CompanyScope } from "../../db/company-scope.js";

export interface EventRow {
  company_id: string;
  id: string;
  type: string;
  body: string;
  created_at: Date;
}

export async function insertEvent(db: CompanyScope, event: EventRow): Promise<void> {
  await db.query("INSERT INTO events (company_id, id, type, body, created_at) VALUES ($1, $2, $3, $4, $5)", [
    event.id,
    event.type,
    event.body,
    event.created_at,
  ]);
}
