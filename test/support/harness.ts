/**
 * Test harness: every database test runs once per engine. PGlite always; PostgreSQL when TEST_DATABASE_URL
 * is set (otherwise that suite is reported as skipped, not passed). Each suite gets a database of its own: a
 * copy of a database migrated once per test run (test-databases.ts), so that a suite pays for a copy, not for
 * PGlite's initdb and the migrations.
 */
import { randomBytes } from "node:crypto";
import { after, before, describe } from "node:test";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { createApp, type App } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config.js";
import { fixedClock, type Clock } from "../../src/domain/kernel/clock.js";
import { createMigratedTestDatabase, type EngineName, postgresSkip, type TestDatabase } from "./test-databases.js";

export {
  createMigratedTestDatabase,
  createTestDatabase,
  type EngineName,
  postgresSkip,
  type TestDatabase,
} from "./test-databases.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789abcdefghij";

/** A config as the service would load it, with test defaults and overrides. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    BILLING_DATA_DIR: "memory://",
    BILLING_ADMIN_TOKEN: ADMIN_TOKEN,
    BILLING_PUBLIC_URL: "http://localhost:8080",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    BILLING_RATE_LIMIT: "off", // suites make hundreds of requests a second with one key; rate-limit.test.ts sets its own
    ...overrides,
  });
}

export interface TestApp {
  app: App;
  clock: Clock & { set(date: Date): void; advance(ms: number): void };
  /** An HTTP call through fastify.inject; `key` adds `Authorization: Bearer`. */
  call(options: InjectOptions & { key?: string }): Promise<LightMyRequestResponse>;
  /** A new company with a full-access key (or the given scopes). */
  newCompany(options?: { scopes?: string[]; name?: string }): Promise<{ companyId: string; key: string }>;
}

/**
 * Declares `suite` once per engine, each with its own database and app. The callback receives a getter
 * because the app exists only once `before` has run.
 */
export function describeEachEngine(
  title: string,
  suite: (t: () => TestApp, engine: EngineName) => void,
  // `env` may be a function, read when the suite starts: settings known only then (a port a test server took).
  options: {
    env?: Record<string, string> | (() => Record<string, string>);
    clockStart?: Date;
    /** Settings the environment does not carry (the readers' budgets), changed on the loaded config. */
    configure?: (config: Config) => Config;
  } = {},
): void {
  for (const engine of ["pglite", "postgres"] as const) {
    describe(`${title} [${engine}]`, { skip: postgresSkip(engine) }, () => {
      let database: TestDatabase;
      let current: TestApp;
      before(async () => {
        database = await createMigratedTestDatabase(engine);
        const clock = fixedClock(options.clockStart ?? new Date("2026-03-15T12:00:00.000Z"));
        const env = typeof options.env === "function" ? options.env() : options.env;
        const config = testConfig(env);
        const app = await createApp(options.configure ? options.configure(config) : config, {
          db: database.db,
          clock,
        });
        current = {
          app,
          clock,
          call: ({ key, headers, ...rest }) =>
            app.http.inject({
              ...rest,
              headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers ?? {}) },
            }),
          async newCompany({ scopes, name } = {}) {
            const company = await app.services.access.createCompany(
              name ?? `Company ${randomBytes(3).toString("hex")}`,
            );
            const key = await app.services.access.createApiKey(company.id, { scopes });
            return { companyId: company.id, key: key.key };
          },
        };
      });
      after(async () => {
        await current?.app.close();
        await database?.drop();
      });
      suite(() => current, engine);
    });
  }
}
