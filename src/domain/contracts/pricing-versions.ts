import type { Tenancy } from "../kernel/tenancy.js";
import type { CompanyScope } from "../../db/company-scope.js";
import { requireScope } from "../kernel/actor.js";
import { requireDayInTerm, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from "../kernel/errors.js";
import * as repo from "./contract-repository.js";
import {
  MAX_PROGRAM_RULES,
  metricsOf,
  normalizeRule,
  presentRule,
  type PricingRule,
  type RuleFields,
} from "./pricing-rule.js";
import { changedSegments, programOn, upcomingAfter, type ProgramSegment, type RuleChange } from "./program-timeline.js";
import type { RatingContextCache } from "./rating-context-cache.js";

const presentProgram = (contractId: string, v: { version: number; effective_date: string; rules: PricingRule[] }) => ({
  object: "pricing_program" as const,
  contract: contractId,
  version: v.version,
  effective_date: v.effective_date,
  rules: v.rules.map(presentRule),
});

/**
 * What a pricing change dated `from` does to usage already billed, in the change's transaction under the contract's
 * lock (composed in domain/services.ts: usage/reprice.ts): refuses a change that reaches an issued period, prices
 * open drafts from that day again under the program `segments`.
 */
export type RepriceFrom = (
  tx: CompanyScope,
  contract: { id: string; currency: string },
  from: string,
  segments: readonly ProgramSegment[],
) => Promise<void>;

/** A change as the API asks for it: the rule's fields, and the day it applies from (null: undated). */
export interface RuleChangeRequest {
  fields: RuleFields;
  effectiveDate: string | null;
}

const invalidRule = (errors: readonly ErrorDetail[]) =>
  new ValidationError(
    `Invalid pricing rule: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
    "invalid_pricing_rule",
    [...errors],
  );

/** The metrics a contract accepts: those of its version in force today and of every version scheduled after it. */
const acceptedMetrics = (segments: readonly ProgramSegment[], day: string): string[] => [
  ...new Set([programOn(segments, day), ...upcomingAfter(segments, day)].flatMap((s) => metricsOf(s.rules))),
];

/**
 * A contract's pricing program: its versions read, and a rule added or changed as new versions (docs/api.md,
 * "Pricing programs and rules" and "Scheduled changes").
 */
export function createPricingVersions({
  clock,
  contexts,
  repriceFrom,
}: {
  clock: Clock;
  contexts: RatingContextCache;
  repriceFrom: RepriceFrom;
}) {
  const today = () => toDateString(clock.now());

  /**
   * Writes the versions a change makes (program-timeline.ts, `changedSegments`) on a locked contract, then, for a
   * dated change, prices the usage it reaches again. Returns the version in force on the change's day (today,
   * undated) among those written, or undefined when the change applied to no version.
   */
  async function writeChange(
    tx: CompanyScope,
    contract: repo.ContractRow,
    change: RuleChange,
    effectiveDate: string | null,
  ): Promise<{ version: number; effective_date: string; rules: PricingRule[] } | undefined> {
    if (effectiveDate !== null) requireDayInTerm(effectiveDate, contract);
    const before = await repo.findProgramSegments(tx, contract.id);
    const written = changedSegments(before, change, effectiveDate);
    if (written.length === 0) return undefined;
    const day = today();
    const now = clock.now();
    const rows: { version: number; effective_date: string; applies_from: string; rules: PricingRule[] }[] = [];
    let version = contract.current_version;
    for (const w of written) {
      version += 1;
      const row = {
        version,
        effective_date: effectiveDate ?? (w.from > day ? w.from : day),
        applies_from: w.from,
        rules: w.rules,
      };
      await repo.insertProgramVersion(tx, {
        ...row,
        company_id: contract.company_id,
        contract_id: contract.id,
        created_at: now,
      });
      rows.push(row);
    }
    const after = await repo.findProgramSegments(tx, contract.id);
    await repo.setCurrentVersion(tx, contract.id, version, acceptedMetrics(after, day));
    if (effectiveDate !== null) await repriceFrom(tx, contract, effectiveDate, after);
    const inForce = programOn(after, effectiveDate ?? day);
    return rows.find((r) => r.version === inForce.version) ?? rows[0];
  }

  /** This process rates with the new version at once; other processes find out at their next write. */
  async function afterCommitForget<T>(tenant: Tenancy, contractId: string, committed: Promise<T>): Promise<T> {
    const result = await committed;
    contexts.invalidate(tenant.companyId, [contractId]);
    return result;
  }

  async function lockedContract(tx: CompanyScope, contractId: string) {
    const contract = await repo.lockContract(tx, contractId);
    if (!contract) throw new NotFoundError("contract");
    return contract;
  }

  const ruleOf = (rules: readonly PricingRule[], id: string) => rules.find((r) => r.id === id);

  return {
    /** The version in force today, with the versions scheduled to come into force after it (`upcoming`). */
    async getPricing(tenant: Tenancy, contractId: string) {
      requireScope(tenant, "contracts:read");
      const contract = await repo.findContract(tenant.data, contractId);
      if (!contract) throw new NotFoundError("contract");
      const segments = await repo.findProgramSegments(tenant.data, contractId);
      if (segments.length === 0) throw new NotFoundError("pricing_program");
      const day = today();
      return {
        ...presentProgram(contractId, programOn(segments, day)),
        upcoming: upcomingAfter(segments, day).map((s) => presentProgram(contractId, s)),
      };
    },

    /** Every version of the contract's pricing program, oldest first, with when each was written. */
    async pricingHistory(tenant: Tenancy, contractId: string) {
      requireScope(tenant, "contracts:read");
      const contract = await repo.findContract(tenant.data, contractId);
      if (!contract) throw new NotFoundError("contract");
      const versions = await repo.listProgramVersions(tenant.data, contractId);
      return versions.map((v) => ({ ...presentProgram(contractId, v), created_at: v.created_at.toISOString() }));
    },

    /**
     * Adds a rule (201): undated, to every version from now on; dated, from that day on, pricing the open drafts'
     * usage from that day again. A supplied id that a version it reaches has answers 409.
     */
    async addRule(tenant: Tenancy, contractId: string, { fields, effectiveDate }: RuleChangeRequest) {
      requireScope(tenant, "contracts:write");
      return afterCommitForget(
        tenant,
        contractId,
        tenant.transaction(async (tx) => {
          const contract = await lockedContract(tx, contractId);
          const result = normalizeRule(fields, contract.currency);
          if (result.errors) throw invalidRule(result.errors);
          const rule = result.rule;
          const written = await writeChange(
            tx,
            contract,
            (rules) => {
              if (ruleOf(rules, rule.id)) {
                throw new ConflictError(
                  `A pricing rule with id '${rule.id}' already exists on this contract`,
                  "rule_exists",
                );
              }
              if (rules.length >= MAX_PROGRAM_RULES) {
                throw new ValidationError(
                  `The contract's program already holds ${MAX_PROGRAM_RULES} rules, the most a program may hold: remove or change a rule instead`,
                  "too_many_rules",
                  [{ path: "rules", message: `at most ${MAX_PROGRAM_RULES} rules in a program` }],
                );
              }
              return [...rules, rule];
            },
            effectiveDate,
          );
          return {
            object: "pricing_rule" as const,
            contract: contract.id,
            version: written!.version,
            effective_date: written!.effective_date,
            rule: presentRule(rule),
          };
        }),
      );
    },

    /**
     * Merges the supplied fields into a rule (null clears a field) in every version the change reaches (undated:
     * all; dated: those in force from its day), as new versions.
     */
    async updateRule(
      tenant: Tenancy,
      contractId: string,
      ruleId: string,
      { fields, effectiveDate }: RuleChangeRequest,
    ) {
      requireScope(tenant, "contracts:write");
      if (fields.id !== undefined && fields.id !== ruleId) {
        throw new ValidationError("A rule's id cannot change", "invalid_pricing_rule", [
          { path: "id", message: "cannot change" },
        ]);
      }
      return afterCommitForget(
        tenant,
        contractId,
        tenant.transaction(async (tx) => {
          const contract = await lockedContract(tx, contractId);
          const written = await writeChange(
            tx,
            contract,
            (rules) => {
              const index = rules.findIndex((r) => r.id === ruleId);
              if (index < 0) return null;
              const existing = rules[index]!;
              const merged: RuleFields = { ...existing, ...withoutUndefined(fields), id: ruleId };
              // Switching model drops the price field of the old model unless the update sets it.
              if (fields.model && fields.model !== existing.model) {
                if (fields.model === "percentage" && fields.amount === undefined) merged.amount = null;
                if (fields.model === "flat" && fields.rate === undefined) merged.rate = null;
              }
              const result = normalizeRule(merged, contract.currency);
              if (result.errors) throw invalidRule(result.errors);
              return rules.map((r, i) => (i === index ? result.rule : r));
            },
            effectiveDate,
          );
          if (!written) throw new NotFoundError("pricing_rule");
          return {
            object: "pricing_rule" as const,
            contract: contract.id,
            version: written.version,
            effective_date: written.effective_date,
            rule: presentRule(ruleOf(written.rules, ruleId)!),
          };
        }),
      );
    },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
