import type { CompanyScope } from "../../../db/company-scope.js";
import { sqlStatusesThat } from "../invoice-states.js";
import type { Queryable } from "../../../db/database.js";

// The statements of invoice delivery: the message log (also the outbox the mail worker sends from), the
// reminders' round, and the hosted page's link.

export type MessageKind = "issued" | "reminder" | "manual";
export type MessageStatus = "queued" | "sent" | "failed";

export interface MessageRow {
  company_id: string;
  id: string;
  invoice_number: string;
  kind: MessageKind;
  reminder_day: number | null;
  recipient: string | null;
  status: MessageStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
  sent_at: Date | null;
  created_at: Date;
}

const MESSAGE_COLUMNS = `m.company_id, m.id, m.invoice_number, m.kind, m.reminder_day, m.recipient, m.status, m.attempts,
  m.last_error, m.next_attempt_at, m.sent_at, m.created_at`;

const NO_EMAIL = "the customer has no email address";

/**
 * Queues one message about an invoice to its customer's email address, as it is now; a customer without one
 * gets a failed message that says so, so that the log shows why nothing was sent. `onlyIfEmailDelivery`: only
 * for a customer whose invoices are delivered by email (issuing); a resend asks for it by hand, whatever the
 * setting. Returns the message, or undefined when none was queued.
 */
export async function queueMessage(
  db: CompanyScope,
  m: { number: string; kind: "issued" | "manual"; at: Date; onlyIfEmailDelivery: boolean },
): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `INSERT INTO invoice_messages AS m (company_id, id, invoice_number, kind, recipient, status, attempts, last_error,
                                       next_attempt_at, created_at)
     SELECT i.company_id, gen_random_uuid(), i.number, $3, cu.email,
            CASE WHEN cu.email IS NULL THEN 'failed' ELSE 'queued' END, 0,
            CASE WHEN cu.email IS NULL THEN '${NO_EMAIL}' END,
            CASE WHEN cu.email IS NULL THEN NULL ELSE $4::timestamptz END, $4
       FROM invoices i
       JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
       LEFT JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id
      WHERE i.company_id = $1 AND i.number = $2 AND (NOT $5 OR cu.invoice_delivery = 'email')
     RETURNING ${MESSAGE_COLUMNS}`,
    [m.number, m.kind, m.at, m.onlyIfEmailDelivery],
  );
  return rows[0];
}

/** An invoice's messages, newest first (at most `limit`). */
export async function listMessages(db: CompanyScope, number: string, limit: number): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM invoice_messages m
      WHERE m.company_id = $1 AND m.invoice_number = $2 ORDER BY m.seq DESC LIMIT $3`,
    [number, limit],
  );
  return rows;
}

/**
 * The reminders' round, one statement over every company: for each issued invoice of a customer with email
 * delivery, the latest of its company's reminder days that has come (due date + day ≤ today) and comes after
 * the invoice was issued, unless that reminder was queued already (one per invoice and day). Only the latest:
 * a worker that was down for a while sends one reminder, not every one it missed. Returns how many it queued.
 */
export async function queueDueReminders(db: Queryable, today: string, at: Date, limit: number): Promise<number> {
  const result = await db.query(
    `INSERT INTO invoice_messages (company_id, id, invoice_number, kind, reminder_day, recipient, status, attempts,
                                   last_error, next_attempt_at, created_at)
     SELECT due.company_id, gen_random_uuid(), due.number, 'reminder', due.day, due.email,
            CASE WHEN due.email IS NULL THEN 'failed' ELSE 'queued' END, 0,
            CASE WHEN due.email IS NULL THEN '${NO_EMAIL}' END,
            CASE WHEN due.email IS NULL THEN NULL ELSE $2::timestamptz END, $2
       FROM (
         SELECT i.company_id, i.number, cu.email,
                (SELECT max(d) FROM unnest(co.reminder_days) AS d
                  WHERE i.due_date + d <= $1::date AND i.due_date + d > i.issued_date) AS day
           FROM invoices i
           JOIN companies co ON co.id = i.company_id
           JOIN contracts c ON c.company_id = i.company_id AND c.id = i.contract_id
           JOIN customers cu ON cu.company_id = c.company_id AND cu.id = c.customer_id AND cu.invoice_delivery = 'email'
          WHERE i.status IN (${sqlStatusesThat("remind")}) AND cardinality(co.reminder_days) > 0
            AND i.due_date + (SELECT min(d) FROM unnest(co.reminder_days) AS d) <= $1::date
       ) due
      WHERE due.day IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM invoice_messages m
                         WHERE m.company_id = due.company_id AND m.invoice_number = due.number
                           AND m.kind = 'reminder' AND m.reminder_day = due.day)
      LIMIT $3
     ON CONFLICT (company_id, invoice_number, reminder_day) WHERE kind = 'reminder' DO NOTHING`,
    [today, at, limit],
  );
  return result.rowCount;
}

/**
 * Claims due queued messages of every company (FOR UPDATE SKIP LOCKED: workers take different rows), counting
 * the attempt at once and leasing each row until `leaseUntil`: a worker that dies while sending leaves it to be
 * claimed again when the lease runs out (at least once).
 */
export async function claimDueMessages(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `WITH due AS (
       SELECT company_id, id FROM invoice_messages
        WHERE status = 'queued' AND next_attempt_at <= $1
        ORDER BY next_attempt_at
        LIMIT $3
        FOR UPDATE SKIP LOCKED
     )
     UPDATE invoice_messages m SET attempts = m.attempts + 1, next_attempt_at = $2
       FROM due WHERE m.company_id = due.company_id AND m.id = due.id
     RETURNING ${MESSAGE_COLUMNS}`,
    [now, leaseUntil, limit],
  );
  return rows;
}

/** Records an attempt's outcome, unless the row moved on meanwhile (claimed again after its lease ran out). */
export async function recordMessageAttempt(
  db: Queryable,
  m: { companyId: string; id: string; attempts: number },
  outcome: { status: MessageStatus; error: string | null; nextAttemptAt: Date | null; sentAt: Date | null },
): Promise<boolean> {
  const result = await db.query(
    `UPDATE invoice_messages SET status = $4, last_error = $5, next_attempt_at = $6, sent_at = COALESCE($7, sent_at)
      WHERE company_id = $1 AND id = $2 AND attempts = $3 AND status = 'queued'`,
    [m.companyId, m.id, m.attempts, outcome.status, outcome.error, outcome.nextAttemptAt, outcome.sentAt],
  );
  return result.rowCount === 1;
}

/**
 * Puts a claimed message back in the queue as if it had not been tried (its attempt given back), due again at
 * `nextAttemptAt`: what the mail worker does when the document processes are momentarily full.
 */
export async function deferMessage(
  db: Queryable,
  m: { companyId: string; id: string; attempts: number },
  nextAttemptAt: Date,
): Promise<boolean> {
  const result = await db.query(
    `UPDATE invoice_messages SET attempts = attempts - 1, next_attempt_at = $4
      WHERE company_id = $1 AND id = $2 AND attempts = $3 AND status = 'queued'`,
    [m.companyId, m.id, m.attempts, nextAttemptAt],
  );
  return result.rowCount === 1;
}

/** Sets an invoice's hosted link (at issue, and when the old one is revoked): the old token answers nothing from now on. */
export async function setHostedLink(
  db: CompanyScope,
  number: string,
  link: { url: string; sha256: Buffer },
): Promise<void> {
  await db.query(
    "UPDATE invoices SET hosted_url = $3, hosted_token_sha256 = $4 WHERE company_id = $1 AND number = $2",
    [number, link.url, link.sha256],
  );
}

/** The invoice a hosted page's token names: one indexed equality on the token's SHA-256, never on the token. */
export async function findInvoiceByHostedToken(
  db: Queryable,
  sha256: Buffer,
): Promise<{ company_id: string; number: string } | undefined> {
  const { rows } = await db.query<{ company_id: string; number: string }>(
    `SELECT company_id, number FROM invoices WHERE hosted_token_sha256 = $1 AND status IN (${sqlStatusesThat("link")})`,
    [sha256],
  );
  return rows[0];
}
