import type { PricingRule } from "./pricing-rule.js";

/**
 * A contract's pricing program over time (docs/api.md, "Scheduled changes"): one segment per day a version
 * applies from, oldest first, each with the highest-numbered version of that day. A change dated for a day writes
 * a version into every segment from that day on (the one it opens, and a copy of each later one with the change
 * applied), so later segments always hold higher version numbers than earlier ones.
 */
export interface ProgramSegment {
  /** The first day (UTC) the version prices events of. */
  from: string;
  version: number;
  /** The version's date as shown (a dated change's date, or the day an undated one was made). */
  effective_date: string;
  rules: PricingRule[];
}

/**
 * The segment in force on `day` (YYYY-MM-DD): the latest that has begun by then. A day before every segment
 * (before the contract's start, which ingestion refuses anyway) gets the first. Pure.
 */
export function programOn(segments: readonly ProgramSegment[], day: string): ProgramSegment {
  let found = segments[0];
  if (!found) throw new Error("a contract without a pricing program");
  for (const segment of segments) {
    if (segment.from > day) break;
    found = segment;
  }
  return found;
}

/** The segments that begin after `day`: the versions scheduled to come into force, in the order they will. */
export const upcomingAfter = (segments: readonly ProgramSegment[], day: string): ProgramSegment[] =>
  segments.filter((s) => s.from > day);

/** What a change makes of one version's rules; null where it does not apply (an update of a rule it lacks). */
export type RuleChange = (rules: readonly PricingRule[]) => PricingRule[] | null;

/**
 * The versions a change writes, in the order they are numbered. Dated `from`: one that opens a segment on that day
 * (the rules in force then, changed), then one for each segment that begins later (its rules, changed), so that the
 * change holds from its day on, whatever else is scheduled. Undated (`from` null): one for each segment, from the
 * same day, so that the change holds for every event rated from now on, whatever its day. Pure.
 */
export function changedSegments(
  segments: readonly ProgramSegment[],
  change: RuleChange,
  from: string | null,
): { from: string; rules: PricingRule[] }[] {
  const written: { from: string; rules: PricingRule[] }[] = [];
  const add = (day: string, rules: readonly PricingRule[]) => {
    const changed = change(rules);
    if (changed) written.push({ from: day, rules: changed });
  };
  if (from === null) {
    for (const segment of segments) add(segment.from, segment.rules);
    return written;
  }
  add(from, programOn(segments, from).rules);
  for (const segment of segments) if (segment.from > from) add(segment.from, segment.rules);
  return written;
}
