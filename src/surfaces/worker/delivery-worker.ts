import type { WebhookService } from "../../domain/webhooks/webhook-service.js";
import type { Logger } from "../../platform/logger.js";
import { createPollLoop } from "./poll-loop.js";

export interface DeliveryWorkerOptions {
  pollIntervalMs?: number;
  /** Deliveries in flight at once, overall. */
  concurrency?: number;
  /** Deliveries in flight at once for one endpoint: a slow receiver holds up only its own lane. */
  perEndpoint?: number;
}

/**
 * The webhook delivery worker (a surface: it only loops and calls the domain). Runs inside the service
 * process by default, or alone with `billing worker`; any number of workers share the work through the
 * deliveries table (claimed with FOR UPDATE SKIP LOCKED).
 */
export function createDeliveryWorker(webhooks: WebhookService, logger: Logger, options: DeliveryWorkerOptions = {}) {
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const limits = { limit: options.concurrency ?? 32, perEndpoint: options.perEndpoint ?? 4 };

  async function runOnce(): Promise<number> {
    try {
      return await webhooks.deliverDue(limits);
    } catch (error) {
      logger.error({ err: error }, "webhook delivery step failed");
      return 0;
    }
  }

  const polling = createPollLoop(runOnce, pollIntervalMs);

  return {
    runOnce,

    /** Runs steps until nothing is due now (tests, and `billing worker --once`). */
    async drain(): Promise<void> {
      while ((await runOnce()) > 0) {
        // keep going
      }
    },

    /** Starts the loop: at once while deliveries are due, else every poll interval (or when nudged). */
    start: polling.start,

    /** Looks for due deliveries now instead of at the next poll. */
    nudge: polling.nudge,

    /** Stops taking new work and waits for the attempts in flight (graceful shutdown). */
    stop: polling.stop,
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
