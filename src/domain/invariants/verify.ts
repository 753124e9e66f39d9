import type { Queryable } from "../../db/database.js";
import { Big, roundToMinorUnit } from "../kernel/money.js";
import * as repo from "./invariants-repository.js";

export interface VerifyReport {
  ok: boolean;
  events: number;
  ratedTotal: string;
  problems: string[];
}

/**
 * Checks the money invariants over the stored data (one company, or all with null): every event on exactly
 * one line whose exact sums match its events, each line amount the half-even rounding of its charges, each
 * invoice's subtotal the sum of its lines and total = subtotal + tax.
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
  for (const line of await repo.listLineAmounts(db, companyId)) {
    const expected = roundToMinorUnit(new Big(line.charge_total), line.currency);
    if (!expected.eq(line.amount)) {
      problems.push(`invoice ${line.invoice_number}: line ${line.line_key} amount ${line.amount}, expected ${expected.toFixed()}`);
    }
  }
  for (const i of await repo.findInvoiceTotalMismatches(db, companyId)) {
    problems.push(`invoice ${i.number}: subtotal ${i.subtotal}, total ${i.total}, tax ${i.tax}, but its lines sum to ${i.lines_amount}`);
  }
  const { count, ratedTotal } = await repo.countUsageEvents(db, companyId);
  return { ok: problems.length === 0, events: count, ratedTotal, problems };
}
