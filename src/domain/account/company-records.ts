// The company's own row: `companies` is this module's table (its profile, settings and logo are written here), so
// the access module, which creates companies (sign-up, bootstrap, the admin API), asks here to insert one.
import type { Queryable } from "../../db/database.js";
import { insertCompany } from "./account-repository.js";

/** Inserts a new company (a transaction's or the database's connection). */
export const createCompanyRecord = (db: Queryable, company: { id: string; name: string; created_at: Date }) =>
  insertCompany(db, company);
