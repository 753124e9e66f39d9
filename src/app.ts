import type { FastifyInstance } from "fastify";
import type { Config } from "./config.js";
import type { Database } from "./db/database.js";
import { migrate } from "./db/migrate.js";
import { openDatabase } from "./db/open-database.js";
import { systemClock, type Clock } from "./domain/kernel/clock.js";
import { createServices, type Services } from "./domain/services.js";
import { createLogger, type Logger } from "./platform/logger.js";
import { createMetrics } from "./platform/metrics.js";
import { createOutboundHttp } from "./platform/outbound-http.js";
import { buildHttpApp } from "./surfaces/http/http-app.js";
import { createDeliveryWorker, type DeliveryWorker } from "./surfaces/worker/delivery-worker.js";

export interface App {
  db: Database;
  services: Services;
  http: FastifyInstance;
  /** The webhook delivery worker; `main.ts` starts it, tests drive it with `drain()`. */
  worker: DeliveryWorker;
  logger: Logger;
  close(): Promise<void>;
}

/**
 * The only place that wires: open database → migrate → bootstrap → services → surfaces.
 * `db` may be passed in (tests share one per file); then the caller closes it.
 */
export async function createApp(
  config: Config,
  options: { db?: Database; clock?: Clock; logger?: Logger } = {},
): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const db =
    options.db ??
    (await openDatabase(config.storage, {
      maintenance: {
        onPass: (done) => logger.debug(done, "embedded database maintenance"),
        onError: (error) => logger.warn({ err: error }, "embedded database maintenance failed; trying again at the next pass"),
      },
    }));
  const ownsDb = !options.db;
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger.info({ applied }, "migrations applied");
    const outboundHttp = createOutboundHttp({ timeoutMs: config.webhooks.timeoutMs, allowPrivate: config.webhooks.allowPrivate });
    const services = createServices({
      db,
      clock: options.clock ?? systemClock,
      publicUrl: config.publicUrl,
      webhookSettings: config.webhooks,
      outboundHttp,
      ingest: config.ingest,
    });
    const worker = createDeliveryWorker(services.webhooks, logger, { pollIntervalMs: config.webhooks.pollIntervalMs });
    if (config.bootstrap) {
      const { company, createdKey } = await services.access.bootstrap(config.bootstrap.companyName, config.bootstrap.apiKey);
      logger.info({ company_id: company.id, created_key: createdKey }, "bootstrap company ready");
    }
    const http = await buildHttpApp({
      services,
      db,
      logger,
      metrics: createMetrics(),
      publicUrl: config.publicUrl,
      adminToken: config.adminToken,
      requestTimeoutMs: config.requestTimeoutMs,
      rateLimit: config.rateLimit,
    });
    return {
      db,
      services,
      http,
      worker,
      logger,
      /** Stops accepting requests, finishes those in flight and the webhook attempts under way, then closes. */
      async close() {
        await http.close();
        await worker.stop();
        await outboundHttp.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (error) {
    if (ownsDb) await db.close();
    throw error;
  }
}
