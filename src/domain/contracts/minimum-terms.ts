import type { ErrorDetail } from "../kernel/errors.js";
import { Big } from "../kernel/money.js";

/**
 * What a monthly minimum counts and which charges are passed through (docs/api.md, "Monthly minimums and
 * pass-through charges"). By default a minimum counts the company's own charges of the month: usage (fees sent
 * pre-calculated as `fee_amount` included) and subscriptions. It never counts a pass-through rule's charges
 * (collected for a third party), unless it names that rule, nor a prepaid credit purchase (the customer's cash
 * for usage to come: the usage it pays for counts when it arrives), nor one-time fees unless it names their kind.
 */

/** The kinds of charge a minimum can count. */
export const COUNTED_KINDS = ["usage", "fee", "subscription", "one_time"] as const;
export type CountedKind = (typeof COUNTED_KINDS)[number];

/** A minimum rule's own choice of what it counts; every field given narrows it (all must match). */
export interface MinimumCounts {
  /** The kinds of line counted; default usage, fee and subscription. */
  kinds?: CountedKind[];
  /** Only usage and fee lines of these metrics. */
  metrics?: string[];
  /** Only the lines of these rules (a pass-through rule named here counts). */
  rule_ids?: string[];
}

export const DEFAULT_COUNTED_KINDS: readonly CountedKind[] = ["usage", "fee", "subscription"];

/** One commitment of a month: the minimum rules that count the same charges, summed. */
export interface MinimumTerm {
  amount: Big;
  counts: MinimumCounts | null;
}

/** The fields of a rule that say what counts toward a minimum, as a client sends them. */
export interface ChargeScopeFields {
  pass_through?: boolean | null | undefined;
  counts?:
    | {
        kinds?: readonly string[] | null | undefined;
        metrics?: readonly string[] | null | undefined;
        rule_ids?: readonly string[] | null | undefined;
      }
    | null
    | undefined;
}

const NAME = /^[A-Za-z0-9_.:-]{1,100}$/;

function readNames(list: readonly string[] | null | undefined, path: string, errors: ErrorDetail[]) {
  if (list === null || list === undefined) return undefined;
  if (!Array.isArray(list) || list.length === 0 || list.length > 100) {
    errors.push({ path, message: "must list 1 to 100 names" });
    return undefined;
  }
  const bad = list.find((n) => typeof n !== "string" || !NAME.test(n));
  if (bad !== undefined) {
    errors.push({ path, message: `may hold letters, digits, _ . : - only: ${JSON.stringify(bad)}` });
    return undefined;
  }
  return [...new Set(list)];
}

/**
 * `pass_through` (usage rules) and `counts` (minimum rules), checked, as the rule stores them: only when set, so
 * that a rule without them is stored and shown exactly as before they existed. Pure.
 */
export function readChargeScope(
  fields: ChargeScopeFields,
  type: string | undefined,
  errors: ErrorDetail[],
): { pass_through?: true; counts?: MinimumCounts } {
  const out: { pass_through?: true; counts?: MinimumCounts } = {};
  if (fields.pass_through != null) {
    if (type !== "usage") errors.push({ path: "pass_through", message: "applies to usage rules only" });
    else if (fields.pass_through === true) out.pass_through = true;
  }
  const counts = fields.counts;
  if (counts == null) return out;
  if (type !== "minimum") {
    errors.push({ path: "counts", message: "applies to minimum rules only" });
    return out;
  }
  const read: MinimumCounts = {};
  if (counts.kinds != null) {
    const unknown = counts.kinds.filter((k) => !(COUNTED_KINDS as readonly string[]).includes(k));
    if (counts.kinds.length === 0 || unknown.length > 0)
      errors.push({ path: "counts.kinds", message: `must list some of ${COUNTED_KINDS.join(", ")}` });
    else read.kinds = COUNTED_KINDS.filter((k) => counts.kinds!.includes(k));
  }
  const metrics = readNames(counts.metrics, "counts.metrics", errors);
  if (metrics) read.metrics = metrics;
  const ruleIds = readNames(counts.rule_ids, "counts.rule_ids", errors);
  if (ruleIds) read.rule_ids = ruleIds;
  if (Object.keys(read).length > 0) out.counts = read;
  return out;
}

const countsKey = (counts: MinimumCounts | undefined): string => JSON.stringify(counts ?? null);

/**
 * A program's monthly commitments: its minimum rules, those that count the same charges summed into one (in the
 * order the first of each appears), or null when it has none. Pure.
 */
export function minimumTermsOf(
  rules: readonly { type: string; amount: string | null; counts?: MinimumCounts }[],
): MinimumTerm[] | null {
  const terms = new Map<string, MinimumTerm>();
  for (const rule of rules) {
    if (rule.type !== "minimum" || rule.amount === null) continue;
    const key = countsKey(rule.counts);
    const sofar = terms.get(key);
    terms.set(key, {
      amount: (sofar?.amount ?? new Big(0)).plus(rule.amount),
      counts: rule.counts ?? null,
    });
  }
  return terms.size === 0 ? null : [...terms.values()];
}

/** The commitments as an invoice stores them (decimals as text), and back. */
export interface MinimumTermRecord {
  amount: string;
  counts: MinimumCounts | null;
}
export const termsToRecord = (terms: readonly MinimumTerm[] | null): MinimumTermRecord[] | null =>
  terms === null ? null : terms.map((t) => ({ amount: t.amount.toFixed(), counts: t.counts }));

/**
 * The commitments of an invoice as stored: its terms, or, on an invoice stored before minimums said what they
 * count, its one summed amount counting the default charges.
 */
export function termsFromRecord(row: {
  minimum_amount: string | null;
  minimum_terms?: readonly MinimumTermRecord[] | null;
}): MinimumTerm[] | null {
  if (row.minimum_terms) return row.minimum_terms.map((t) => ({ amount: new Big(t.amount), counts: t.counts }));
  return row.minimum_amount === null ? null : [{ amount: new Big(row.minimum_amount), counts: null }];
}

/** The sum of the commitments (the invoice's `minimum_amount`), or null. */
export const termsTotal = (terms: readonly MinimumTerm[] | null): Big | null =>
  terms === null ? null : terms.reduce((sum, t) => sum.plus(t.amount), new Big(0));
