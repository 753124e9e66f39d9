/**
 * One tenancy guard (docs/architecture.md, "Tenancy"): company-scoped data is reached only through a CompanyScope
 * (src/db/company-scope.ts), which binds the company as `$1` of every statement. A statement that forgets the
 * company fails loudly, before it is sent and, were it sent, in the database itself, on both engines; and every
 * repository function takes a scope, but for a short list of lookups that must work before a company is known
 * or across all companies, each with its reason.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CompanyScopeError, forCompany } from "../../src/db/company-scope.js";
import { companyWithContract, submitAccepted, usageEvent } from "../support/api.js";
import { describeEachEngine } from "../support/harness.js";
import { DOMAIN_DIR as DOMAIN, repositoryFiles } from "../support/repositories.js";

/** Repository functions that may not take a company scope, and why. Nothing else may be added without one. */
const CROSS_COMPANY: Record<string, string> = {
  // Signing in: the company is what these lookups find out.
  "account-repository.ts#insertCompany": "creates the company",
  "access-repository.ts#findCompanyById": "the company itself",
  "access-repository.ts#findOldestCompanyByName": "bootstrap finds its company by name",
  "access-repository.ts#insertApiKey": "the admin API and bootstrap create keys for a company they name",
  "access-repository.ts#findApiKeyByHash": "authentication: the key tells the company",
  "access-repository.ts#revokeApiKey": "the admin API revokes a key by id",
  "access-repository.ts#touchApiKey": "authentication records a key's use by id",
  "access-repository.ts#insertUser": "sign-up creates the user with its new company",
  "access-repository.ts#findUserByEmail": "sign-in: the user tells the company",
  "access-repository.ts#lockBootstrap": "an advisory lock, no rows",
  "access-repository.ts#setUserPassword": "bootstrap sets its user's password by user id, the user found by email",
  "access-repository.ts#insertSession": "sign-in: the session is the user's",
  "access-repository.ts#findSessionByHash": "the dashboard: the session tells the company",
  "access-repository.ts#endSession": "sign-out by session token",
  "access-repository.ts#deleteStaleSessions": "by user",
  "oauth-repository.ts#*": "OAuth clients, codes and tokens belong to no company until the token tells it",
  "contract-repository.ts#findContractByPdfToken": "the agreement's public link: its secret token names the contract",
  "webhook-repository.ts#claimDueDeliveries":
    "the delivery worker serves every company; each claimed row carries its own",
  "webhook-repository.ts#startClaimedAttempt": "the worker, by the claimed row's company and id",
  "webhook-repository.ts#recordAttempt": "the worker, by the claimed row's company and id",
  "invariants-repository.ts#*": "billing verify, an operator's check over one company or all",
  "credit-repository.ts#findExpiredGrants":
    "the invoice worker releases expired grants of every company; each row names its own, expired through a scope",
  "invoice-message-repository.ts#queueDueReminders":
    "the mail worker queues the reminders of every company; each row names its own",
  "invoice-message-repository.ts#claimDueMessages":
    "the mail worker serves every company; each claimed row carries its own",
  "invoice-message-repository.ts#recordMessageAttempt": "the mail worker, by the claimed row's company and id",
  "invoice-message-repository.ts#deferMessage":
    "the mail worker, by the claimed row's company and id: gives back an attempt the document queue refused",
  "invoice-message-repository.ts#findInvoiceByHostedToken":
    "the hosted invoice page: its secret token (by its SHA-256) names the company and the invoice",
  "invoice-repository.ts#findDraftsDue":
    "the invoice worker serves every company; each row names its own, issued through a scope",
};

function repositoryFunctions(): { key: string; firstParameter: string }[] {
  const found: { key: string; firstParameter: string }[] = [];
  for (const file of repositoryFiles()) {
    for (const m of file.source.matchAll(/^export (?:async )?function (\w+)\(\s*(\w+)?(?::\s*([\w.]+))?/gm)) {
      found.push({ key: `${file.name}#${m[1]}`, firstParameter: m[3] ?? "(none)" });
    }
  }
  return found;
}

describe("tenancy guard: every repository function of company data takes a CompanyScope", () => {
  const functions = repositoryFunctions();

  it("finds the repository functions", () => {
    assert.ok(functions.length > 60, `${functions.length} functions found`);
  });

  it("takes a CompanyScope first, unless listed with its reason", () => {
    const unscoped = functions.filter((f) => f.firstParameter !== "CompanyScope");
    const unexplained = unscoped.filter((f) => !CROSS_COMPANY[f.key] && !CROSS_COMPANY[f.key.replace(/#.*/, "#*")]);
    assert.deepEqual(
      unexplained.map((f) => `${f.key}(${f.firstParameter})`),
      [],
    );
  });

  it("lists no exception that no longer exists or that takes a scope after all", () => {
    const byKey = new Map(functions.map((f) => [f.key, f]));
    for (const key of Object.keys(CROSS_COMPANY)) {
      if (key.endsWith("#*")) {
        assert.ok(
          functions.some((f) => f.key.startsWith(key.slice(0, -1))),
          `${key}: no such file`,
        );
        continue;
      }
      const f = byKey.get(key);
      assert.ok(f, `${key}: no such function`);
      assert.notEqual(f.firstParameter, "CompanyScope", `${key} takes a scope: remove the exception`);
    }
  });

  it("chooses the company in one place: no service calls forCompany, only kernel/tenancy.ts opens a company's data", () => {
    const callers: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
          if (/\bforCompany\(/.test(readFileSync(path, "utf8"))) callers.push(path.slice(DOMAIN.length + 1));
        }
      }
    };
    walk(DOMAIN);
    assert.deepEqual(callers, ["kernel/tenancy.ts"]);
  });

  it("refuses a scope without a company id before any statement", () => {
    const db = { query: async () => assert.fail("sent") } as never;
    for (const bad of [undefined, "", "not-a-uuid", null]) {
      assert.throws(() => forCompany(db, bad as never), CompanyScopeError);
    }
  });
});

describeEachEngine("tenancy guard on the database", (t) => {
  it("refuses a company-scoped statement that does not use the company, before sending it", async () => {
    const { companyId } = await companyWithContract(t());
    const scope = forCompany(t().app.db, companyId);
    await assert.rejects(
      scope.query("SELECT count(*) FROM invoices"),
      (e: Error) => e instanceof CompanyScopeError && /must filter by the company \(\$1\)/.test(e.message),
    );
    await assert.rejects(scope.query("SELECT count(*) FROM usage_events WHERE id = $2", ["x"]), CompanyScopeError);
    // $10 is not $1.
    await assert.rejects(scope.query("SELECT $10::int", [2, 3, 4, 5, 6, 7, 8, 9, 10]), CompanyScopeError);
  });

  it("is backed by the engine: a statement sent with the company but without $1 fails in the database too", async () => {
    const { companyId } = await companyWithContract(t());
    // What the scope would send, sent around it: the company as a parameter the statement never uses.
    await assert.rejects(
      t().app.db.query("SELECT count(*) FROM invoices", [companyId]),
      /bind message supplies 1 parameters, but prepared statement "" requires 0/,
    );
    await assert.rejects(
      t().app.db.query("SELECT count(*) FROM usage_events WHERE id = $2", [companyId, "x"]),
      /could not determine data type of parameter \$1/,
    );
  });

  it("sees one company's rows only, through every scope", async () => {
    const a = await companyWithContract(t());
    const b = await companyWithContract(t());
    await submitAccepted(t(), a.key, [usageEvent(a.contract.id)]);
    const count = async (companyId: string) =>
      (
        await forCompany(t().app.db, companyId).query<{ n: string }>(
          "SELECT count(*)::text AS n FROM usage_events WHERE company_id = $1",
        )
      ).rows[0]!.n;
    assert.equal(await count(a.companyId), "1");
    assert.equal(await count(b.companyId), "0");
  });
});
