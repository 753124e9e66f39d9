import type { Services } from "../../domain/services.js";
import type { Logger } from "../../platform/logger.js";
import { createPollLoop } from "./poll-loop.js";

/** Messages sent per step, one after another, each bounded by the SMTP timeout (and claimed just before). */
const BATCH = 10;
const REMINDER_ROUND = 500;

/**
 * The mail worker (a surface: it only loops and calls the domain): queues the reminders that have come due,
 * then sends the invoices' queued messages, retrying failures on BILLING_MAIL_RETRY_SCHEDULE. Runs beside the
 * other workers (BILLING_WORKER, or `billing worker`); any number may run at once, since messages are claimed
 * with FOR UPDATE SKIP LOCKED and reminders are one per invoice and day.
 */
export function createMailWorker(
  invoices: Services["invoices"],
  logger: Logger,
  options: { pollIntervalMs?: number } = {},
) {
  let stopping = false;

  async function runOnce(): Promise<number> {
    try {
      const reminders = await invoices.queueReminders(REMINDER_ROUND);
      if (reminders > 0) logger.info({ reminders }, "invoice reminders queued");
    } catch (error) {
      logger.error({ err: error }, "queueing invoice reminders failed");
    }
    try {
      return await invoices.sendMessagesDue(BATCH, () => !stopping);
    } catch (error) {
      logger.error({ err: error }, "sending invoice messages failed");
      return 0;
    }
  }

  const polling = createPollLoop(runOnce, options.pollIntervalMs ?? 5000);

  return {
    runOnce,

    /** Runs steps until nothing is due now (tests, and `billing worker --once`). */
    async drain(): Promise<void> {
      while ((await runOnce()) > 0) {
        // keep going
      }
    },

    start(): void {
      stopping = false;
      polling.start();
    },
    nudge: polling.nudge,

    /** Stops after the message being sent (graceful shutdown): the rest stay queued for the next worker. */
    async stop(): Promise<void> {
      stopping = true;
      await polling.stop();
    },
  };
}

export type MailWorker = ReturnType<typeof createMailWorker>;
