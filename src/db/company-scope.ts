import type { QueryResult, Queryable } from "./database.js";

/**
 * The one way to company-scoped data (docs/architecture.md, "Tenancy"): a connection (the database or an open
 * transaction) seen by one company. Every statement sent through it gets the company as its first parameter,
 * `$1`, ahead of its own; a statement that does not use `$1` is refused before it is sent, and PostgreSQL
 * (either engine) would refuse it too, as a parameter it cannot type or one too many. So a repository
 * function cannot forget the company: it never receives it as an argument it might drop, only this scope.
 */
export interface CompanyScope {
  readonly companyId: string;
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
}

const COMPANY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USES_COMPANY = /\$1(?![0-9])/;

/** Statements are a handful of constant texts: each is checked once. */
const checked = new Set<string>();

export class CompanyScopeError extends Error {}

export function forCompany(db: Queryable, companyId: string): CompanyScope {
  if (typeof companyId !== "string" || !COMPANY_ID.test(companyId)) {
    throw new CompanyScopeError(
      `a company scope needs a company id, got ${typeof companyId === "string" ? JSON.stringify(companyId.slice(0, 40)) : typeof companyId}`,
    );
  }
  return {
    companyId,
    query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      if (!checked.has(sql)) {
        if (!USES_COMPANY.test(sql)) {
          return Promise.reject(
            new CompanyScopeError(`a company-scoped statement must filter by the company ($1): ${sql.slice(0, 120)}`),
          );
        }
        if (checked.size < 10_000) checked.add(sql);
      }
      return db.query<Row>(sql, [companyId, ...params]);
    },
  };
}
