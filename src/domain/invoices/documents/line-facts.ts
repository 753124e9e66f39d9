// What explains a usage line beyond its stored sums (docs/api.md, "Invoices", line items): how many events it
// holds, and, when a monthly cap cut a line whose charge is not its quantity × unit price (a percentage rule with
// a fixed fee or bounds), what its events cost before the cap. Read when an invoice is shown (the API's single
// invoice, the PDF, the hosted page), from the events on the invoice: a void invoice, whose events moved to its
// reissue, shows none (docs/decisions.md, "Invoice documents").
import type { CompanyScope } from "../../../db/company-scope.js";
import type { PricingRule } from "../../contracts/pricing-rule.js";
import { programOn, type ProgramSegment } from "../../contracts/program-timeline.js";
import { Big, roundToMinorUnit } from "../../kernel/money.js";
import { priceCharge } from "../../usage/pricers.js";
import type { BilledInvoice, BilledLine } from "../calculations/invoice-calculation.js";
import { countLineEvents, listLineEvents } from "./statement-repository.js";

/** Of one usage line: its events, and (a capped line priced per event) its uncapped amount, in minor units. */
export interface LineFacts {
  events: number;
  uncapped?: Big;
}

/** Events priced again per page when a capped line's uncapped amount is summed. */
const PAGE = 5000;
const ZERO = new Big(0);

/** The stored key of a billed usage line: by rule and unit price, or (a rule without one price) by rule. */
const usageLineKeys = (line: Pick<BilledLine, "ruleId" | "unitPrice">): string[] =>
  line.ruleId === null ? [] : [`usage|${line.ruleId}|${line.unitPrice.toFixed()}`, `usage|${line.ruleId}`];

/**
 * Whether a line's uncapped amount must be priced again from its events: a capped flat or percentage rule
 * whose charge is not quantity × unit price (fixed fee, minimum or maximum per event). A plain rate's uncapped
 * amount is that product; a tiered line shows its tiers and cap adjustment.
 */
const needsRepricing = (rule: PricingRule | undefined): rule is PricingRule =>
  rule !== undefined &&
  rule.monthly_cap !== null &&
  rule.model === "percentage" &&
  (rule.fixed_fee != null || rule.min_fee != null || rule.max_fee != null);

/** The facts of each billed line (by its index; usage lines only), as the invoice's events stand now. */
async function lineFactsOf(
  db: CompanyScope,
  invoice: { number: string; currency: string },
  lines: readonly BilledLine[],
  rules: ReadonlyMap<string, PricingRule>,
): Promise<Map<number, LineFacts>> {
  const facts = new Map<number, LineFacts>();
  if (!lines.some((l) => l.kind === "usage")) return facts;
  const counts = new Map((await countLineEvents(db, invoice)).map((c) => [c.line_key, c.events]));
  for (const [index, line] of lines.entries()) {
    if (line.kind !== "usage") continue;
    const key = usageLineKeys(line).find((k) => counts.has(k));
    if (key === undefined) continue;
    const rule = line.ruleId === null ? undefined : rules.get(line.ruleId);
    const uncapped = needsRepricing(rule) ? await uncappedTotal(db, invoice, key, rule) : undefined;
    facts.set(index, {
      events: counts.get(key)!,
      ...(uncapped === undefined ? {} : { uncapped: roundToMinorUnit(uncapped, invoice.currency) }),
    });
  }
  return facts;
}

/** What a line's events cost without the monthly cap: each priced again by the rule (pricers.ts), summed exactly. */
async function uncappedTotal(
  db: CompanyScope,
  invoice: { number: string },
  key: string,
  rule: PricingRule,
): Promise<Big> {
  const uncappedRule: PricingRule = { ...rule, monthly_cap: null };
  const totals = { capped: ZERO, quantity: ZERO };
  let sum = ZERO;
  for (let after: string | null = null; ; ) {
    const rows = await listLineEvents(db, invoice, key, after, PAGE);
    for (const e of rows) {
      const event = {
        metric: e.metric,
        quantity: new Big(e.quantity),
        feeAmount: null,
        appliedRate: e.applied_rate === null ? null : new Big(e.applied_rate),
        counterparty: e.counterparty,
        counterpartySide: e.counterparty_side,
        pair: e.pair,
      };
      sum = sum.plus(priceCharge(event, uncappedRule, totals).charge);
    }
    if (rows.length < PAGE) return sum;
    after = rows[rows.length - 1]!.seq;
  }
}

/** The rules an invoice's lines were priced by: the program version in force on the last day of its period. */
export function rulesOfInvoice(row: {
  programs: ProgramSegment[] | null;
  period_end: string;
}): Map<string, PricingRule> {
  if (row.programs === null || row.programs.length === 0) return new Map();
  return new Map(programOn(row.programs, row.period_end).rules.map((r) => [r.id, r]));
}

/**
 * The facts of an invoice's lines as every answer with `line_items` gives them (GET, the lifecycle actions, a
 * payment, a credit note, their webhooks), so that they all answer the same invoice.
 */
export async function invoiceLineFacts(
  db: CompanyScope,
  row: { number: string; currency: string; programs: ProgramSegment[] | null; period_end: string; billed: unknown },
  billed: BilledInvoice,
): Promise<Map<number, LineFacts>> {
  // An invoice issued with its facts keeps them (its events may since have moved to a reissue); a draft, or an
  // invoice issued before they were kept, has them read from its events.
  if (row.billed !== null && billed.lines.some((l) => l.eventCount !== undefined)) {
    const kept = new Map<number, LineFacts>();
    billed.lines.forEach((l, index) => {
      if (l.eventCount !== undefined)
        kept.set(index, { events: l.eventCount, ...(l.uncapped ? { uncapped: l.uncapped } : {}) });
    });
    return kept;
  }
  return lineFactsOf(db, row, billed.lines, rulesOfInvoice(row));
}

/** The figures with each usage line's facts on it: what issuing freezes (finalize-invoice.ts). */
export async function withLineFacts(
  db: CompanyScope,
  invoice: { number: string; currency: string },
  billed: BilledInvoice,
  rules: readonly PricingRule[],
): Promise<BilledInvoice> {
  const facts = await lineFactsOf(db, invoice, billed.lines, new Map(rules.map((r) => [r.id, r])));
  return {
    ...billed,
    lines: billed.lines.map((line, index) => {
      const fact = facts.get(index);
      return fact === undefined
        ? line
        : { ...line, eventCount: fact.events, ...(fact.uncapped ? { uncapped: fact.uncapped } : {}) };
    }),
  };
}
