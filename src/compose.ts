import type { Config } from "./config.js";
import type { Database } from "./db/database.js";
import { migrate } from "./db/migrate.js";
import { openDatabase } from "./db/open-database.js";
import { systemClock, type Clock } from "./domain/kernel/clock.js";
import { createServices, type Services } from "./domain/services.js";
import type { Logger } from "./platform/logger.js";
import { createOutboundHttp } from "./platform/outbound-http.js";
import { createSmtpMailer } from "./platform/smtp-mailer.js";

export interface Core {
  db: Database;
  services: Services;
  clock: Clock;
  /** Closes the outbound HTTP client, and the database when this opened it. */
  close(): Promise<void>;
}

/**
 * The one wiring of the services, used by the server (`createApp`) and the `billing` command: open the
 * database → migrate → services. `db` may be passed in (tests share one per file); then the caller closes
 * it. Without a logger nothing is logged (the command line prints only its result).
 */
export async function openServices(
  config: Config,
  options: { db?: Database; clock?: Clock; logger?: Logger } = {},
): Promise<Core> {
  const { logger } = options;
  const db =
    options.db ??
    (await openDatabase(
      config.storage,
      logger
        ? {
            maintenance: {
              onPass: (done) => logger.debug(done, "embedded database maintenance"),
              onError: (error) =>
                logger.warn({ err: error }, "embedded database maintenance failed; trying again at the next pass"),
            },
          }
        : {},
    ));
  const ownsDb = !options.db;
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger?.info({ applied }, "migrations applied");
    const clock = options.clock ?? systemClock;
    const outboundHttp = createOutboundHttp({
      timeoutMs: config.webhooks.timeoutMs,
      allowPrivate: config.webhooks.allowPrivate,
    });
    const mailer = config.mail.smtpUrl
      ? createSmtpMailer({ url: config.mail.smtpUrl, timeoutMs: config.mail.timeoutMs })
      : null;
    if (!mailer) logger?.info("email is off: BILLING_SMTP_URL is not set, so invoices are not emailed");
    const services = createServices({
      db,
      clock,
      publicUrl: config.publicUrl,
      webhookSettings: config.webhooks,
      outboundHttp,
      ingest: config.ingest,
      // An embedded database's folder is locked to this process, so every revocation passes through this
      // process's access service and remembered keys cannot go stale; a server may be shared by several.
      rememberKeys: db.engine === "pglite",
      mailer,
      mailSettings: config.mail,
      readings: config.readings,
    });
    return {
      db,
      services,
      clock,
      async close() {
        await outboundHttp.close();
        mailer?.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (error) {
    if (ownsDb) await db.close();
    throw error;
  }
}
