import type { Tenancy } from "../kernel/tenancy.js";
import { type CompanyScope, forCompany } from "../../db/company-scope.js";
import type { Database, Tx } from "../../db/database.js";
import { requireScope } from "../kernel/actor.js";
import { toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError } from "../kernel/errors.js";
import * as repo from "./contract-repository.js";
import { metricsOf, normalizeRule, presentRule, type PricingRule, type RuleFields } from "./pricing-rule.js";
import type { RatingContextCache } from "./rating-context-cache.js";

const presentProgram = (contractId: string, v: repo.ProgramVersionRow) => ({
  object: "pricing_program" as const,
  contract: contractId,
  version: v.version,
  effective_date: v.effective_date,
  rules: v.rules.map(presentRule),
});

/** A contract's pricing program: its versions read, and a rule added or changed as a new version. */
export function createPricingVersions({
  db,
  clock,
  contexts,
}: {
  db: Database;
  clock: Clock;
  contexts: RatingContextCache;
}) {
  /** Appends a version with `rules` to a locked contract's program (append-only; docs/api.md, "Pricing programs and rules"). */
  async function appendVersion(tx: CompanyScope, contract: repo.ContractRow, rules: PricingRule[]) {
    const version = contract.current_version + 1;
    await repo.insertProgramVersion(tx, {
      company_id: contract.company_id,
      contract_id: contract.id,
      version,
      effective_date: toDateString(clock.now()),
      rules,
      created_at: clock.now(),
    });
    await repo.setCurrentVersion(tx, contract.id, version, metricsOf(rules));
    return version;
  }

  /** This process rates with the new version at once; other processes find out at their next write. */
  async function afterCommitForget<T>(tenant: Tenancy, contractId: string, committed: Promise<T>): Promise<T> {
    const result = await committed;
    contexts.invalidate(tenant.companyId, [contractId]);
    return result;
  }

  async function lockedContractWithRules(tx: CompanyScope, contractId: string) {
    const contract = await repo.lockContract(tx, contractId);
    if (!contract) throw new NotFoundError("contract");
    const program = await repo.findProgramVersion(tx, contractId, contract.current_version);
    return { contract, rules: program?.rules ?? [] };
  }

  return {
    async getPricing(tenant: Tenancy, contractId: string) {
      requireScope(tenant, "contracts:read");
      const contract = await repo.findContract(tenant.data, contractId);
      if (!contract) throw new NotFoundError("contract");
      const program = await repo.findProgramVersion(tenant.data, contractId, contract.current_version);
      if (!program) throw new NotFoundError("pricing_program");
      return presentProgram(contractId, program);
    },

    /** Every version of the contract's pricing program, oldest first, with when each was written. */
    async pricingHistory(tenant: Tenancy, contractId: string) {
      requireScope(tenant, "contracts:read");
      const contract = await repo.findContract(tenant.data, contractId);
      if (!contract) throw new NotFoundError("contract");
      const versions = await repo.listProgramVersions(tenant.data, contractId);
      return versions.map((v) => ({ ...presentProgram(contractId, v), created_at: v.created_at.toISOString() }));
    },

    /** Appends a rule as a new program version (201); a supplied id that exists answers 409. */
    async addRule(tenant: Tenancy, contractId: string, fields: RuleFields) {
      requireScope(tenant, "contracts:write");
      return afterCommitForget(
        tenant,
        contractId,
        tenant.transaction(async (tx) => {
          const { contract, rules } = await lockedContractWithRules(tx, contractId);
          if (fields.id !== undefined && rules.some((r) => r.id === fields.id)) {
            throw new ConflictError(
              `A pricing rule with id '${fields.id}' already exists on this contract`,
              "rule_exists",
            );
          }
          const result = normalizeRule(fields, contract.currency);
          if (result.errors)
            throw new ValidationError(
              `Invalid pricing rule: ${result.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
              "invalid_pricing_rule",
              result.errors,
            );
          const version = await appendVersion(tx, contract, [...rules, result.rule]);
          return { object: "pricing_rule" as const, contract: contract.id, version, rule: presentRule(result.rule) };
        }),
      );
    },

    /** Merges the supplied fields into a rule (null clears a field) and writes a new program version. */
    async updateRule(tenant: Tenancy, contractId: string, ruleId: string, fields: RuleFields) {
      requireScope(tenant, "contracts:write");
      return afterCommitForget(
        tenant,
        contractId,
        tenant.transaction(async (tx) => {
          const { contract, rules } = await lockedContractWithRules(tx, contractId);
          const index = rules.findIndex((r) => r.id === ruleId);
          if (index < 0) throw new NotFoundError("pricing_rule");
          if (fields.id !== undefined && fields.id !== ruleId) {
            throw new ValidationError("A rule's id cannot change", "invalid_pricing_rule", [
              { path: "id", message: "cannot change" },
            ]);
          }
          const existing = rules[index]!;
          const merged: RuleFields = { ...existing, ...withoutUndefined(fields), id: ruleId };
          // Switching model drops the price field of the old model unless the update sets it.
          if (fields.model && fields.model !== existing.model) {
            if (fields.model === "percentage" && fields.amount === undefined) merged.amount = null;
            if (fields.model === "flat" && fields.rate === undefined) merged.rate = null;
          }
          const result = normalizeRule(merged, contract.currency);
          if (result.errors)
            throw new ValidationError(
              `Invalid pricing rule: ${result.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
              "invalid_pricing_rule",
              result.errors,
            );
          const next = rules.map((r, i) => (i === index ? result.rule : r));
          const version = await appendVersion(tx, contract, next);
          return { object: "pricing_rule" as const, contract: contract.id, version, rule: presentRule(result.rule) };
        }),
      );
    },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
