import type { PricingRule } from "../contracts/pricing-rule.js";
import type { CreditWallet } from "../credits/credit-wallet.js";
import type { Big as BigValue } from "../kernel/money.js";
import type { OpenBook } from "../invoices/line-book.js";
import { toDateString } from "../kernel/billing-period.js";
import { Big, toDecimalString } from "../kernel/money.js";
import { chargeOnBook } from "./ingest/price.js";
import { selectRule } from "./ingest/judge.js";
import { takesAppliedRate, type RatableEvent } from "./pricers.js";
import type { CompanyScope } from "../../db/company-scope.js";
import { timeSlices } from "../../platform/time-slices.js";
import { type EventRatingWrite, listPeriodEventsPage, type StoredRatingRow } from "./rerating-repository.js";

/** A program version as re-rating prices with it. */
export interface ProgramVersion {
  version: number;
  rules: readonly PricingRule[];
}

export interface Rerating {
  /** The events whose figures changed (amount, rate, rule, version or line), with their new figures. */
  changed: EventRatingWrite[];
  /** Events priced. */
  priced: number;
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
 * A service period's events that count on its invoice (every one but the voided, and but `except`), in the order
 * they were stored, a page at a time: a month of a million events is never one statement's answer, and on the
 * embedded database no other company's statement waits behind one long read.
 */
async function* periodEvents(
  scope: CompanyScope,
  contractId: string,
  periodStart: string,
  options: { except?: string; upToSeq?: string } = {},
): AsyncGenerator<readonly StoredRatingRow[]> {
  for (let after: string | null = null; ; ) {
    const page = await listPeriodEventsPage(scope, { contractId, periodStart, after, upTo: options.upToSeq ?? null });
    if (page.length === 0) return;
    after = page[page.length - 1]!.seq;
    yield options.except === undefined ? page : page.filter((e) => e.id !== options.except);
  }
}

/**
 * Prices a service period's events again, one by one in the order they were stored (the order ingestion priced
 * them in: a cap's room and a tier's running quantity depend on it), each under the program version `programOf`
 * gives it, onto `book`, whose draft holds no usage yet (`clearRated`), credited from `credits` (whose wallet got
 * back what the draft's credit lines held). Under the versions the events were priced with, every event comes out
 * as it was stored. Pure but for the book and wallet it records on. Its cost grows with the month: it gives the
 * event loop back every few milliseconds (platform/time-slices.ts), so that other requests are served between.
 */
async function rerateOnBook(
  pages: AsyncIterable<readonly StoredRatingRow[]>,
  programOf: (event: StoredRatingRow) => ProgramVersion,
  book: OpenBook,
  contractId: string,
  periodStart: string,
  credits: { wallet: CreditWallet; invoiceNumber: string } | undefined,
  keepChanges: boolean,
): Promise<Rerating> {
  const changed: EventRatingWrite[] = [];
  const unpriced: StoredRatingRow[] = [];
  let priced = 0;
  const slices = timeSlices();
  for await (const page of pages) {
    for (const e of page) {
      if (slices.due()) await slices.yield();
      const program = programOf(e);
      const charged = priceAgain(e, program, book, contractId, periodStart, credits);
      if (charged === null) unpriced.push(e);
      else {
        priced++;
        const write = keepChanges ? changeOf(e, charged, program.version) : null;
        if (write !== null) changed.push(write);
      }
    }
  }
  return { changed, priced, unpriced };
}

/** An event priced again onto the book: its rule, charge and line, or null when no rule prices it. */
function priceAgain(
  e: StoredRatingRow,
  program: ProgramVersion,
  book: OpenBook,
  contractId: string,
  periodStart: string,
  credits: { wallet: CreditWallet; invoiceNumber: string } | undefined,
): (ReturnType<typeof chargeOnBook> & { rule: PricingRule }) | null {
  const ratable = ratableOf(e);
  const rule = selectRule(program.rules, ratable);
  if (!rule || (ratable.appliedRate !== null && ratable.feeAmount === null && !takesAppliedRate(rule))) return null;
  const credit = credits?.wallet.has(contractId) ? { ...credits, day: toDateString(e.event_timestamp) } : undefined;
  return { ...chargeOnBook(book, contractId, periodStart, ratable, rule, credit), rule };
}

/** A re-priced event's new figures, or null when they are the ones it has (amount, rate, rule, version, line). */
function changeOf(
  e: StoredRatingRow,
  { rating, lineKey, rule }: ReturnType<typeof chargeOnBook> & { rule: PricingRule },
  version: number,
): EventRatingWrite | null {
  const write: EventRatingWrite = {
    id: e.id,
    ratedAmount: toDecimalString(rating.charge),
    appliedRate: rating.appliedRate === null ? null : toDecimalString(rating.appliedRate),
    ruleId: rule.id,
    pricingVersion: version,
    lineKey,
  };
  const changed =
    !sameDecimal(write.ratedAmount, e.rated_amount) ||
    !sameDecimal(write.appliedRate, e.applied_rate) ||
    write.ruleId !== e.rule_id ||
    write.pricingVersion !== e.pricing_version ||
    write.lineKey !== e.line_key;
  return changed ? write : null;
}

/**
 * The version a stored event was priced with: re-pricing under the versions the events were priced with gives
 * every event as it was stored. A version that is gone is a broken invariant (versions are never deleted).
 */
export function pricedWith(versions: ReadonlyMap<number, ProgramVersion>, contractId: string) {
  return (e: StoredRatingRow): ProgramVersion => {
    const version = versions.get(e.pricing_version);
    if (!version) throw new Error(`contract ${contractId} has no program version ${e.pricing_version}`);
    return version;
  };
}

/** A month to price again: whose, which, on which draft (its number: the credit lines' invoice). */
export interface RerateMonth {
  scope: CompanyScope;
  book: OpenBook;
  wallet: CreditWallet;
  contractId: string;
  periodStart: string;
  invoiceNumber: string;
  /** The program version each event is priced with now. */
  programOf: (event: StoredRatingRow) => ProgramVersion;
  /** An event left out (the one being voided). */
  except?: string;
  /** The last event read (the preview's: the month as it was asked for). */
  upToSeq?: string;
  /** What the month's credit lines held, given back to the grants first; by default what the book's draft held. */
  heldCredits?: Map<string, BigValue>;
  /**
   * False: the new figures of the events that changed are not kept (`changed` comes back empty). The preview stores
   * nothing: a month of 100,000 events' figures held until it answered grew the heap that every request's garbage
   * collection walks.
   */
  keepChanges?: boolean;
  /** Wraps the pages read (the preview counts them, and refuses a month past its limit). */
  limitPages?: (pages: AsyncIterable<readonly StoredRatingRow[]>) => AsyncIterable<readonly StoredRatingRow[]>;
}

/**
 * A month priced again: the one orchestration a void, a dated pricing change and a preview share. The draft's
 * usage, fee and credit lines are taken off the book, what its credit lines held goes back to the grants, and
 * the month's events, read a page at a time in the order they were stored, are priced again onto it.
 */
export async function rerateMonth(month: RerateMonth): Promise<Rerating> {
  const { book, wallet, contractId, periodStart, invoiceNumber } = month;
  const held = book.clearRated(contractId, periodStart);
  wallet.giveBack(contractId, invoiceNumber, month.heldCredits ?? held);
  const pages = periodEvents(month.scope, contractId, periodStart, {
    ...(month.except !== undefined ? { except: month.except } : {}),
    ...(month.upToSeq !== undefined ? { upToSeq: month.upToSeq } : {}),
  });
  return rerateOnBook(
    month.limitPages ? month.limitPages(pages) : pages,
    month.programOf,
    book,
    contractId,
    periodStart,
    {
      wallet,
      invoiceNumber,
    },
    month.keepChanges ?? true,
  );
}
