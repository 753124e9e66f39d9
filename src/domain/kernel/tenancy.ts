import { type CompanyScope, forCompany } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import type { Actor } from "./actor.js";

/** One company's data: read outside a transaction (`data`), or in one transaction whose statements are all its. */
export interface CompanyData {
  companyId: string;
  /** The company's data, outside a transaction. */
  readonly data: CompanyScope;
  /** Runs `work` in one transaction whose every statement is the company's. */
  transaction<T>(work: (tx: CompanyScope) => Promise<T>): Promise<T>;
}

/**
 * One request's company, chosen once (docs/architecture.md, "Tenancy"): who calls (company, scopes, credential)
 * and the company's data as that caller may see it. It is made where the caller is recognised (an API key, an
 * OAuth token, a dashboard session) and handed to the services, which take it in place of an actor and a
 * database and never pick a company themselves.
 */
export interface Tenancy extends Actor, CompanyData {}

/**
 * The one place a company id becomes a scope: for a request (`openTenancy`), and for the plumbing that serves a
 * company without one (the group commit of its usage, the invoice worker's turn at it).
 */
export function companyData(db: Database, companyId: string): CompanyData {
  return {
    companyId,
    data: forCompany(db, companyId),
    transaction: (work) => db.transaction((tx) => work(forCompany(tx, companyId))),
  };
}

/** A request's tenancy, from the caller its credential names. */
export function openTenancy(db: Database, actor: Actor): Tenancy {
  return { ...companyData(db, actor.companyId), scopes: actor.scopes, credentialId: actor.credentialId };
}
