import type { Services } from "../../domain/services.js";
import type { Logger } from "../../platform/logger.js";
import { createPollLoop } from "./poll-loop.js";

/** How often the worker looks for drafts to issue: periods end at midnight, so a minute late is nothing. */
const DEFAULT_INTERVAL_MS = 60_000;
const ROUND = 100;

/**
 * The invoice worker (a surface: it only loops and calls the domain): issues every draft whose billing period
 * ended more than the grace period ago (BILLING_INVOICE_GRACE), as finalizing by hand would, and releases what is
 * left of credit grants past their last day. Runs beside the
 * webhook worker, in each service process or in `billing worker`; any number of them may run at once, since
 * each draft is issued under its row lock and an issued one is left as it is, and a crash mid-way rolls
 * back that one draft, which the next round issues.
 */
export function createInvoiceWorker(
  invoices: Services["invoices"],
  logger: Logger,
  options: { graceMs: number; intervalMs?: number; credits?: Services["credits"] },
) {
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;

  /** Issues what is due now, in rounds of 100; returns how many this process issued. */
  async function runOnce(): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        const round = await invoices.issueDue(options.graceMs, ROUND);
        total += round.issued;
        for (const f of round.failed)
          logger.error(
            { err: f.error, invoice: f.number },
            "issuing a due invoice failed; it stays a draft until the next round",
          );
        // A full round that issued nothing is drafts that keep failing (or that others issue): wait for the next.
        if (round.found < ROUND || round.issued === 0) break;
      }
      if (total > 0) logger.info({ issued: total }, "draft invoices issued");
    } catch (error) {
      logger.error({ err: error }, "issuing due invoices failed");
    }
    // Credit grants past their last day give up what is left (docs/api.md, "Credits").
    if (options.credits) {
      try {
        const expired = await options.credits.expireDue(ROUND);
        if (expired > 0) logger.info({ expired }, "credit grants expired");
      } catch (error) {
        logger.error({ err: error }, "expiring credit grants failed");
      }
    }
    return total;
  }

  // A round that issued drafts issued every due one (in rounds of 100): wait for the next interval either way.
  const polling = createPollLoop(async () => {
    await runOnce();
    return 0;
  }, intervalMs);

  return {
    runOnce,

    /** Starts the rounds: one now, then one per interval. */
    start: polling.start,

    /** Stops after the round in progress. */
    stop: polling.stop,
  };
}

export type InvoiceWorker = ReturnType<typeof createInvoiceWorker>;
