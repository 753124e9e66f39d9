import type { WebhookService } from "../../domain/webhooks/webhook-service.js";
import type { Logger } from "../../platform/logger.js";

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
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function runOnce(): Promise<number> {
    try {
      return await webhooks.deliverDue(limits);
    } catch (error) {
      logger.error({ err: error }, "webhook delivery step failed");
      return 0;
    }
  }

  return {
    runOnce,

    /** Runs steps until nothing is due now (tests, and `billing worker --once`). */
    async drain(): Promise<void> {
      while ((await runOnce()) > 0) {
        // keep going
      }
    },

    start(): void {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          const sent = await runOnce();
          if (sent > 0 || !running) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pollIntervalMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      })();
    },

    /** Looks for due deliveries now instead of at the next poll. */
    nudge(): void {
      wake?.();
    },

    /** Stops taking new work and waits for the attempts in flight (graceful shutdown). */
    async stop(): Promise<void> {
      running = false;
      wake?.();
      await loop;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
