import type { StorageConfig } from "./db/open-database.js";
import { DEFAULT_READING_BUDGETS, type ReadingBudgets } from "./domain/contracts/agreement-upload.js";
import { parseTrustedProxies } from "./platform/client-address.js";
import { parseRateLimit, type RateLimit } from "./platform/rate-limiter.js";

/**
 * Everything the service reads from its environment. The only reader of process.env (docs/architecture.md,
 * "Where things live"; every setting: docs/operations.md, "Configuration").
 */
export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  adminToken: string | undefined;
  bootstrap: { companyName: string; apiKey: string; user?: { email: string; password: string } } | undefined;
  storage: StorageConfig;
  webhooks: {
    retryScheduleMs: number[];
    timeoutMs: number;
    allowPrivate: boolean;
    pollIntervalMs: number;
    /** How long a worker holds a claimed delivery (BILLING_WEBHOOK_LEASE); unset: timeout*3+30s. */
    leaseMs: number | undefined;
  };
  /** Whether this process runs the webhook delivery worker beside the API (BILLING_WORKER, default on). */
  runWorker: boolean;
  /** BILLING_INVOICE_GRACE: drafts are issued this long after their period ends; null: by hand only. */
  invoiceGraceMs: number | null;
  logLevel: string;
  /** Requests per API key and process (BILLING_RATE_LIMIT, default 100/s; off disables). */
  rateLimit: RateLimit | null;
  /**
   * Failed authentications allowed per client address, minute and process before 429 (BILLING_AUTH_FAILURES,
   * default 60; off: null), and IPV4_NETWORK_FACTOR times as many per IPv4 /24 (platform/failure-throttle.ts).
   * Independent of rateLimit: it is a guard against guessing, not a throughput limit.
   */
  authFailuresPerMinute: number | null;
  /**
   * The proxies whose X-Forwarded-For names the client (BILLING_TRUSTED_PROXIES), as `address/prefix` ranges;
   * empty: the TCP peer is the client (platform/client-address.ts).
   */
  trustedProxies: string[];
  /** How long a client has to send a whole request (BILLING_REQUEST_TIMEOUT, default 30s); then 408. */
  requestTimeoutMs: number;
  /**
   * How usage is written, per company and process: lanes (BILLING_INGEST_LANES, default 2), each with its
   * own calls in flight (BILLING_INGEST_CALLS_IN_FLIGHT, default 1).
   */
  ingest: { lanes: number; callsInFlight: number };
  /** Invoices by email (docs/operations.md, "Email"); `smtpUrl` null: no email is sent, the message log says so. */
  mail: MailConfig;
  /**
   * What reading an uploaded agreement may take (docs/decisions.md, "Documents and logos" and OCR): CPU-time
   * budgets with wall-clock backstops, passed to the readers by the composition rather than fixed inside them, so
   * that a deployment (or a test on a loaded machine) can give them more. Not read from the environment.
   */
  readings: ReadingBudgets;
}

export interface MailConfig {
  /** BILLING_SMTP_URL: `smtp://user:pass@host:587` or `smtps://…`; unset: null. */
  smtpUrl: string | null;
  /** BILLING_MAIL_FROM: the sender, e.g. `Acme Billing <billing@acme.example>`. */
  from: string;
  /** BILLING_SMTP_TIMEOUT (default 30s): each stage of a conversation with the SMTP server. */
  timeoutMs: number;
  /** BILLING_MAIL_RETRY_SCHEDULE (default 1m,5m,30m,2h,6h): the waits before each retry; attempts = waits + 1. */
  retryScheduleMs: number[];
  /** BILLING_MAIL_POLL_INTERVAL (default 5s): how often the mail worker looks for messages and reminders due. */
  pollIntervalMs: number;
}

/** The email settings: a URL the SMTP client takes (smtp: or smtps:), and a sender whenever there is one. */
function loadMailConfig(env: NodeJS.ProcessEnv): MailConfig {
  const url = env.BILLING_SMTP_URL?.trim() || null;
  if (url !== null) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError("BILLING_SMTP_URL is not a URL: use smtp://user:password@host:587 or smtps://…:465");
    }
    if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:")
      throw new ConfigError(`BILLING_SMTP_URL must start with smtp:// or smtps://, not ${parsed.protocol}//`);
  }
  const from = env.BILLING_MAIL_FROM?.trim() ?? "";
  if (url !== null && from === "")
    throw new ConfigError("BILLING_SMTP_URL needs BILLING_MAIL_FROM: the address invoices are sent from");
  if (/[\r\n]/.test(from)) throw new ConfigError("BILLING_MAIL_FROM must be one line");
  return {
    smtpUrl: url,
    from,
    timeoutMs: parseDuration(env.BILLING_SMTP_TIMEOUT ?? "30s"),
    retryScheduleMs: parseSchedule(env.BILLING_MAIL_RETRY_SCHEDULE ?? "1m,5m,30m,2h,6h"),
    pollIntervalMs: parseDuration(env.BILLING_MAIL_POLL_INTERVAL ?? "5s"),
  };
}

export class ConfigError extends Error {}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "1m" → 60000. Units ms, s, m, h, d. */
function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match) throw new ConfigError(`Not a duration: '${text}' (use a number with ms, s, m, h or d)`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}

export function parseSchedule(text: string): number[] {
  if (text.trim() === "") return [];
  return text.split(",").map(parseDuration);
}

function parseBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, not '${value}'`);
}

/** An integer setting from 1 to 64 (concurrency knobs); empty or unset gives the default. */
function parseSmallInteger(name: string, value: string | undefined, fallback: number): number {
  const parsed = Number(value || fallback);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 64)
    throw new ConfigError(`${name} must be an integer from 1 to 64, not '${value}'`);
  return parsed;
}

const MIN_ADMIN_TOKEN_LENGTH = 32;
const MIN_ADMIN_TOKEN_DISTINCT = 16;
/**
 * A token written in hexadecimal has only 16 characters to draw from, so a random one often misses one: one
 * in four of `openssl rand -hex 32` (which the docs long recommended), most of `randomBytes(16).toString("hex")`
 * (32 characters, the least the service took). Such a token needs 10 different digits, which a random one of 32
 * hex digits or more misses about once in 15,000; 32 times one digit, or two alternating, are still refused.
 */
const MIN_HEX_ADMIN_TOKEN_DISTINCT = 10;

/**
 * Why an admin token is too weak to start with, or undefined. A short token is guessable; so is a long one made
 * of a few characters repeated (32 times "a"); whitespace cannot travel in `Authorization: Bearer <token>`, so a
 * token holding some would leave the admin API unusable. The message never shows the token.
 */
function weakAdminToken(token: string): string | undefined {
  const characters = [...token];
  if (/\s/u.test(token)) return "must not contain spaces or other whitespace";
  if (characters.length < MIN_ADMIN_TOKEN_LENGTH)
    return `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (it has ${characters.length})`;
  const distinct = new Set(characters).size;
  const hex = /^[0-9a-f]+$/i.test(token);
  const needed = hex ? MIN_HEX_ADMIN_TOKEN_DISTINCT : MIN_ADMIN_TOKEN_DISTINCT;
  if (distinct < needed) {
    return `must have at least ${needed} different characters${needed === MIN_HEX_ADMIN_TOKEN_DISTINCT ? " (of a hexadecimal token's 16)" : ""} (it has ${distinct})`;
  }
  return undefined;
}
const MAX_AUTH_FAILURES = 1_000_000;

/** BILLING_AUTH_FAILURES: a whole number of failures per address and minute, or off (null). */
function parseAuthFailures(value: string | undefined): number | null {
  const text = (value ?? "").trim();
  if (text === "") return 60;
  if (/^off$/i.test(text)) return null;
  const parsed = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > MAX_AUTH_FAILURES) {
    throw new ConfigError(
      `BILLING_AUTH_FAILURES must be a whole number from 1 to ${MAX_AUTH_FAILURES} (failed authentications per client address and minute) or off, not '${value}'`,
    );
  }
  return parsed;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const portText = env.PORT ?? "8080";
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be 0..65535, not '${portText}'`);
  const host = env.HOST || "127.0.0.1";

  const databaseUrl = env.DATABASE_URL;
  const storage: StorageConfig = databaseUrl
    ? {
        kind: "postgres",
        url: databaseUrl,
        poolSize: env.DATABASE_POOL_SIZE ? Number(env.DATABASE_POOL_SIZE) : undefined,
      }
    : {
        kind: "pglite",
        dataDir: env.BILLING_DATA_DIR || "./data",
        runOn: env.BILLING_PGLITE_THREAD === "off" ? "in-process" : "thread",
        ...(env.BILLING_PGLITE_SHARED_BUFFERS ? { sharedBuffers: env.BILLING_PGLITE_SHARED_BUFFERS } : {}),
      };

  const bootstrapCompany = env.BILLING_BOOTSTRAP_COMPANY;
  const bootstrapKey = env.BILLING_BOOTSTRAP_API_KEY;
  if (Boolean(bootstrapCompany) !== Boolean(bootstrapKey)) {
    throw new ConfigError("Set both BILLING_BOOTSTRAP_COMPANY and BILLING_BOOTSTRAP_API_KEY, or neither");
  }

  // The dashboard user of the bootstrap company: both or neither, and only with the company and key.
  const bootstrapEmail = env.BILLING_BOOTSTRAP_EMAIL;
  const bootstrapPassword = env.BILLING_BOOTSTRAP_PASSWORD;
  if (Boolean(bootstrapEmail) !== Boolean(bootstrapPassword)) {
    throw new ConfigError("Set both BILLING_BOOTSTRAP_EMAIL and BILLING_BOOTSTRAP_PASSWORD, or neither");
  }
  if (bootstrapEmail && !(bootstrapCompany && bootstrapKey)) {
    throw new ConfigError(
      "BILLING_BOOTSTRAP_EMAIL and BILLING_BOOTSTRAP_PASSWORD need BILLING_BOOTSTRAP_COMPANY and BILLING_BOOTSTRAP_API_KEY: the user signs in to that company",
    );
  }
  if (bootstrapPassword && (bootstrapPassword.length < 8 || bootstrapPassword.length > 1024)) {
    throw new ConfigError("BILLING_BOOTSTRAP_PASSWORD must be 8 to 1024 characters long");
  }

  // An empty value means unset (no admin API).
  const adminToken = env.BILLING_ADMIN_TOKEN || undefined;
  const adminTokenProblem = adminToken === undefined ? undefined : weakAdminToken(adminToken);
  if (adminTokenProblem)
    throw new ConfigError(
      `BILLING_ADMIN_TOKEN ${adminTokenProblem}: use a long random value, e.g. from \`openssl rand -base64 32\``,
    );

  const timeoutMs = parseDuration(env.BILLING_WEBHOOK_TIMEOUT ?? "10s");
  const leaseMs = env.BILLING_WEBHOOK_LEASE ? parseDuration(env.BILLING_WEBHOOK_LEASE) : undefined;
  // A lease that can run out while its attempt is still waiting for the receiver would let a second worker
  // send the same attempt again on purpose.
  if (leaseMs !== undefined && leaseMs <= timeoutMs) {
    throw new ConfigError(
      `BILLING_WEBHOOK_LEASE (${env.BILLING_WEBHOOK_LEASE}) must be longer than BILLING_WEBHOOK_TIMEOUT`,
    );
  }

  return {
    readings: DEFAULT_READING_BUDGETS,
    port,
    host,
    // PORT=0 picks a free port; main.ts fills in the real one once listening.
    publicUrl: (env.BILLING_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ""),
    adminToken,
    bootstrap:
      bootstrapCompany && bootstrapKey
        ? {
            companyName: bootstrapCompany,
            apiKey: bootstrapKey,
            ...(bootstrapEmail && bootstrapPassword
              ? { user: { email: bootstrapEmail, password: bootstrapPassword } }
              : {}),
          }
        : undefined,
    storage,
    webhooks: {
      retryScheduleMs: parseSchedule(env.BILLING_WEBHOOK_RETRY_SCHEDULE ?? "1m,5m,30m,2h,6h,12h,24h"),
      timeoutMs,
      allowPrivate: parseBoolean("BILLING_WEBHOOK_ALLOW_PRIVATE", env.BILLING_WEBHOOK_ALLOW_PRIVATE, false),
      pollIntervalMs: parseDuration(env.BILLING_WEBHOOK_POLL_INTERVAL ?? "1s"),
      leaseMs,
    },
    runWorker: parseBoolean("BILLING_WORKER", env.BILLING_WORKER, true),
    // How long after its billing period ends the worker issues a draft (docs/operations.md); off: by hand only.
    invoiceGraceMs: (() => {
      const text = env.BILLING_INVOICE_GRACE || "3d";
      if (text.trim() === "off") return null;
      try {
        return parseDuration(text);
      } catch (error) {
        throw new ConfigError(`BILLING_INVOICE_GRACE: ${(error as Error).message}, or off`);
      }
    })(),
    requestTimeoutMs: parseDuration(env.BILLING_REQUEST_TIMEOUT ?? "30s"),
    ingest: {
      lanes: parseSmallInteger("BILLING_INGEST_LANES", env.BILLING_INGEST_LANES, 2),
      callsInFlight: parseSmallInteger("BILLING_INGEST_CALLS_IN_FLIGHT", env.BILLING_INGEST_CALLS_IN_FLIGHT, 1),
    },
    mail: loadMailConfig(env),
    logLevel: env.LOG_LEVEL || "info",
    rateLimit: (() => {
      try {
        return parseRateLimit(env.BILLING_RATE_LIMIT ?? "100/s");
      } catch (error) {
        throw new ConfigError(`BILLING_RATE_LIMIT: ${(error as Error).message}`);
      }
    })(),
    authFailuresPerMinute: parseAuthFailures(env.BILLING_AUTH_FAILURES),
    trustedProxies: (() => {
      try {
        return parseTrustedProxies(env.BILLING_TRUSTED_PROXIES ?? "");
      } catch (error) {
        throw new ConfigError(
          `BILLING_TRUSTED_PROXIES: ${(error as Error).message}; give proxy addresses or ranges separated by commas, or leave it empty to trust none`,
        );
      }
    })(),
  };
}
