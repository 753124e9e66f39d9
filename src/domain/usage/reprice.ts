import type { CompanyScope } from "../../db/company-scope.js";
import { type InvoiceStatus, may } from "../invoices/invoice-states.js";
import { programOn, type ProgramSegment } from "../contracts/program-timeline.js";
import { openCredits, saveCredits } from "../credits/credit-service.js";
import { programVersions } from "../contracts/rating-context-cache.js";
import { invoicesEndingFrom, type PeriodInvoice } from "../invoices/lifecycle/draft-invoices.js";
import type { LineBook } from "../invoices/line-book.js";
import type { Clock } from "../kernel/clock.js";
import { toDateString } from "../kernel/billing-period.js";
import { ConflictError } from "../kernel/errors.js";
import { pricedWith, rerateMonth, type ProgramVersion } from "./rerate.js";
import { type StoredRatingRow, updateEventRatings } from "./rerating-repository.js";

/** The contract a dated pricing change re-prices, as the change holds it (locked). */
export interface RepricedContract {
  id: string;
  currency: string;
}

/**
 * What a pricing change dated `from` does to the usage already billed (docs/api.md, "Scheduled changes"), inside
 * the change's transaction, under its contract's lock: refuses it (409 period_closed) when an invoice whose
 * period ends on or after that day has left draft; else prices the events of every open draft from that day on
 * again under the program `segments` (the timeline with the change), under the drafts' locks. Events before the
 * day keep the version they were priced with, and so their charges; those from the day on take the version in
 * force on their day. An event the new program cannot price refuses the change (409 usage_without_rule).
 */
export function createRepricing({ book, clock }: { book: LineBook; clock: Clock }) {
  return async function repriceFrom(
    tx: CompanyScope,
    contract: RepricedContract,
    from: string,
    segments: readonly ProgramSegment[],
  ): Promise<void> {
    const invoices = await invoicesEndingFrom(tx, contract.id, from);
    const closed = invoices.find((i) => !may(i.status as InvoiceStatus, "change"));
    if (closed) {
      throw new ConflictError(
        `Invoice ${closed.number} (${closed.periodStart}..${closed.periodEnd}) is ${closed.status}: a change dated ${from} would reach its closed period`,
        "period_closed",
      );
    }
    if (invoices.length === 0) return;
    const versions = await programVersions(tx, contract.id);
    const stored = pricedWith(versions, contract.id);
    const inForce = new Map<string, ProgramSegment>();
    await rerateDrafts({ tx, book, clock }, contract, invoices, {
      // Before the day, the version an event was priced with; from the day on, the one in force on its day.
      programOf: (e) => {
        const day = toDateString(e.event_timestamp);
        if (day < from) return stored(e);
        let segment = inForce.get(day);
        if (!segment) {
          segment = programOn(segments, day);
          inForce.set(day, segment);
        }
        return segment;
      },
      onUnpriced: (unpriced) => {
        const first = unpriced[0]!;
        throw new ConflictError(
          `${unpriced.length} usage event(s) from ${from} on would have no rule under the changed program (the first: ${first.id}, metric '${first.metric}')`,
          "usage_without_rule",
        );
      },
    });
  };
}

/**
 * Open drafts of one contract priced again in the caller's transaction, under their locks, with one wallet: what
 * every draft's credit lines held goes back to the grants first, then the months are priced in period order, so
 * that a grant pays for the earliest usage it covers whatever the order the events or the grant arrived in. Each
 * event under the version `programOf` gives it; events no rule prices go to `onUnpriced`, which throws. The
 * events' new figures and the grants' movements (`burn` entries) are saved.
 */
export async function rerateDrafts(
  { tx, book, clock }: { tx: CompanyScope; book: LineBook; clock: Clock },
  contract: RepricedContract,
  invoices: readonly PeriodInvoice[],
  how: { programOf: (e: StoredRatingRow) => ProgramVersion; onUnpriced?: (unpriced: StoredRatingRow[]) => never },
): Promise<void> {
  const months = [...invoices].sort((a, b) => (a.periodStart < b.periodStart ? -1 : 1));
  const wanted = months.map((i) => ({
    contractId: contract.id,
    periodStart: i.periodStart,
    periodEnd: i.periodEnd,
    currency: contract.currency,
    paymentTermsDays: 30, // the drafts exist: none is created here
  }));
  await book.recordIn(tx, wanted, async (open) => {
    const wallet = await openCredits(tx, [contract.id]);
    for (const invoice of months) {
      if (open.draftNumber(contract.id, invoice.periodStart) === null) {
        throw new ConflictError(
          `Invoice ${invoice.number} was issued meanwhile: its period is closed`,
          "period_closed",
        );
      }
      wallet.giveBack(contract.id, invoice.number, open.clearRated(contract.id, invoice.periodStart));
    }
    for (const invoice of months) {
      const rerated = await rerateMonth({
        scope: tx,
        book: open,
        wallet,
        contractId: contract.id,
        periodStart: invoice.periodStart,
        invoiceNumber: invoice.number,
        programOf: how.programOf,
        heldCredits: new Map(),
      });
      if (rerated.unpriced.length > 0) how.onUnpriced?.(rerated.unpriced);
      await updateEventRatings(tx, rerated.changed);
    }
    await saveCredits(tx, wallet, clock.now());
  });
}
