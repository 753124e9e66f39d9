import { parseArgs } from "node:util";
import { openServices } from "../../compose.js";
import { loadConfig } from "../../config.js";
import { DataDirInUseError } from "../../db/open-database.js";
import { DomainError } from "../../domain/kernel/errors.js";
import type { Services } from "../../domain/services.js";
import { toHttpError } from "../http/error-handler.js";
import { stringifyJson } from "../../platform/exact-json.js";
import { ApiAnswerError, sendUsage, UsageFileError } from "./usage-send.js";

const USAGE = `Usage: billing <command>

  billing serve                                         start the service (same as npm start)
  billing worker                                        deliver webhooks, issue due invoices and email them, beside other service processes
  billing companies create --name NAME
  billing api-keys create --company ID [--scopes a,b] [--name N] [--expires-at ISO]
  billing api-keys revoke ID
  billing users create --company ID --email E --password P
  billing verify [--company ID]                         check the stored data's invariants; exit 1 if any is broken
  billing usage send FILE [--url URL]                   send usage events (JSON Lines, or a JSON array; - for stdin)
                                                        to a running service with the API key in BILLING_API_KEY;
                                                        exit 1 if any event is rejected

All but \`usage send\` work on the configured database directly (DATABASE_URL, or the embedded one in
BILLING_DATA_DIR). The embedded database is single-process: stop the server first, or use the admin API.
\`usage send\` calls the API (default URL http://127.0.0.1:$PORT, or BILLING_URL) and works beside a running server.`;

class UsageError extends Error {}

type Flags = Record<string, string | undefined>;

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

const commands: Record<string, (services: Services, flags: Flags, positional: string[]) => Promise<unknown>> = {
  "companies create": (s, f) => s.access.createCompany(required(f, "name")),
  "api-keys create": (s, f) =>
    s.access.createApiKey(required(f, "company"), {
      name: f.name,
      scopes: f.scopes
        ?.split(",")
        .map((x) => x.trim())
        .filter(Boolean),
      expiresAt: f["expires-at"] ? new Date(f["expires-at"]) : undefined,
    }),
  "api-keys revoke": (s, _f, pos) => {
    if (!pos[0]) throw new UsageError("api-keys revoke needs the key id");
    return s.access.revokeApiKey(pos[0]);
  },
  verify: async (s, f) => {
    const report = await s.invariants.verify(f.company ?? null);
    if (!report.ok) process.exitCode = 1;
    return report;
  },
  "users create": async (s, f) => {
    const user = await s.access.createUser(required(f, "company"), required(f, "email"), required(f, "password"));
    return { object: user.object, id: user.id, email: user.email };
  },
};

export async function runCli(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: "string" },
      company: { type: "string" },
      scopes: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      "expires-at": { type: "string" },
      url: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return positionals.length === 0 && !values.help ? 2 : 0;
  }
  if (positionals[0] === "serve") {
    await import("../../main.js");
    return -1; // keeps running
  }
  if (positionals[0] === "worker") {
    await runWorker();
    return -1; // keeps running until SIGTERM
  }
  if (positionals[0] === "usage" && positionals[1] === "send") return runUsageSend(positionals[2], values.url);
  const name = positionals[0] === "verify" ? "verify" : positionals.slice(0, 2).join(" ");
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command '${positionals.join(" ")}'`);

  const config = loadConfig();
  const core = await openServices(config);
  try {
    const result = await command(core.services, values as Flags, positionals.slice(name === "verify" ? 1 : 2));
    process.stdout.write(`${stringifyJson(result, 2)}\n`);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } finally {
    await core.close();
  }
}

/** `billing usage send FILE`: through the API (usage-send.ts), never the database. */
async function runUsageSend(file: string | undefined, url: string | undefined): Promise<number> {
  if (!file) throw new UsageError("usage send needs a file (or - for stdin)");
  const apiKey = process.env.BILLING_API_KEY;
  if (!apiKey)
    throw new UsageError(
      "usage send needs the API key in BILLING_API_KEY (not on the command line, where other users' ps would show it)",
    );
  const baseUrl = url ?? process.env.BILLING_URL ?? `http://127.0.0.1:${process.env.PORT || 8080}`;
  try {
    const report = await sendUsage({ file, baseUrl, apiKey });
    process.stdout.write(`${stringifyJson(report, 2)}\n`);
    return report.rejected > 0 ? 1 : 0;
  } catch (error) {
    if (error instanceof ApiAnswerError) {
      process.stderr.write(
        `${JSON.stringify({ status: error.status, code: error.code, error: error.message, sent_before: error.sentSoFar.sent })}\n`,
      );
      return 1;
    }
    if (error instanceof UsageFileError || (error as NodeJS.ErrnoException).code === "ENOENT") {
      process.stderr.write(`cannot read ${file}: ${(error as Error).message}\n`);
      return 1;
    }
    if (error instanceof TypeError && /fetch failed/.test(error.message)) {
      process.stderr.write(
        `cannot reach the service at ${baseUrl}: ${String((error as { cause?: unknown }).cause ?? error.message)}\n`,
      );
      return 1;
    }
    throw error;
  }
}

/** `billing worker`: the webhook delivery and invoice workers as a process of their own (no HTTP listener). */
async function runWorker(): Promise<void> {
  const { createApp } = await import("../../app.js");
  const app = await createApp(loadConfig());
  app.startWorkers();
  app.logger.info("webhook delivery, invoice and mail workers started");
  const stop = () => {
    app.logger.info("worker stopping: finishing the attempts in flight");
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
      process.exitCode = 2;
    } else if (error instanceof DataDirInUseError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    } else if (error instanceof DomainError) {
      process.stderr.write(`${JSON.stringify(toHttpError(error).body)}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
