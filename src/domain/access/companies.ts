import type { Database, Queryable } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { isUuid, newId } from "../kernel/ids.js";
import { checkName } from "./access-checks.js";
import * as repo from "./access-repository.js";
import { createCompanyRecord } from "../account/company-records.js";

export interface Company {
  object: "company";
  id: string;
  name: string;
  created_at: string;
}

export const presentCompany = (row: repo.CompanyRow): Company => ({
  object: "company",
  id: row.id,
  name: row.name,
  created_at: row.created_at.toISOString(),
});

/** A company by id, or undefined (an id that is not a UUID names none): what other modules know of one. */
export async function findCompany(db: Queryable, id: string): Promise<Company | undefined> {
  const row = isUuid(id) ? await repo.findCompanyById(db, id) : undefined;
  return row && presentCompany(row);
}

export function createCompanies({ db, clock }: { db: Database; clock: Clock }) {
  return {
    async createCompany(name: string): Promise<Company> {
      const row = { id: newId(), name: checkName("name", name), created_at: clock.now() };
      await createCompanyRecord(db, row);
      return presentCompany(row);
    },
  };
}
