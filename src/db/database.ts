/**
 * The database port. Everything above this folder sees only these types; whether the rows
 * come from PGlite or a PostgreSQL server is decided once, in open-database.ts.
 */
export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Queryable {
  /**
   * A connection is no company's: a company's scope (company-scope.ts, which binds its company as `$1`) can
   * never be passed where a bare connection is expected, and have its company put before the statement's own
   * parameters unasked.
   */
  readonly companyId?: never;
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
}

/** A connection inside an open transaction. Never hand it to code that outlives the callback. */
export type Tx = Queryable;

export interface Database extends Queryable {
  readonly engine: "pglite" | "postgres";
  /**
   * Runs `work` in one transaction on one connection: commit when it resolves, rollback when it throws.
   * Never query the Database itself inside `work` (on PGlite there is a single connection: it would deadlock).
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
