import type { PricingRule } from "../contracts/pricing-rule.js";
import type { CreditWallet } from "../credits/credit-wallet.js";
import type { OpenBook } from "../invoices/line-book.js";
import { toDateString } from "../kernel/billing-period.js";
import { Big, toDecimalString } from "../kernel/money.js";
import { chargeOnBook } from "./ingest/price.js";
import { selectRule } from "./ingest/judge.js";
import { takesAppliedRate, type RatableEvent } from "./pricers.js";
import type { EventRatingWrite, StoredRatingRow } from "./usage-repository.js";

/** A program version as re-rating prices with it. */
export interface ProgramVersion {
  version: number;
  rules: readonly PricingRule[];
}

export interface Rerating {
  /** The events whose figures changed (amount, rate, rule, version or line), with their new figures. */
  changed: EventRatingWrite[];
  /** Every event's new charge, in the order priced (event id → charge). */
  charges: Map<string, Big>;
  /** Events no rule of their program prices (a rule removed, a rate named for a rule that takes none). */
  unpriced: StoredRatingRow[];
}

/** What pricing needs of a stored event: the rate it named itself, never the rate it was billed at. */
function ratableOf(e: StoredRatingRow): RatableEvent {
  return {
    metric: e.metric,
    quantity: new Big(e.quantity),
    feeAmount: e.fee_amount === null ? null : new Big(e.fee_amount),
    appliedRate: e.sent_rate === null ? null : new Big(e.sent_rate),
    counterparty: e.counterparty,
    counterpartySide: e.counterparty_side,
    pair: e.pair,
  };
}

const sameDecimal = (a: string | null, b: string | null) => (a === null || b === null ? a === b : new Big(a).eq(b));

/**
 * Prices a service period's events again, one by one in the order they were stored (the order ingestion priced
 * them in: a cap's room and a tier's running quantity depend on it), each under the program version `programOf`
 * gives it, onto `book`, whose draft holds no usage yet (`clearRated`), credited from `credits` (whose wallet got
 * back what the draft's credit lines held). Under the versions the events were priced with, every event comes out
 * as it was stored. Pure but for the book and wallet it records on.
 */
export function rerateOnBook(
  events: readonly StoredRatingRow[],
  programOf: (event: StoredRatingRow) => ProgramVersion,
  book: OpenBook,
  contractId: string,
  periodStart: string,
  credits?: { wallet: CreditWallet; invoiceNumber: string },
): Rerating {
  const changed: EventRatingWrite[] = [];
  const charges = new Map<string, Big>();
  const unpriced: StoredRatingRow[] = [];
  for (const e of events) {
    const ratable = ratableOf(e);
    const program = programOf(e);
    const rule = selectRule(program.rules, ratable);
    if (!rule || (ratable.appliedRate !== null && ratable.feeAmount === null && !takesAppliedRate(rule))) {
      unpriced.push(e);
      continue;
    }
    const credit = credits?.wallet.has(contractId) ? { ...credits, day: toDateString(e.event_timestamp) } : undefined;
    const { rating, lineKey } = chargeOnBook(book, contractId, periodStart, ratable, rule, credit);
    charges.set(e.id, rating.charge);
    const write: EventRatingWrite = {
      id: e.id,
      ratedAmount: toDecimalString(rating.charge),
      appliedRate: rating.appliedRate === null ? null : toDecimalString(rating.appliedRate),
      ruleId: rule.id,
      pricingVersion: program.version,
      lineKey,
    };
    if (
      !sameDecimal(write.ratedAmount, e.rated_amount) ||
      !sameDecimal(write.appliedRate, e.applied_rate) ||
      write.ruleId !== e.rule_id ||
      write.pricingVersion !== e.pricing_version ||
      write.lineKey !== e.line_key
    )
      changed.push(write);
  }
  return { changed, charges, unpriced };
}
