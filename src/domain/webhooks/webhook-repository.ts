import type { CompanyScope } from "../../db/company-scope.js";
import type { Queryable } from "../../db/database.js";

export interface EndpointRow {
  company_id: string;
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  company_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  test: boolean;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

const ENDPOINT_COLUMNS = "company_id, id, url, description, events, enabled, secret, created_at, updated_at";
const DELIVERY_COLUMNS = `company_id, id, endpoint_id, event_id, event_type, payload, test, status, attempts, last_status_code,
  last_error, next_attempt_at, delivered_at, created_at`;

export async function insertEndpoint(db: CompanyScope, e: EndpointRow): Promise<void> {
  await db.query(`INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
    e.id,
    e.url,
    e.description,
    e.events,
    e.enabled,
    e.secret,
    e.created_at,
    e.updated_at,
  ]);
}

export async function findEndpoint(db: CompanyScope, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE company_id = $1 AND id = $2`,
    [id],
  );
  return rows[0];
}

export async function listEndpoints(db: CompanyScope): Promise<EndpointRow[]> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE company_id = $1 ORDER BY seq DESC`,
    [],
  );
  return rows;
}

export async function updateEndpoint(db: CompanyScope, e: EndpointRow): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints SET url = $3, description = $4, events = $5, enabled = $6, secret = $7, updated_at = $8
      WHERE company_id = $1 AND id = $2`,
    [e.id, e.url, e.description, e.events, e.enabled, e.secret, e.updated_at],
  );
}

export async function deleteEndpoint(db: CompanyScope, id: string): Promise<boolean> {
  const result = await db.query("DELETE FROM webhook_endpoints WHERE company_id = $1 AND id = $2", [id]);
  return result.rowCount === 1;
}

/** A disabled endpoint's pending retries stop (docs/webhooks.md, "Delivery rules"): they end failed; only a resend revives one. */
export async function stopPendingDeliveries(db: CompanyScope, endpointId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint disabled', next_attempt_at = NULL
      WHERE company_id = $1 AND endpoint_id = $2 AND status = 'pending'`,
    [endpointId],
  );
}

/** One pending delivery per enabled endpoint of the company subscribed to the event's type. */
export async function insertDeliveriesForEvent(
  db: CompanyScope,
  event: { eventId: string; type: string; body: string; createdAt: Date },
): Promise<number> {
  const result = await db.query(
    `INSERT INTO webhook_deliveries (company_id, id, endpoint_id, event_id, event_type, payload, test, status, attempts,
                                     next_attempt_at, created_at)
     SELECT e.company_id, gen_random_uuid(), e.id, $2, $3, $4, false, 'pending', 0, $5, $5
       FROM webhook_endpoints e
      WHERE e.company_id = $1 AND e.enabled AND $3 = ANY (e.events)`,
    [event.eventId, event.type, event.body, event.createdAt],
  );
  return result.rowCount;
}

export async function insertDelivery(db: CompanyScope, d: DeliveryRow): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      d.id,
      d.endpoint_id,
      d.event_id,
      d.event_type,
      d.payload,
      d.test,
      d.status,
      d.attempts,
      d.last_status_code,
      d.last_error,
      d.next_attempt_at,
      d.delivered_at,
      d.created_at,
    ],
  );
}

export async function findDelivery(db: CompanyScope, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE company_id = $1 AND id = $2`,
    [id],
  );
  return rows[0];
}

/** The most recent deliveries of an endpoint (50: docs/webhooks.md, "Delivery rules"). */
export async function listRecentDeliveries(
  db: CompanyScope,
  endpointId: string,
  limit: number,
): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE company_id = $1 AND endpoint_id = $2 ORDER BY seq DESC LIMIT $3`,
    [endpointId, limit],
  );
  return rows;
}

export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  secret: string;
}

/** Deliveries that failed for good, or whose last attempt failed and that wait for a retry; newest first. */
export async function listFailingDeliveries(db: CompanyScope, limit: number): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE company_id = $1 AND (status = 'failed' OR (status = 'pending' AND attempts > 0))
      ORDER BY seq DESC LIMIT $2`,
    [limit],
  );
  return rows;
}

/**
 * Claims due deliveries of enabled endpoints (FOR UPDATE SKIP LOCKED: concurrent workers take different
 * rows) and counts the attempt at once, leasing each row until `leaseUntil`: if the worker dies while
 * sending, the lease runs out and the delivery is claimed again (at-least-once: docs/webhooks.md, "Delivery rules").
 */
export async function claimDueDeliveries(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(
    `WITH due AS (
       SELECT d.company_id, d.id
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.company_id = d.company_id AND e.id = d.endpoint_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND e.enabled
        ORDER BY d.next_attempt_at
        LIMIT $3
        FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, next_attempt_at = $2
       FROM due, webhook_endpoints e
      WHERE d.company_id = due.company_id AND d.id = due.id AND e.company_id = d.company_id AND e.id = d.endpoint_id
     RETURNING d.company_id, d.id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.test, d.status, d.attempts,
               d.last_status_code, d.last_error, d.next_attempt_at, d.delivered_at, d.created_at, e.url, e.secret`,
    [now, leaseUntil, limit],
  );
  return rows;
}

/**
 * Starts the attempt of a claimed delivery: renews its lease from now (a claimed row may have waited in its
 * worker's queue behind slower attempts) and reads the endpoint as it is now, so that a rotated secret or
 * a changed URL applies at once. Undefined when this worker must not send it: the row moved on since the
 * claim (claimed again by another worker once its lease ran out, resent, or stopped because the endpoint
 * was disabled), or the endpoint is disabled or gone.
 */
export async function startClaimedAttempt(
  db: Queryable,
  d: { companyId: string; id: string; attempts: number },
  leaseUntil: Date,
): Promise<{ url: string; secret: string } | undefined> {
  const { rows } = await db.query<{ url: string; secret: string }>(
    `UPDATE webhook_deliveries d
        SET next_attempt_at = $4
       FROM webhook_endpoints e
      WHERE d.company_id = $1 AND d.id = $2 AND d.attempts = $3 AND d.status = 'pending'
        AND e.company_id = d.company_id AND e.id = d.endpoint_id AND e.enabled
     RETURNING e.url, e.secret`,
    [d.companyId, d.id, d.attempts, leaseUntil],
  );
  return rows[0];
}

/**
 * Records an attempt's outcome, unless the row moved on meanwhile (claimed again after a lost lease, or
 * resent). A row stopped meanwhile (its endpoint disabled while the attempt was in flight: status
 * 'failed', "endpoint disabled") stays stopped unless the attempt succeeded: a failed attempt must not
 * put it back to 'pending', where enabling the endpoint again would revive it.
 */
export async function recordAttempt(
  db: Queryable,
  d: { companyId: string; id: string; attempts: number },
  outcome: {
    status: "pending" | "succeeded" | "failed";
    statusCode: number | null;
    error: string | null;
    nextAttemptAt: Date | null;
    deliveredAt: Date | null;
  },
): Promise<boolean> {
  const result = await db.query(
    `UPDATE webhook_deliveries
        SET status = $4, last_status_code = $5, last_error = $6, next_attempt_at = $7, delivered_at = COALESCE($8, delivered_at)
      WHERE company_id = $1 AND id = $2 AND attempts = $3 AND (status = 'pending' OR $4 = 'succeeded')`,
    [
      d.companyId,
      d.id,
      d.attempts,
      outcome.status,
      outcome.statusCode,
      outcome.error,
      outcome.nextAttemptAt,
      outcome.deliveredAt,
    ],
  );
  return result.rowCount === 1;
}

/** Takes one more attempt of a delivery for a resend or a test; returns the row as it now stands. */
export async function beginManualAttempt(db: CompanyScope, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, status = 'pending', next_attempt_at = NULL
      WHERE company_id = $1 AND id = $2
     RETURNING ${DELIVERY_COLUMNS}`,
    [id],
  );
  return rows[0];
}
