import { parseArgs } from "node:util";
import { openServices } from "../../compose.js";
import { loadConfig } from "../../config.js";
import { DataDirInUseError } from "../../db/open-database.js";
import { DomainError } from "../../domain/kernel/errors.js";
import type { Services } from "../../domain/services.js";
import { toHttpError } from "../http/error-handler.js";
import { stringifyJson } from "../../platform/exact-json.js";

const USAGE = `Usage: billing <command>

  billing serve                                         start the service (same as npm start)
  billing worker                                        deliver webhooks and issue due invoices, beside other service processes
  billing companies create --name NAME
  billing api-keys create --company ID [--scopes a,b] [--name N] [--expires-at ISO]
  billing api-keys revoke ID
  billing users create --company ID --email E --password P
  billing verify [--company ID]                         check the stored data's invariants; exit 1 if any is broken

Works on the configured database directly (DATABASE_URL, or the embedded one in BILLING_DATA_DIR).
The embedded database is single-process: stop the server first, or use the admin API.`;

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
      scopes: f.scopes?.split(",").map((x) => x.trim()).filter(Boolean),
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

/** `billing worker`: the webhook delivery and invoice workers as a process of their own (no HTTP listener). */
async function runWorker(): Promise<void> {
  const { createApp } = await import("../../app.js");
  const app = await createApp(loadConfig());
  app.startWorkers();
  app.logger.info("webhook delivery and invoice workers started");
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
