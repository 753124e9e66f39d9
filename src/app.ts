import type { FastifyInstance } from "fastify";
import { openServices } from "./compose.js";
import type { Config } from "./config.js";
import type { Database } from "./db/database.js";
import type { Clock } from "./domain/kernel/clock.js";
import type { Services } from "./domain/services.js";
import { createFailureThrottle } from "./platform/failure-throttle.js";
import { createLogger, type Logger } from "./platform/logger.js";
import { createMetrics } from "./platform/metrics.js";
import { buildHttpApp } from "./surfaces/http/http-app.js";
import { createDeliveryWorker, type DeliveryWorker } from "./surfaces/worker/delivery-worker.js";
import { createInvoiceWorker, type InvoiceWorker } from "./surfaces/worker/invoice-worker.js";
import { createMailWorker, type MailWorker } from "./surfaces/worker/mail-worker.js";

export interface App {
  db: Database;
  services: Services;
  http: FastifyInstance;
  /** The webhook delivery worker; `main.ts` starts it, tests drive it with `drain()`. */
  worker: DeliveryWorker;
  /** Issues drafts once their period is over (BILLING_INVOICE_GRACE; null when off); started with the worker. */
  invoiceWorker: InvoiceWorker | null;
  /** Sends invoices' emails and queues their reminders (BILLING_SMTP_URL); started with the worker, tests `drain()` it. */
  mailWorker: MailWorker;
  /** Starts the workers this process runs (BILLING_WORKER): webhook deliveries, and invoices unless off. */
  startWorkers(): void;
  logger: Logger;
  close(): Promise<void>;
}

/**
 * The server's wiring: the services (`openServices`, shared with the `billing` command) → bootstrap →
 * worker → HTTP. `db` may be passed in (tests share one per file); then the caller closes it.
 */
export async function createApp(
  config: Config,
  options: { db?: Database; clock?: Clock; logger?: Logger } = {},
): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const core = await openServices(config, { ...options, logger });
  const { db, services, clock } = core;
  try {
    const worker = createDeliveryWorker(services.webhooks, logger, { pollIntervalMs: config.webhooks.pollIntervalMs });
    const invoiceWorker =
      config.invoiceGraceMs === null
        ? null
        : createInvoiceWorker(services.invoices, logger, { graceMs: config.invoiceGraceMs, credits: services.credits });
    const mailWorker = createMailWorker(services.invoices, logger, { pollIntervalMs: config.mail.pollIntervalMs });
    if (config.bootstrap) {
      const { company, createdKey, user } = await services.access.bootstrap(
        config.bootstrap.companyName,
        config.bootstrap.apiKey,
        config.bootstrap.user,
      );
      logger.info(
        {
          company_id: company.id,
          created_key: createdKey,
          ...(user ? { user_email: user.email, created_user: user.created } : {}),
        },
        "bootstrap company ready",
      );
    }
    const metrics = createMetrics();
    // On the services' clock, so that tests move the failure window as they move time.
    const authFailures =
      config.authFailuresPerMinute === null
        ? null
        : createFailureThrottle({
            limit: config.authFailuresPerMinute,
            now: () => clock.now().getTime(),
            onRefused: (surface) => metrics.authThrottled.inc({ surface }),
          });
    const http = await buildHttpApp({
      services,
      clock,
      db,
      logger,
      metrics,
      publicUrl: config.publicUrl,
      adminToken: config.adminToken,
      requestTimeoutMs: config.requestTimeoutMs,
      rateLimit: config.rateLimit,
      authFailures,
      trustedProxies: config.trustedProxies,
    });
    return {
      db,
      services,
      http,
      worker,
      invoiceWorker,
      mailWorker,
      startWorkers() {
        worker.start();
        invoiceWorker?.start();
        mailWorker.start();
      },
      logger,
      /** Stops accepting requests, finishes those in flight, the webhook attempts and the invoice round under way, then closes. */
      async close() {
        await http.close();
        await worker.stop();
        await invoiceWorker?.stop();
        await mailWorker.stop();
        await core.close();
      },
    };
  } catch (error) {
    await core.close();
    throw error;
  }
}
