/**
 * The `billing` command line (README.md, "Operators"), run as operators run it: `node bin/billing.js ...`
 * against a fresh embedded database in a temporary folder (runBilling, test/support/service-process.ts).
 * bin/billing.js runs the compiled dist/, so the suite builds it first when it is missing or older than the
 * sources (ensureCliBuilt).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { ALL_SCOPE_NAMES, UUID_RE } from "../support/api.js";
import { type CliRun, ensureCliBuilt, runBilling } from "../support/service-process.js";

let dataDir: string;

/** `billing ...args` on this suite's data folder (runBilling: a clean environment, 60 s at most). */
function billing(args: string[]): Promise<CliRun> {
  return runBilling(args, { BILLING_DATA_DIR: dataDir });
}

/** Runs a command that must succeed and returns the JSON it printed. */
async function billingJson(args: string[]): Promise<Record<string, any>> {
  const run = await billing(args);
  assert.equal(run.code, 0, `billing ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Runs a command that must fail with `code` and print a JSON error on stderr; returns that error. */
async function billingFails(args: string[], code: number): Promise<CliRun> {
  const run = await billing(args);
  assert.equal(
    run.code,
    code,
    `billing ${args.join(" ")} exited ${run.code} (stdout ${run.stdout}, stderr ${run.stderr})`,
  );
  assert.equal(run.stdout.includes('"object"'), false, "nothing was printed as a result");
  return run;
}

describe("billing command line", () => {
  const created = { companies: [] as string[], liveKey: "", revokedKey: "", companyId: "" };

  before(() => {
    ensureCliBuilt();
    dataDir = mkdtempSync(join(tmpdir(), "billing-cli-test-"));
  });

  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("checks the stored data with `verify` and exits 0 when nothing is wrong", async () => {
    const report = await billingJson(["verify"]);
    assert.equal(report.ok, true);
    assert.deepEqual(report.problems, []);
    assert.equal(typeof report.events, "number");
  });

  it("creates a company with `companies create --name` and prints it as JSON", async () => {
    const company = await billingJson(["companies", "create", "--name", "Cli Corp"]);
    assert.match(company.id, UUID_RE);
    assert.deepEqual(company, { object: "company", id: company.id, name: "Cli Corp", created_at: company.created_at });
    assert.ok(Math.abs(Date.parse(company.created_at) - Date.now()) < 5 * 60_000, "created_at is the current time");
    created.companies.push("Cli Corp");
    created.companyId = company.id;
  });

  it("creates a full-access key with `api-keys create --company` and prints the key once", async () => {
    const key = await billingJson(["api-keys", "create", "--company", created.companyId]);
    assert.equal(key.object, "api_key");
    assert.match(key.id, UUID_RE);
    assert.equal(typeof key.key, "string");
    assert.ok(key.key.length >= 32);
    assert.deepEqual([...key.scopes].sort(), [...ALL_SCOPE_NAMES].sort());
    assert.equal(key.name, null);
    assert.equal(key.expires_at, null);
    created.liveKey = key.key;
  });

  it("creates a key limited to `--scopes` with its `--name`", async () => {
    const key = await billingJson([
      "api-keys",
      "create",
      "--company",
      created.companyId,
      "--scopes",
      "customers:read, usage:write",
      "--name",
      "ingest",
    ]);
    assert.deepEqual(key.scopes, ["customers:read", "usage:write"]);
    assert.equal(key.name, "ingest");
  });

  it("creates a key with `--expires-at` in the future", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const key = await billingJson(["api-keys", "create", "--company", created.companyId, "--expires-at", expiresAt]);
    assert.equal(key.expires_at, expiresAt);
  });

  it("revokes a key with `api-keys revoke ID` and prints it with revoked_at and without the secret", async () => {
    const key = await billingJson(["api-keys", "create", "--company", created.companyId, "--name", "short-lived"]);
    const revoked = await billingJson(["api-keys", "revoke", key.id]);
    assert.equal(revoked.id, key.id);
    assert.equal(revoked.object, "api_key");
    assert.ok(!Number.isNaN(Date.parse(revoked.revoked_at)));
    assert.equal(revoked.key, undefined);
    created.revokedKey = key.key;
  });

  it("creates a dashboard user with `users create` and prints exactly object, id and email", async () => {
    const user = await billingJson([
      "users",
      "create",
      "--company",
      created.companyId,
      "--email",
      "Ops@Cli.Example",
      "--password",
      "a long password",
    ]);
    assert.match(user.id, UUID_RE);
    assert.deepEqual(user, { object: "user", id: user.id, email: "ops@cli.example" });
  });

  it("exits 1 with a JSON error on stderr when the user's email is taken", async () => {
    const run = await billingFails(
      [
        "users",
        "create",
        "--company",
        created.companyId,
        "--email",
        "ops@cli.example",
        "--password",
        "another password",
      ],
      1,
    );
    const error = JSON.parse(run.stderr);
    assert.equal(typeof error.error, "string");
    assert.equal(error.code, "email_taken");
  });

  for (const [what, args] of [
    ["an unknown command", ["frobnicate"]],
    ["an unknown sub-command", ["companies", "delete", "--name", "x"]],
    ["no command at all", []],
    ["a missing --name", ["companies", "create"]],
    ["an unknown option", ["companies", "create", "--name", "X", "--colour", "red"]],
    ["an option without its value", ["companies", "create", "--name"]],
    ["`api-keys revoke` without an id", ["api-keys", "revoke"]],
    ["`users create` without --password", ["users", "create", "--company", randomUUID(), "--email", "a@b.example"]],
  ] as const) {
    it(`exits 2 and shows the usage for ${what}`, async () => {
      const run = await billing([...args]);
      assert.equal(run.code, 2, `stderr: ${run.stderr}`);
      assert.match(run.stdout + run.stderr, /Usage: billing/);
      assert.equal(run.stdout.includes('"object"'), false);
    });
  }

  it("exits 0 and prints the usage for --help", async () => {
    const run = await billing(["--help"]);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /Usage: billing/);
  });

  for (const [what, args, code] of [
    [
      "creating a key for a company that does not exist",
      () => ["api-keys", "create", "--company", randomUUID()],
      "not_found",
    ],
    [
      "an unknown scope",
      () => ["api-keys", "create", "--company", created.companyId, "--scopes", "customers:read,root"],
      "invalid_scope",
    ],
    [
      "an --expires-at that is not a date",
      () => ["api-keys", "create", "--company", created.companyId, "--expires-at", "garbage"],
      "invalid_expires_at",
    ],
    [
      "an --expires-at in the past",
      () => ["api-keys", "create", "--company", created.companyId, "--expires-at", "2001-01-01T00:00:00Z"],
      "invalid_expires_at",
    ],
    ["revoking a key that does not exist", () => ["api-keys", "revoke", randomUUID()], "not_found"],
    ["a blank company name", () => ["companies", "create", "--name", "   "], "invalid_request"],
    [
      "a malformed user email",
      () => [
        "users",
        "create",
        "--company",
        created.companyId,
        "--email",
        "not-an-email",
        "--password",
        "a long password",
      ],
      "invalid_request",
    ],
    [
      "a user password shorter than 8 characters",
      () => ["users", "create", "--company", created.companyId, "--email", "short@cli.example", "--password", "1234"],
      "invalid_request",
    ],
  ] as const) {
    it(`exits 1 with a JSON error on stderr for ${what}`, async () => {
      const run = await billingFails([...args()], 1);
      const error = JSON.parse(run.stderr);
      assert.equal(typeof error.error, "string");
      assert.equal(error.code, code);
    });
  }

  it("leaves keys that work against the same database, revoked keys rejected, and nothing from the failed commands", async () => {
    const app = await createApp(
      loadConfig({ BILLING_DATA_DIR: dataDir, LOG_LEVEL: "silent", BILLING_PUBLIC_URL: "http://billing.test" }),
    );
    try {
      const made = await app.http.inject({
        method: "POST",
        url: "/v1/billing/customers",
        headers: { authorization: `Bearer ${created.liveKey}` },
        payload: { name: "Made with a CLI key" },
      });
      assert.equal(made.statusCode, 201, made.body);
      const revoked = await app.http.inject({
        method: "GET",
        url: "/v1/billing/customers",
        headers: { authorization: `Bearer ${created.revokedKey}` },
      });
      assert.equal(revoked.statusCode, 401);
      assert.equal(revoked.json().error, "Invalid API key");

      const companies = await app.db.query<{ name: string }>("SELECT name FROM companies ORDER BY name");
      assert.deepEqual(
        companies.rows.map((r) => r.name),
        created.companies,
      );
      const users = await app.db.query<{ email: string }>("SELECT email FROM users ORDER BY email");
      assert.deepEqual(
        users.rows.map((r) => r.email),
        ["ops@cli.example"],
      );
      assert.ok(await app.services.access.verifyUserPassword("ops@cli.example", "a long password"));
    } finally {
      await app.close();
    }
  });
});
