import { setFlagsFromString } from "node:v8";
import { createApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { AppliedMigrationChangedError } from "./db/migrate.js";
import { DataDirInUseError } from "./db/open-database.js";
import { DomainError } from "./domain/kernel/errors.js";
import { startLauncher } from "./platform/launcher.js";

// V8 lets the old generation grow to up to 4× what survived the last full collection before the next one;
// under load that is ~100 MB of the main thread's heap, nearly all of it dead requests (about 30 MB survive).
// 1.5× keeps the peak ~50 MB lower; full collections come more often, at no measured cost in throughput
// (docs/performance.md, peak RSS). Set here, not on the command line, so that every way of starting the
// server (`npm start`, `billing serve`, the benchmarks) gets it; it also applies to the database's thread.
setFlagsFromString("--heap-growing-percent=50");

/** config → app → listen; SIGTERM/SIGINT → stop accepting, finish in-flight requests, close the database. */
async function main(): Promise<void> {
  const config = loadConfig();
  // The process that starts the readers' and documents' children, forked now while this one is small (launcher.ts).
  startLauncher();
  const app = await createApp(config);
  let address: string;
  try {
    address = await app.http.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close().catch(() => {});
    throw (error as NodeJS.ErrnoException).code === "EADDRINUSE" || (error as NodeJS.ErrnoException).code === "EACCES"
      ? new ConfigError(
          (error as NodeJS.ErrnoException).code === "EADDRINUSE"
            ? `port ${config.port} on ${config.host} is already in use (is the service already running?): stop that process, or set PORT to another port`
            : `port ${config.port} on ${config.host} may not be opened by this user: set PORT to a port above 1023`,
        )
      : error;
  }
  if (config.runWorker) app.startWorkers();
  app.logger.info({ url: address, storage: config.storage.kind }, `billing service listening on ${address}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, "shutting down");
    const force = setTimeout(() => {
      app.logger.error("shutdown took longer than 25 s; exiting");
      process.exit(1);
    }, 25_000);
    force.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (error) {
      app.logger.error({ err: error }, "error during shutdown");
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof DataDirInUseError ||
    error instanceof DomainError ||
    error instanceof AppliedMigrationChangedError
  ) {
    process.stderr.write(`cannot start: ${error.message}\n`);
  } else {
    process.stderr.write(
      `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
