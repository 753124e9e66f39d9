import type { Queryable } from "../../db/database.js";
import { applyMinimum, MINIMUM_LINE_KEY, type Line } from "../invoices/invoice-lines.js";
import { Big, divideToChargePrecision, roundToMinorUnit, toMoneyString } from "../kernel/money.js";
import * as repo from "./invariants-repository.js";

export interface VerifyReport {
  ok: boolean;
  events: number;
  ratedTotal: string;
  problems: string[];
}

/**
 * Checks the invariants over the stored data (one company, or all with null): every event on exactly one
 * line of its own contract's invoice for its month, whose exact sums match its events; each line amount
 * the half-even rounding of its charges; each invoice's subtotal the sum of its lines and total =
 * subtotal + tax; no rule's capped charges above its monthly cap; program versions 1..current without
 * gaps; every event delivered (or queued) to each endpoint subscribed when it happened, and no delivery
 * without its event.
 */
export async function verifyBilling(db: Queryable, companyId: string | null = null): Promise<VerifyReport> {
  const problems: string[] = [];
  for (const m of await repo.findLineEventMismatches(db, companyId)) {
    problems.push(
      m.line_charge_total === null
        ? `invoice ${m.invoice_number}: events on line ${m.line_key} (charges ${m.events_charge_total}) but no such line`
        : m.events_charge_total === null
          ? `invoice ${m.invoice_number}: line ${m.line_key} (charges ${m.line_charge_total}) has no events`
          : `invoice ${m.invoice_number}: line ${m.line_key} charges ${m.line_charge_total} / quantity ${m.line_quantity} but its events sum to ${m.events_charge_total} / ${m.events_quantity}`,
    );
  }
  const lines = await repo.listLineAmounts(db, companyId);
  for (const line of lines) {
    const expected = roundToMinorUnit(new Big(line.charge_total), line.currency);
    if (!expected.eq(line.amount)) {
      problems.push(`invoice ${line.invoice_number}: line ${line.line_key} amount ${line.amount}, expected ${toMoneyString(expected, line.currency)}`);
    }
    if (line.kind === "fee") {
      const quantity = new Big(line.quantity);
      const unitPrice = quantity.eq(0) ? new Big(0) : divideToChargePrecision(new Big(line.amount), quantity);
      if (!unitPrice.eq(line.unit_price)) {
        problems.push(`invoice ${line.invoice_number}: fee line ${line.line_key} unit price ${line.unit_price}, expected ${unitPrice.toFixed()} (amount / quantity)`);
      }
    }
  }
  problems.push(...minimumProblems(lines));
  for (const i of await repo.findInvoiceTotalMismatches(db, companyId)) {
    problems.push(`invoice ${i.number}: subtotal ${i.subtotal}, total ${i.total}, tax ${i.tax}, but its lines sum to ${i.lines_amount}`);
  }
  for (const e of await repo.findMisplacedEvents(db, companyId)) {
    problems.push(`event ${e.id}: on invoice ${e.invoice_number}, which is not the draft of ${e.contract_id} for ${e.service_period_start}`);
  }
  for (const c of await repo.findCapExcesses(db, companyId)) {
    problems.push(`invoice ${c.invoice_number}: rule ${c.rule_id} charged ${c.capped_total} against a monthly cap of ${c.monthly_cap}`);
  }
  for (const v of await repo.findVersionGaps(db, companyId)) {
    problems.push(`contract ${v.contract_id}: current version ${v.current_version} but ${v.versions} versions stored (highest ${v.max_version ?? "none"})`);
  }
  for (const d of await repo.findOrphanDeliveries(db, companyId)) {
    problems.push(`delivery ${d.id}: its event ${d.event_id} does not exist`);
  }
  for (const u of await repo.findUndeliveredEvents(db, companyId)) {
    problems.push(`event ${u.id}: no delivery to endpoint ${u.endpoint_id}, which was subscribed when it happened`);
  }
  const { count, ratedTotal } = await repo.countUsageEvents(db, companyId);
  return { ok: problems.length === 0, events: count, ratedTotal, problems };
}

/**
 * Each invoice's "Monthly minimum" line is what its other lines fall short of its minimum, or absent
 * (docs/decisions.md, "Invoices"): derived again by applyMinimum, the rule's one home in code.
 */
function minimumProblems(lines: readonly repo.LineAmountRow[]): string[] {
  const problems: string[] = [];
  const byInvoice = new Map<string, repo.LineAmountRow[]>();
  for (const line of lines) {
    const key = `${line.company_id}|${line.invoice_number}`;
    byInvoice.set(key, [...(byInvoice.get(key) ?? []), line]);
  }
  for (const invoiceLines of byInvoice.values()) {
    const { invoice_number: number, currency, minimum_amount: minimum } = invoiceLines[0]!;
    const others = new Map<string, Line>();
    for (const l of invoiceLines) {
      if (l.line_key !== MINIMUM_LINE_KEY) others.set(l.line_key, { amount: new Big(l.amount) } as Line);
    }
    applyMinimum(others, minimum === null ? null : new Big(minimum), currency);
    const expected = others.get(MINIMUM_LINE_KEY)?.amount;
    const stored = invoiceLines.find((l) => l.line_key === MINIMUM_LINE_KEY)?.amount;
    if (expected === undefined && stored !== undefined) {
      problems.push(`invoice ${number}: minimum line ${stored}, but its other lines reach the minimum ${minimum ?? "(none)"}`);
    } else if (expected !== undefined && (stored === undefined || !expected.eq(stored))) {
      problems.push(`invoice ${number}: minimum line ${stored ?? "missing"}, expected ${toMoneyString(expected, currency)} (minimum ${minimum} less the other lines)`);
    }
  }
  return problems;
}
