import pg from "pg";
import { mkdirSync } from "node:fs";
import type { Database, QueryResult, Tx } from "./database.js";

/** What the configuration says about storage. */
export type StorageConfig =
  | { kind: "postgres"; url: string; poolSize?: number }
  | { kind: "pglite"; dataDir: string };

// DATE columns stay "YYYY-MM-DD" strings: pg's default turns them into local-time Dates, which shifts days.
// numeric and int8 already come back as strings, so money never passes through a float.
const DATE_OID = 1082;
const typeOverrides = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === DATE_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format as "text");
  },
};

function wrapPool(pool: pg.Pool, engine: Database["engine"], onClose: () => Promise<void>): Database {
  return {
    engine,
    async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
      const result = await pool.query(sql, params as unknown[] | undefined);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      const tx: Tx = {
        async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
          const result = await client.query(sql, params as unknown[] | undefined);
          return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
        },
      };
      let broken = false;
      try {
        await client.query("BEGIN");
        const value = await work(tx);
        await client.query("COMMIT");
        return value;
      } catch (error) {
        try {
          await client.query("ROLLBACK");
        } catch {
          broken = true; // the connection is unusable; let the pool discard it
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async ping(): Promise<boolean> {
      try {
        await pool.query("SELECT 1");
        return true;
      } catch {
        return false;
      }
    },
    async close(): Promise<void> {
      await pool.end();
      await onClose();
    },
  };
}

/** The only place that knows PGlite from PostgreSQL. Both are driven through `pg`, so types parse alike. */
export async function openDatabase(config: StorageConfig): Promise<Database> {
  if (config.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      types: typeOverrides,
      connectionTimeoutMillis: 10_000,
    });
    // An idle client that loses its server emits 'error'; without a listener that would crash the process.
    pool.on("error", () => {});
    return wrapPool(pool, "postgres", async () => {});
  }

  const { PGlite } = await import("@electric-sql/pglite");
  const { createPgConfig } = await import("@electric-sql/pglite/node-postgres");
  if (!config.dataDir.startsWith("memory://")) mkdirSync(config.dataDir, { recursive: true });
  const pglite = await PGlite.create(config.dataDir);
  // PGlite is a single session: one connection, so transactions queue behind each other.
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1, types: typeOverrides } as pg.PoolConfig);
  pool.on("error", () => {});
  return wrapPool(pool, "pglite", async () => {
    await pglite.close();
  });
}
