import pg from "pg";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Database, QueryResult, Tx } from "./database.js";
import { startEmbeddedMaintenance, type MaintenanceListener } from "./embedded-maintenance.js";
import { startPgliteThread, type PgliteThread } from "./pglite-thread.js";

/** What the configuration says about storage. */
export type StorageConfig =
  | { kind: "postgres"; url: string; poolSize?: number; statementTimeoutMs?: number }
  | {
      kind: "pglite";
      dataDir: string;
      /**
       * Where PGlite's SQL runs: "thread" (default) on a worker thread of its own, so that a long statement
       * never stalls the event loop; "in-process" on the caller's event loop, as before
       * (BILLING_PGLITE_THREAD=off, read by config.ts).
       */
      runOn?: "thread" | "in-process";
      /** PostgreSQL's shared_buffers inside PGlite (BILLING_PGLITE_SHARED_BUFFERS; default 16MB). */
      sharedBuffers?: string;
      /** How often the embedded autovacuum looks for tables to analyze or vacuum (embedded-maintenance.ts). */
      maintenanceIntervalMs?: number;
      /**
       * A data folder's tarball (PGlite's dumpDataDir) that a new database starts from instead of an empty
       * one: the tests copy a database migrated once rather than migrate one per suite. Never set by config.ts.
       */
      loadDataDir?: Uint8Array<ArrayBuffer>;
    };

/**
 * The embedded backend's memory settings (PostgreSQL's defaults are sized for a server: 128 MB of shared
 * buffers alone, every page of it touched at start-up).
 */
function pgliteSettings(sharedBuffers: string | undefined): Record<string, string> {
  return { shared_buffers: sharedBuffers || "16MB" };
}

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

/** PGlite has no autovacuum: the service analyzes and vacuums its tables itself (embedded-maintenance.ts). */
function withEmbeddedMaintenance(
  db: Database,
  intervalMs: number | undefined,
  listener: MaintenanceListener | undefined,
): Database {
  const maintenance = startEmbeddedMaintenance(db, intervalMs, listener);
  return {
    ...db,
    async close() {
      await maintenance.stop();
      await db.close();
    },
  };
}

/** The only place that knows PGlite from PostgreSQL. Both are driven through `pg`, so types parse alike. */
export async function openDatabase(
  config: StorageConfig,
  options: { maintenance?: MaintenanceListener } = {},
): Promise<Database> {
  if (config.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      types: typeOverrides,
      connectionTimeoutMillis: 10_000,
      // Deadlines on the server's side: no statement runs, and no transaction sits idle holding its locks,
      // for longer than a minute (a request's work takes milliseconds; `billing verify` on a million events
      // under a second).
      statement_timeout: config.statementTimeoutMs ?? 60_000,
      idle_in_transaction_session_timeout: 60_000,
    });
    // An idle client that loses its server emits 'error'; without a listener that would crash the process.
    pool.on("error", () => {});
    return wrapPool(pool, "postgres", async () => {});
  }

  const releaseLock = config.dataDir.startsWith("memory://") ? () => {} : lockDataDir(config.dataDir);
  // Either way PGlite runs, the service sees one pool, keeps the tables analyzed, and lets the folder go at the end.
  const embedded = (pool: pg.Pool, closeEngine: () => Promise<void>): Database =>
    withEmbeddedMaintenance(
      wrapPool(pool, "pglite", async () => {
        await closeEngine();
        releaseLock();
      }),
      config.maintenanceIntervalMs,
      options.maintenance,
    );
  const runOn = config.runOn ?? "thread";
  if (runOn === "thread") {
    let thread: PgliteThread;
    try {
      thread = await startPgliteThread(config.dataDir, pgliteSettings(config.sharedBuffers), config.loadDataDir);
    } catch (error) {
      releaseLock();
      throw error;
    }
    // pg drives the worker's backend as it drives a server: one connection (one session), same parsers.
    const pool = new pg.Pool({
      stream: () => thread.stream(),
      user: "postgres",
      database: "postgres",
      ssl: false,
      max: 1,
      idleTimeoutMillis: 0,
      types: typeOverrides,
    } as pg.PoolConfig);
    pool.on("error", () => {});
    return embedded(pool, () => thread.close());
  }

  const { PGlite } = await import("@electric-sql/pglite");
  const { createPgConfig } = await import("@electric-sql/pglite/node-postgres");
  let pglite: InstanceType<typeof PGlite>;
  try {
    const defaults = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams;
    const settings = Object.entries(pgliteSettings(config.sharedBuffers)).flatMap(([name, value]) => [
      "-c",
      `${name}=${value}`,
    ]);
    pglite = await PGlite.create(config.dataDir, {
      startParams: [...defaults, ...settings],
      ...(config.loadDataDir ? { loadDataDir: new Blob([config.loadDataDir]) } : {}),
    });
  } catch (error) {
    releaseLock();
    throw error;
  }
  // PGlite is a single session: one connection, so transactions queue behind each other.
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1, types: typeOverrides } as pg.PoolConfig);
  pool.on("error", () => {});
  return embedded(pool, () => pglite.close());
}

export class DataDirInUseError extends Error {}

/**
 * The embedded database belongs to one process at a time (PGlite is a single session): a second process
 * opening the same folder would corrupt it. A pid file keeps it out with a clear message instead.
 */
function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockFile = join(dataDir, "billing.pid");
  try {
    const holder = Number(readFileSync(lockFile, "utf8").trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new DataDirInUseError(
        `The embedded database in ${dataDir} is in use by process ${holder}. Stop that process first, or use the admin API of the running service.`,
      );
    }
  } catch (error) {
    if (error instanceof DataDirInUseError) throw error;
    // no lock file, or an unreadable one: take it
  }
  writeFileSync(lockFile, String(process.pid));
  return () => rmSync(lockFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
