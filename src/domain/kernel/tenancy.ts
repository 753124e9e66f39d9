import { type CompanyScope, forCompany } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import type { Actor } from "./actor.js";

/**
 * One request's company, chosen once (docs/architecture.md, "Tenancy"): who calls (company, scopes, credential)
 * and the company's data as that caller may see it. It is made where the caller is recognised (an API key, an
 * OAuth token, a dashboard session, the worker's turn at one company) and handed to the services, which take it
 * in place of an actor and a database and never pick a company themselves.
 */
export interface Tenancy extends Actor {
  /** The company's data, outside a transaction. */
  readonly data: CompanyScope;
  /** Runs `work` in one transaction whose every statement is the company's. */
  transaction<T>(work: (tx: CompanyScope) => Promise<T>): Promise<T>;
}

/** The one place a request's company becomes a scope. */
export function openTenancy(db: Database, actor: Actor): Tenancy {
  return {
    companyId: actor.companyId,
    scopes: actor.scopes,
    credentialId: actor.credentialId,
    data: forCompany(db, actor.companyId),
    transaction: (work) => db.transaction((tx) => work(forCompany(tx, actor.companyId))),
  };
}
