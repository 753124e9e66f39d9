// Reading stored usage events: one by id, a filtered page of them, counts per day (the API's and the
// dashboard's reads). Ingestion's writes are usage-repository.ts's, re-rating's rerating-repository.ts's.
import type { CompanyScope } from "../../db/company-scope.js";
import { EVENT_COLUMNS, type UsageEventRow } from "./usage-repository.js";

export async function findUsageEvent(db: CompanyScope, id: string): Promise<UsageEventRow | undefined> {
  const { rows } = await db.query<UsageEventRow>(
    `SELECT ${EVENT_COLUMNS} FROM usage_events WHERE company_id = $1 AND id = $2`,
    [id],
  );
  return rows[0];
}

export interface UsageFilter {
  contractId?: string | undefined;
  metric?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  status?: string | undefined;
}

/**
 * Newest first; fetches limit + 1 rows after the cursor's position. `from`/`to` keep events whose service
 * month overlaps them; when that is a single month it is matched by equality, so that the index
 * (company_id, contract_id, service_period_start, seq) serves the order and the cursor without a sort.
 */
export async function listUsageEvents(
  db: CompanyScope,
  filter: UsageFilter,
  afterSeq: string | undefined,
  limit: number,
): Promise<UsageEventRow[]> {
  const firstMonth = filter.from ? `${filter.from.slice(0, 7)}-01` : null;
  const singleMonth =
    firstMonth !== null && filter.to !== undefined && filter.to.slice(0, 7) === filter.from!.slice(0, 7)
      ? firstMonth
      : null;
  const { rows } = await db.query<UsageEventRow>(
    `SELECT ${EVENT_COLUMNS} FROM usage_events
      WHERE company_id = $1
        AND ($2::text IS NULL OR contract_id = $2)
        AND ($3::text IS NULL OR metric = $3)
        AND ($4::date IS NULL OR service_period_start >= $4)
        AND ($5::date IS NULL OR service_period_start <= $5)
        AND ($6::date IS NULL OR service_period_start = $6)
        AND ($7::text IS NULL OR status = $7)
        AND ($8::bigint IS NULL OR seq < $8)
      ORDER BY seq DESC
      LIMIT $9`,
    [
      filter.contractId ?? null,
      filter.metric ?? null,
      singleMonth ? null : firstMonth,
      singleMonth ? null : (filter.to ?? null),
      singleMonth,
      filter.status ?? null,
      afterSeq ?? null,
      limit + 1,
    ],
  );
  return rows;
}

/**
 * Events per UTC day of their timestamp in [from, to), for the dashboard's chart; days without events are
 * absent. No index covers event_timestamp yet, so this reads all of the company's events; an index on
 * (company_id, event_timestamp) would serve it.
 */
export async function countUsageEventsPerDay(
  db: CompanyScope,
  from: Date,
  to: Date,
): Promise<{ day: string; events: string }[]> {
  const { rows } = await db.query<{ day: string; events: string }>(
    `SELECT to_char(event_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::text AS events
       FROM usage_events
      WHERE company_id = $1 AND event_timestamp >= $2 AND event_timestamp < $3
      GROUP BY 1
      ORDER BY 1`,
    [from, to],
  );
  return rows;
}
