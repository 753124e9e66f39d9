import type { PresentedRule } from "./pricing-rule.js";
import { tierLines } from "./tier-lines.js";

/**
 * The version history of a pricing program as differences between consecutive versions: what a person
 * reviewing a contract wants to see is what changed, not every version's full rule list. Pure display
 * logic over rules; the versions themselves come from the contract service.
 */

/** The fields compared, in the order a change lists them (the id identifies the rule, so it is not one). */
export const DIFFED_RULE_FIELDS = [
  "name",
  "type",
  "model",
  "amount",
  "rate",
  "metric",
  "frequency",
  "monthly_cap",
  "currency",
  "counterparty",
  "counterparty_side",
  "pair",
  "tiers",
  "package_size",
  "fixed_fee",
  "min_fee",
  "max_fee",
  "allow_rate_above_one",
] as const satisfies readonly (keyof PresentedRule)[];
export type DiffedRuleField = (typeof DIFFED_RULE_FIELDS)[number];

export interface FieldChange {
  field: DiffedRuleField;
  /** The values as text (null when the field is absent), so that 0.05 and "0.05" compare equal. */
  before: string | null;
  after: string | null;
}

export type RuleDiff =
  | { kind: "added"; rule: PresentedRule }
  | { kind: "removed"; rule: PresentedRule }
  | { kind: "changed"; before: PresentedRule; after: PresentedRule; changes: FieldChange[] };

export interface VersionDiff {
  version: number;
  effective_date: string;
  created_at: string | null;
  /** Added and changed rules in the new version's order, then removed rules in the old version's order. */
  diffs: RuleDiff[];
  /** How many rules the version kept as they were. */
  unchanged: number;
}

/** A field's value as text: tiers as their lines, "1000 0.10; - 0.05" (tier-lines.ts). */
function asText(rule: PresentedRule, field: DiffedRuleField): string | null {
  if (field === "tiers") return rule.tiers ? tierLines(rule.tiers).join("; ") : null;
  const value = rule[field];
  return value === null || value === undefined ? null : String(value);
}

/** What turns `before` into `after`; rules are matched by id (an id never changes: see updateRule). */
export function diffRules(
  before: readonly PresentedRule[],
  after: readonly PresentedRule[],
): { diffs: RuleDiff[]; unchanged: number } {
  const previous = new Map(before.map((rule) => [rule.id, rule]));
  const kept = new Set<string>();
  const diffs: RuleDiff[] = [];
  let unchanged = 0;
  for (const rule of after) {
    const old = previous.get(rule.id);
    if (!old) {
      diffs.push({ kind: "added", rule });
      continue;
    }
    kept.add(rule.id);
    const changes: FieldChange[] = [];
    for (const field of DIFFED_RULE_FIELDS) {
      const was = asText(old, field);
      const now = asText(rule, field);
      if (was !== now) changes.push({ field, before: was, after: now });
    }
    if (changes.length === 0) unchanged++;
    else diffs.push({ kind: "changed", before: old, after: rule, changes });
  }
  for (const rule of before) if (!kept.has(rule.id)) diffs.push({ kind: "removed", rule });
  return { diffs, unchanged };
}

/**
 * Each version compared with the one before it, newest first; the first version lists all its rules as
 * added. Versions may come in any order.
 */
export function versionHistoryDiff(
  versions: readonly {
    version: number;
    effective_date: string;
    created_at?: string | null | undefined;
    rules: readonly PresentedRule[];
  }[],
): VersionDiff[] {
  const ordered = [...versions].sort((a, b) => a.version - b.version);
  const result: VersionDiff[] = [];
  let previous: readonly PresentedRule[] = [];
  for (const v of ordered) {
    const { diffs, unchanged } = diffRules(previous, v.rules);
    result.push({
      version: v.version,
      effective_date: v.effective_date,
      created_at: v.created_at ?? null,
      diffs,
      unchanged,
    });
    previous = v.rules;
  }
  return result.reverse();
}
