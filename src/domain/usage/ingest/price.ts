import type { CreditWallet } from "../../credits/credit-wallet.js";
import type { LineBook, OpenBook } from "../../invoices/line-book.js";
import { toDateString } from "../../kernel/billing-period.js";
import { Big, toDecimalString } from "../../kernel/money.js";
import type { PricingRule } from "../../contracts/pricing-rule.js";
import { priceCharge, type Priced, type RatableEvent } from "../pricers.js";
import type { BatchEventWrite, RatedEventWrite } from "../usage-repository.js";
import type { Candidate, JudgedBatch } from "./judge.js";
import type { Stage } from "./outcome.js";

const NOTHING_CHARGED = { capped: new Big(0), quantity: new Big(0) };

/** The batch as pricing hands it to the batch path of the write: one write per candidate, in batch order. */
export interface PricedBatch extends JudgedBatch {
  writes: readonly BatchEventWrite[];
}

/** Stage 3 on the batch path: every candidate priced and placed on its line, handed on. */
export const priceStage =
  ({ book, next }: { book: LineBook; next: Stage<PricedBatch> }): Stage<JudgedBatch> =>
  (tenant, batch) => {
    const { candidates } = batch.judgement;
    const writes = new Array<BatchEventWrite>(candidates.length);
    for (let i = 0; i < candidates.length; i++) writes[i] = priceForBatch(candidates[i] as Candidate, book);
    return next(tenant, { ...batch, writes });
  };

/**
 * Stage 3, on the batch path (no monthly cap in the batch: pricing needs nothing stored): the event's charge
 * (pricers.ts: its pricer, then the steps after pricing) and the line the book says it lands on.
 */
function priceForBatch(c: Candidate, book: LineBook): BatchEventWrite {
  const rating = priceCharge(c.ratable, c.rule, NOTHING_CHARGED);
  const place = book.placeOf(
    { kind: rating.kind, rule: c.rule, metric: c.input.metric, unitPrice: rating.appliedRate },
    c.ratable.appliedRate === null,
  );
  // The stored fields, then where it lands (added in one fixed order: every write has the same shape).
  const write = eventWrite(c, rating, place.unitPrice) as BatchEventWrite;
  write.programHead = c.contract.current_version;
  write.lineKey = place.key;
  write.kind = rating.kind;
  write.description = place.description;
  write.unitPrice = place.unitPrice;
  write.quantityDecimal = c.input.quantity;
  write.chargeDecimal = rating.charge;
  return write;
}

/**
 * Stage 3, on the locking path: the event's charge against what its rule has charged on the locked draft so
 * far (its cap room), recorded on the draft's line by the book, and credited from its contract's grants.
 * `invoiceNumber`: the draft, open.
 */
export function priceOnBook(
  c: Candidate,
  book: OpenBook,
  invoiceNumber: string,
  wallet: CreditWallet | null,
): RatedEventWrite {
  const credit =
    wallet?.has(c.contract.id) === true
      ? { wallet, invoiceNumber, day: toDateString(new Date(c.input.timestamp)) }
      : undefined;
  const { rating, lineKey } = chargeOnBook(book, c.contract.id, c.periodStart, c.ratable, c.rule, credit);
  return { ...eventWrite(c, rating), invoiceNumber, lineKey };
}

/** Where an event's usage charge is credited from: its contract's grants, on its draft, on its day. */
export interface CreditOf {
  wallet: CreditWallet;
  invoiceNumber: string;
  day: string;
}

/** One event being charged on an open draft, as the charging steps pass it along. */
interface OnBook {
  readonly book: OpenBook;
  readonly contractId: string;
  readonly periodStart: string;
  readonly event: RatableEvent;
  readonly rule: PricingRule;
  readonly credit: CreditOf | undefined;
  rating?: Priced;
  lineKey?: string;
}

/** Step "price": the charge against what the rule has charged on the draft so far (its cap room, its running quantity). */
function priceStep(c: OnBook): void {
  c.rating = priceCharge(c.event, c.rule, c.book.totalsSoFar(c.contractId, c.periodStart, c.rule.id));
}

/** Step "record": the charge added to its line of the draft, by the book. */
function recordStep(c: OnBook): void {
  const rating = c.rating!;
  c.lineKey = c.book.record(c.contractId, c.periodStart, {
    kind: rating.kind,
    rule: c.rule,
    metric: c.event.metric,
    quantity: c.event.quantity,
    unitPrice: rating.appliedRate,
    charge: rating.charge,
    cappedCharge: rating.cappedCharge,
    ...(rating.tiers ? { tiers: rating.tiers } : {}),
  });
}

/**
 * Step "credits": a usage charge or pre-calculated fee paid from the contract's grants that cover its day and
 * metric (credit-wallet.ts); a pass-through rule's charge never (invoice-lines.ts, `isCreditable`).
 */
function creditStep(c: OnBook): void {
  const rating = c.rating!;
  if (!c.credit || c.rule.pass_through === true) return;
  c.credit.wallet.apply(
    c.book,
    c.credit.invoiceNumber,
    c.contractId,
    c.periodStart,
    c.credit.day,
    c.event.metric,
    rating.charge,
  );
}

/**
 * What charging one event on an open draft does, in order: the locking path of ingestion and re-rating run
 * these, so that a step added here (a discount, a ledger posting of the charge) applies to both.
 */
const CHARGE_ON_BOOK: readonly ((c: OnBook) => void)[] = [priceStep, recordStep, creditStep];

/**
 * An event's charge on an open draft (CHARGE_ON_BOOK's steps), with the key of the line it landed on. `credit`:
 * the grants it is credited from, if the contract has any.
 */
export function chargeOnBook(
  book: OpenBook,
  contractId: string,
  periodStart: string,
  event: RatableEvent,
  rule: PricingRule,
  credit?: CreditOf,
): { rating: Priced; lineKey: string } {
  const c: OnBook = { book, contractId, periodStart, event, rule, credit };
  for (const step of CHARGE_ON_BOOK) step(c);
  return { rating: c.rating!, lineKey: c.lineKey! };
}

/** The stored fields of a rated event, but for where it lands. `appliedRate`: the rating's rate as text. */
function eventWrite(
  c: Candidate,
  rating: Priced,
  appliedRate: string | null = rating.appliedRate ? toDecimalString(rating.appliedRate) : null,
): Omit<RatedEventWrite, "invoiceNumber" | "lineKey"> {
  return {
    id: c.input.event_id,
    contractId: c.contract.id,
    metric: c.input.metric,
    quantity: toDecimalString(c.input.quantity),
    feeAmount: c.input.fee_amount ? toDecimalString(c.input.fee_amount) : null,
    appliedRate,
    sentRate:
      c.input.applied_rate !== undefined && c.input.fee_amount === undefined
        ? toDecimalString(c.input.applied_rate)
        : null,
    counterparty: c.input.counterparty ?? null,
    counterpartySide: c.input.counterparty_side ?? null,
    pair: c.input.pair ?? null,
    ratedAmount: toDecimalString(rating.charge),
    ruleId: c.rule.id,
    pricingVersion: c.version,
    periodStart: c.periodStart,
    periodEnd: c.periodEnd,
    timestamp: c.input.timestamp,
  };
}
