import { forCompany } from "../../db/company-scope.js";
import { randomBytes } from "node:crypto";
import type { Database, Tx } from "../../db/database.js";
import { findCompanyById } from "../access/access-repository.js";
import { findCustomerById } from "../customers/customer-repository.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { termEnd, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError } from "../kernel/errors.js";
import { isUuid } from "../kernel/ids.js";
import { recordEvent } from "../webhooks/outbox.js";
import * as repo from "./contract-repository.js";
import type { RatingContextCache } from "./rating-context-cache.js";
import type { Contract } from "./contract-schemas.js";
import { metricsOf, normalizeRule, presentRule, type PricingRule, type RuleFields } from "./pricing-rule.js";

/** The id stem of a sample contract: the customer's name, lower-cased, in ASCII letters, digits and dashes. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return slug || "customer";
}

const compactTimestamp = (date: Date) => date.toISOString().replace(/\D/g, "").slice(0, 14);

/** The sample program (docs/api.md, "Contracts"; docs/decisions.md, "Invoices"): two wire metrics and a 1000 USD monthly minimum. */
export function sampleRules(): PricingRule[] {
  const rule = (fields: RuleFields) => {
    const result = normalizeRule(fields, "USD");
    if (!result.rule) throw new Error("invalid sample rule");
    return result.rule;
  };
  return [
    rule({ name: "Domestic wire", type: "usage", model: "flat", metric: "domestic_wire", amount: "20.00" }),
    rule({ name: "International wire", type: "usage", model: "flat", metric: "international_wire", amount: "30.00" }),
    rule({ name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly" }),
  ];
}

export function createContractService({
  db,
  clock,
  publicUrl,
  contexts,
}: {
  db: Database;
  clock: Clock;
  publicUrl: string;
  contexts: RatingContextCache;
}) {
  const pdfUrl = (token: string) => `${publicUrl}/v1/agreements/${token}.pdf`;

  const present = (row: repo.ContractRow): Contract => ({
    object: "contract",
    id: row.id,
    customer_id: row.customer_id,
    customer_name: row.customer_name,
    contract_number: row.contract_number,
    status: row.status as Contract["status"],
    start_date: row.start_date,
    end_date: row.end_date,
    currency: row.currency,
    billing_cadence: row.billing_cadence,
    metrics: row.metrics,
    pdf_url: pdfUrl(row.pdf_token),
    sample: row.sample,
    created_at: row.created_at.toISOString(),
  });

  const presentProgram = (contractId: string, v: repo.ProgramVersionRow) => ({
    object: "pricing_program" as const,
    contract: contractId,
    version: v.version,
    effective_date: v.effective_date,
    rules: v.rules.map(presentRule),
  });

  /** Appends a version with `rules` to a locked contract's program (append-only; docs/api.md, "Pricing programs and rules"). */
  async function appendVersion(tx: Tx, contract: repo.ContractRow, rules: PricingRule[]) {
    const version = contract.current_version + 1;
    await repo.insertProgramVersion(forCompany(tx, contract.company_id), {
      company_id: contract.company_id,
      contract_id: contract.id,
      version,
      effective_date: toDateString(clock.now()),
      rules,
      created_at: clock.now(),
    });
    await repo.setCurrentVersion(forCompany(tx, contract.company_id), contract.id, version, metricsOf(rules));
    return version;
  }

  /** This process rates with the new version at once; other processes find out at their next write. */
  async function afterCommitForget<T>(actor: Actor, contractId: string, committed: Promise<T>): Promise<T> {
    const result = await committed;
    contexts.invalidate(actor.companyId, [contractId]);
    return result;
  }

  async function lockedContractWithRules(tx: Tx, actor: Actor, contractId: string) {
    const contract = await repo.lockContract(forCompany(tx, actor.companyId), contractId);
    if (!contract) throw new NotFoundError("contract");
    const program = await repo.findProgramVersion(forCompany(tx, actor.companyId), contractId, contract.current_version);
    return { contract, rules: program?.rules ?? [] };
  }

  return {
    present,

    async list(actor: Actor, status: string | undefined): Promise<Contract[]> {
      requireScope(actor, "contracts:read");
      return (await repo.listContracts(forCompany(db, actor.companyId), status)).map(present);
    },

    async get(actor: Actor, contractId: string): Promise<Contract> {
      requireScope(actor, "contracts:read");
      const row = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!row) throw new NotFoundError("contract");
      return present(row);
    },

    /**
     * Creates an active sample contract for a customer (docs/api.md, "Contracts") with its program version 1 and its
     * `contract.created` event, in one transaction.
     */
    async createSample(actor: Actor, customerId: string): Promise<Contract> {
      requireScope(actor, "contracts:write");
      return db.transaction(async (tx) => {
        const customer = isUuid(customerId) ? await findCustomerById(forCompany(tx, actor.companyId), customerId) : undefined;
        if (!customer) throw new NotFoundError("customer");
        const now = clock.now();
        const number = await repo.nextCounterValues(forCompany(tx, actor.companyId), "contract_number", 1);
        const rules = sampleRules();
        const startDate = toDateString(now);
        const row: repo.ContractRow = {
          company_id: actor.companyId,
          id: "",
          contract_number: `CN-${String(number).padStart(6, "0")}`,
          customer_id: customer.id,
          customer_name: customer.name,
          status: "active",
          start_date: startDate,
          end_date: termEnd(startDate, 1),
          currency: "USD",
          billing_cadence: "monthly",
          sample: true,
          current_version: 1,
          metrics: metricsOf(rules),
          pdf_token: randomBytes(32).toString("base64url"),
          created_at: now,
        };
        // `{slug}-test`, then with a timestamp suffix, then numbered: whichever is free (checked by the insert itself).
        const stem = `${slugify(customer.name)}-test`;
        const candidates = [stem, `${stem}-${compactTimestamp(now)}`];
        for (let n = 2; n < 50; n++) candidates.push(`${stem}-${compactTimestamp(now)}-${n}`);
        let inserted = false;
        for (const id of candidates) {
          row.id = id;
          if (await repo.insertContractUnlessIdTaken(forCompany(tx, actor.companyId), row)) {
            inserted = true;
            break;
          }
        }
        if (!inserted) throw new ConflictError("Could not find a free contract id; try again", "contract_id_taken");
        await repo.insertProgramVersion(forCompany(tx, actor.companyId), {
          company_id: actor.companyId,
          contract_id: row.id,
          version: 1,
          effective_date: startDate,
          rules,
          created_at: now,
        });
        const contract = present(row);
        await recordEvent(tx, clock, actor.companyId, "contract.created", contract);
        return contract;
      });
    },

    async getPricing(actor: Actor, contractId: string) {
      requireScope(actor, "contracts:read");
      const contract = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!contract) throw new NotFoundError("contract");
      const program = await repo.findProgramVersion(forCompany(db, actor.companyId), contractId, contract.current_version);
      if (!program) throw new NotFoundError("pricing_program");
      return presentProgram(contractId, program);
    },

    /** Every version of the contract's pricing program, oldest first, with when each was written. */
    async pricingHistory(actor: Actor, contractId: string) {
      requireScope(actor, "contracts:read");
      const contract = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!contract) throw new NotFoundError("contract");
      const versions = await repo.listProgramVersions(forCompany(db, actor.companyId), contractId);
      return versions.map((v) => ({ ...presentProgram(contractId, v), created_at: v.created_at.toISOString() }));
    },

    /** Appends a rule as a new program version (201); a supplied id that exists answers 409. */
    async addRule(actor: Actor, contractId: string, fields: RuleFields) {
      requireScope(actor, "contracts:write");
      return afterCommitForget(actor, contractId, db.transaction(async (tx) => {
        const { contract, rules } = await lockedContractWithRules(tx, actor, contractId);
        if (fields.id !== undefined && rules.some((r) => r.id === fields.id)) {
          throw new ConflictError(`A pricing rule with id '${fields.id}' already exists on this contract`, "rule_exists");
        }
        const result = normalizeRule(fields, contract.currency);
        if (result.errors) throw new ValidationError(`Invalid pricing rule: ${result.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`, "invalid_pricing_rule", result.errors);
        const version = await appendVersion(tx, contract, [...rules, result.rule]);
        return { object: "pricing_rule" as const, contract: contract.id, version, rule: presentRule(result.rule) };
      }));
    },

    /** Merges the supplied fields into a rule (null clears a field) and writes a new program version. */
    async updateRule(actor: Actor, contractId: string, ruleId: string, fields: RuleFields) {
      requireScope(actor, "contracts:write");
      return afterCommitForget(actor, contractId, db.transaction(async (tx) => {
        const { contract, rules } = await lockedContractWithRules(tx, actor, contractId);
        const index = rules.findIndex((r) => r.id === ruleId);
        if (index < 0) throw new NotFoundError("pricing_rule");
        if (fields.id !== undefined && fields.id !== ruleId) {
          throw new ValidationError("A rule's id cannot change", "invalid_pricing_rule", [{ path: "id", message: "cannot change" }]);
        }
        const existing = rules[index]!;
        const merged: RuleFields = { ...existing, ...withoutUndefined(fields), id: ruleId };
        // Switching model drops the price field of the old model unless the update sets it.
        if (fields.model && fields.model !== existing.model) {
          if (fields.model === "percentage" && fields.amount === undefined) merged.amount = null;
          if (fields.model === "flat" && fields.rate === undefined) merged.rate = null;
        }
        const result = normalizeRule(merged, contract.currency);
        if (result.errors) throw new ValidationError(`Invalid pricing rule: ${result.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`, "invalid_pricing_rule", result.errors);
        const next = rules.map((r, i) => (i === index ? result.rule : r));
        const version = await appendVersion(tx, contract, next);
        return { object: "pricing_rule" as const, contract: contract.id, version, rule: presentRule(result.rule) };
      }));
    },

    /** The agreement PDF behind a `pdf_url` (no API key: the token in the URL is the capability). */
    async agreementPdf(token: string): Promise<Buffer> {
      const contract = /^[A-Za-z0-9_-]{43}$/.test(token) ? await repo.findContractByPdfToken(db, token) : undefined;
      if (!contract) throw new NotFoundError("agreement");
      const [company, program] = await Promise.all([
        findCompanyById(db, contract.company_id),
        repo.findProgramVersion(forCompany(db, contract.company_id), contract.id, contract.current_version),
      ]);
      const rules = program?.rules ?? [];
      const minimums = rules.filter((r) => r.type === "minimum");
      // pdfkit and its fonts cost ~27 MB of memory once loaded: only a process that renders an agreement
      // pays for them (docs/performance.md, peak RSS).
      const { renderAgreementPdf } = await import("./agreement-pdf.js");
      return renderAgreementPdf({
        companyName: company?.name ?? "",
        customerName: contract.customer_name,
        contractId: contract.id,
        contractNumber: contract.contract_number,
        startDate: contract.start_date,
        endDate: contract.end_date,
        currency: contract.currency,
        billingCadence: contract.billing_cadence,
        sample: contract.sample,
        programVersion: contract.current_version,
        rules,
        minimumAmount: minimums.length > 0 ? minimums[0]!.amount : null,
        generatedAt: clock.now(),
      });
    },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
