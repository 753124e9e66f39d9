import type { Database } from "../../../db/database.js";
import { type InvoiceStatus, may } from "../invoice-states.js";
import type { Mailer } from "../../../platform/smtp-mailer.js";
import { toDateString } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import { RateLimitedError } from "../../kernel/errors.js";
import { companyData } from "../../kernel/tenancy.js";
import { maxAttempts, nextAttemptAt } from "../../webhooks/delivery-schedule.js";
import { invoiceDocumentInput, invoiceDocumentPdf } from "../documents/invoice-documents.js";
import { emailFigures } from "../documents/invoice-words.js";
import { composeInvoiceEmail } from "./invoice-email.js";
import * as repo from "./invoice-message-repository.js";
import { findInvoiceDocument } from "../invoice-read-repository.js";

export interface MailSettings {
  /** BILLING_MAIL_FROM. */
  from: string;
  /** Waits before each retry; attempts in all = waits + 1. */
  retryScheduleMs: number[];
  /** Each stage of an SMTP conversation; a message's lease is longer than any attempt can take. */
  timeoutMs: number;
}

/** Why nothing is sent when the service has no SMTP server (the message log says it). */
const NO_SMTP = "not sent: email is off (BILLING_SMTP_URL is not set)";

/**
 * Sending invoices' messages (docs/api.md, "Delivery"), the mail worker's round: queue the reminders that have
 * come due (one statement over every company), then claim due messages (leased, as webhook deliveries are),
 * compose each from the invoice as it is now, attach its PDF, send, and record the outcome: sent, or retried on
 * the schedule until the attempts run out, then failed, with the SMTP server's reason either way.
 */
export function createMailEngine({
  db,
  clock,
  mailer,
  settings,
}: {
  db: Database;
  clock: Clock;
  mailer: Mailer | null;
  settings: MailSettings;
}) {
  type Attempt = { ok: true } | { ok: false; error: string; final?: boolean };

  async function attempt(message: repo.MessageRow): Promise<Attempt> {
    const scope = companyData(db, message.company_id).data;
    // One read of the invoice: what the email says (its figures, what was paid and credited, the customer's memo)
    // and what its PDF shows.
    const row = await findInvoiceDocument(scope, message.invoice_number);
    if (!row) return { ok: false, error: "not sent: the invoice is gone", final: true };
    // Sent only while the invoice's state allows it (invoice-states.ts): a reminder while something is owed,
    // nothing about a draft or a void invoice.
    if (!may(row.status as InvoiceStatus, message.kind === "reminder" ? "remind" : "send"))
      return { ok: false, error: `not sent: the invoice is ${row.status}`, final: true };
    if (!mailer) return { ok: false, error: NO_SMTP, final: true };
    const to = message.recipient;
    if (!to) return { ok: false, error: "not sent: the customer has no email address", final: true };
    // The email's figures and seller are the PDF's (invoice-words.ts), read once for both.
    const document = await invoiceDocumentInput(scope, row);
    const email = composeInvoiceEmail({
      kind: message.kind,
      reminderDay: message.reminder_day,
      sellerName: document.seller.name,
      customerName: row.customer_name,
      number: row.number,
      ...emailFigures(document),
      hostedUrl: row.hosted_url,
      memo: row.customer_memo,
    });
    const { filename, pdf } = await invoiceDocumentPdf(scope, row, document);
    return mailer.send({
      from: settings.from,
      to,
      ...email,
      attachments: [{ filename, content: pdf, contentType: "application/pdf" }],
    });
  }

  return {
    /** Queues the reminders due today, of every company (at most `limit`); returns how many. */
    async queueReminders(limit: number): Promise<number> {
      const now = clock.now();
      return repo.queueDueReminders(db, toDateString(now), now, limit);
    },

    /**
     * Sends up to `limit` due messages, one after another, each claimed just before it is sent (so that a worker
     * that stops, `keepGoing` false, leaves the rest unclaimed for the next one); returns how many it sent or tried.
     */
    async sendDue(limit: number, keepGoing: () => boolean = () => true): Promise<number> {
      const leaseMs = settings.timeoutMs * 4 + 30_000;
      const attempts = maxAttempts(settings.retryScheduleMs);
      let done = 0;
      while (done < limit && keepGoing()) {
        const now = clock.now();
        const [message] = await repo.claimDueMessages(db, now, new Date(now.getTime() + leaseMs), 1);
        if (!message) break;
        done += 1;
        let outcome: Attempt;
        try {
          outcome = await attempt(message);
        } catch (error) {
          // The company's documents are momentarily queued full: no attempt, the message waits its turn.
          if (error instanceof RateLimitedError && error.code === "too_many_documents") {
            const due = new Date(clock.now().getTime() + error.retryAfterSeconds * 1000);
            await repo.deferMessage(
              db,
              { companyId: message.company_id, id: message.id, attempts: message.attempts },
              due,
            );
            continue;
          }
          outcome = { ok: false, error: `not sent: ${error instanceof Error ? error.message : String(error)}` };
        }
        const finishedAt = clock.now();
        const retryAt =
          outcome.ok || ("final" in outcome && outcome.final) || message.attempts >= attempts
            ? null
            : nextAttemptAt(message.attempts, settings.retryScheduleMs, finishedAt);
        await repo.recordMessageAttempt(
          db,
          { companyId: message.company_id, id: message.id, attempts: message.attempts },
          {
            status: outcome.ok ? "sent" : retryAt ? "queued" : "failed",
            error: outcome.ok ? null : outcome.error,
            nextAttemptAt: retryAt,
            sentAt: outcome.ok ? finishedAt : null,
          },
        );
      }
      return done;
    },
  };
}
