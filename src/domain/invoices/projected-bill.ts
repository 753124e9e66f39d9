// What a draft's month will bill if nothing else arrives (docs/decisions.md, "Invoices", the live draft): the
// draft brought up to date as projection would bring it, without storing anything. The rules are projection's
// (`projectLines`) and the invoice calculations' (`billInvoice`): this file only composes them and sums what
// the answer names. Pure.
import { programOn, type ProgramSegment } from "../contracts/program-timeline.js";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { Big } from "../kernel/money.js";
import { billInvoice, type BilledInvoice, type BilledLine } from "./invoice-figures.js";
import { projectLines, type Line } from "./invoice-lines.js";

const ZERO = new Big(0);

/** The rules projection bills a month by: the program version in force on the month's last day (none: no rules). */
export const rulesForPeriod = (
  programs: readonly ProgramSegment[] | null,
  periodEnd: string,
): readonly PricingRule[] => (programs === null || programs.length === 0 ? [] : programOn(programs, periodEnd).rules);

/** A draft's stored lines brought up to date as projection would (subscriptions, one-time fees, the minimum), billed. */
export function billProjected(
  stored: Iterable<Line>,
  rules: readonly PricingRule[],
  oneTimeBilledElsewhere: ReadonlySet<string>,
  currency: string,
): BilledInvoice {
  const { lines, minimum } = projectLines([...stored], rules, oneTimeBilledElsewhere);
  return billInvoice(lines.values(), minimum, currency);
}

/** Whether a projected line is one projection puts on the draft: a subscription, a one-time fee of a rule, the minimum top-up. */
const isProjectionLine = (line: BilledLine): boolean =>
  line.kind === "subscription" || line.kind === "minimum" || (line.kind === "one_time" && line.ruleId !== null);

/** A projected bill's parts, as the `projected` block names them. */
interface ProjectedParts {
  subscriptions: Big;
  oneTimeFees: Big;
  minimumTopUp: Big;
  lines: BilledLine[];
}

/** The sums the `projected` block names: subscriptions, one-time fees of rules, the minimum top-up (0: none). */
export function projectedParts(billed: BilledInvoice): ProjectedParts {
  const sum = (keep: (line: BilledLine) => boolean) =>
    billed.lines.filter(keep).reduce((total, line) => total.plus(line.amount), ZERO);
  return {
    subscriptions: sum((l) => l.kind === "subscription"),
    oneTimeFees: sum((l) => l.kind === "one_time" && l.ruleId !== null),
    minimumTopUp: sum((l) => l.kind === "minimum"),
    lines: billed.lines.filter(isProjectionLine),
  };
}
