import type { Database } from "./database.js";

/**
 * Autovacuum for the embedded database. PGlite runs PostgreSQL as a single-user backend: there is no
 * autovacuum launcher, so no table is ever analyzed or vacuumed unless someone asks. Without statistics
 * the planner guesses that every condition matches a row or so, and picks indexes by accident: the
 * ingest function looked up each draft through (company_id, seq) and filtered the company's invoices one
 * by one, a cost that grows with every month of invoices (docs/performance.md, step 14). Dead row versions
 * of the draft invoices, updated by every ingest call, would pile up as well.
 *
 * Every few seconds this asks PostgreSQL's own activity counters which tables changed enough, by
 * autovacuum's default thresholds, and analyzes or vacuums them, each table at most once a minute (as
 * autovacuum's naptime). Each pass is one short query when nothing is due. Both commands take the single
 * connection while they run, so they are kept short: ANALYZE samples 3,000 rows instead of 30,000
 * (statistics target 10: ~90 ms → ~10 ms for 200,000 events on PGlite; the embedded database serves one
 * company or a few, whose plans need the tables' sizes more than fine histograms), and VACUUM reads only
 * the pages changed since the last one.
 */
const EMBEDDED_MAINTENANCE_INTERVAL_MS = 5_000;

// autovacuum's defaults (postgresql.conf): a table is analyzed after 50 + 10 % changed rows, vacuumed after
// 50 + 20 % dead rows or 1,000 + 20 % inserted rows.
const ANALYZE_THRESHOLD = 50;
const ANALYZE_SCALE = 0.1;
const VACUUM_THRESHOLD = 50;
const VACUUM_SCALE = 0.2;
const VACUUM_INSERT_THRESHOLD = 1000;
const VACUUM_INSERT_SCALE = 0.2;
/** autovacuum_naptime: a table is analyzed, or vacuumed, at most once a minute. */
const NAPTIME_SECONDS = 60;
const STATISTICS_TARGET = 10;

export interface TableActivity {
  table: string;
  /** pg_class.reltuples: -1 when the table was never analyzed or vacuumed. */
  reltuples: number;
  modifiedSinceAnalyze: number;
  dead: number;
  insertedSinceVacuum: number;
  /** Seconds since the table was last analyzed, or vacuumed; null: never. */
  secondsSinceAnalyze: number | null;
  secondsSinceVacuum: number | null;
}

/** What autovacuum would do to a table now. Pure. */
export function maintenanceDue(t: TableActivity): { analyze: boolean; vacuum: boolean } {
  const rows = Math.max(t.reltuples, 0);
  const rested = (seconds: number | null) => seconds === null || seconds >= NAPTIME_SECONDS;
  return {
    analyze: rested(t.secondsSinceAnalyze) && t.modifiedSinceAnalyze > ANALYZE_THRESHOLD + ANALYZE_SCALE * rows,
    vacuum:
      rested(t.secondsSinceVacuum) &&
      (t.dead > VACUUM_THRESHOLD + VACUUM_SCALE * rows ||
        t.insertedSinceVacuum > VACUUM_INSERT_THRESHOLD + VACUUM_INSERT_SCALE * rows),
  };
}

/** One pass: analyzes and vacuums the tables that are due. Returns what it did, for tests and logs. */
export async function runEmbeddedMaintenance(db: Database): Promise<{ analyzed: string[]; vacuumed: string[] }> {
  // A single-user backend only publishes its counters when asked to.
  await db.query("SELECT pg_stat_force_next_flush()");
  const { rows } = await db.query<{
    name: string;
    reltuples: number;
    modified: string;
    dead: string;
    inserted: string;
    since_analyze: number | null;
    since_vacuum: number | null;
  }>(
    `SELECT format('%I.%I', s.schemaname, s.relname) AS name, c.reltuples::float8 AS reltuples,
            s.n_mod_since_analyze AS modified, s.n_dead_tup AS dead, s.n_ins_since_vacuum AS inserted,
            extract(epoch FROM now() - greatest(s.last_analyze, s.last_autoanalyze))::float8 AS since_analyze,
            extract(epoch FROM now() - greatest(s.last_vacuum, s.last_autovacuum))::float8 AS since_vacuum
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid`,
  );
  const analyzed: string[] = [];
  const vacuumed: string[] = [];
  for (const row of rows) {
    const due = maintenanceDue({
      table: row.name,
      reltuples: Number(row.reltuples),
      modifiedSinceAnalyze: Number(row.modified),
      dead: Number(row.dead),
      insertedSinceVacuum: Number(row.inserted),
      secondsSinceAnalyze: row.since_analyze === null ? null : Number(row.since_analyze),
      secondsSinceVacuum: row.since_vacuum === null ? null : Number(row.since_vacuum),
    });
    // The name comes from format('%I.%I'): quoted as an identifier by PostgreSQL itself.
    if (due.vacuum) {
      await db.query(`VACUUM ${row.name}`);
      vacuumed.push(row.name);
    }
    if (due.analyze) {
      await db.transaction(async (tx) => {
        await tx.query(`SET LOCAL default_statistics_target = ${STATISTICS_TARGET}`);
        await tx.query(`ANALYZE ${row.name}`);
      });
      analyzed.push(row.name);
    }
  }
  return { analyzed, vacuumed };
}

/** What a running maintenance reports: passes that did something, and passes that failed. */
export interface MaintenanceListener {
  onPass?(done: { analyzed: string[]; vacuumed: string[] }): void;
  onError?(error: unknown): void;
}

/**
 * Runs a pass every `intervalMs` until stopped. A failed pass (the database closing under it, say: nothing
 * is half-done by an ANALYZE or VACUUM) is reported and tried again at the next tick.
 */
export function startEmbeddedMaintenance(
  db: Database,
  intervalMs = EMBEDDED_MAINTENANCE_INTERVAL_MS,
  listener: MaintenanceListener = {},
): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = runEmbeddedMaintenance(db)
      .then(
        (done) => {
          if (done.analyzed.length + done.vacuumed.length > 0) listener.onPass?.(done);
        },
        (error: unknown) => listener.onError?.(error),
      )
      .finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
