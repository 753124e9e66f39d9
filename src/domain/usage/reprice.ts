import type { CompanyScope } from "../../db/company-scope.js";
import { type InvoiceStatus, may } from "../invoices/invoice-states.js";
import { programOn, type ProgramSegment } from "../contracts/program-timeline.js";
import { openCredits, saveCredits } from "../credits/credit-service.js";
import { programVersions } from "../contracts/rating-context-cache.js";
import { invoicesEndingFrom } from "../invoices/lifecycle/draft-invoices.js";
import type { LineBook } from "../invoices/line-book.js";
import type { Clock } from "../kernel/clock.js";
import { toDateString } from "../kernel/billing-period.js";
import { ConflictError } from "../kernel/errors.js";
import { pricedWith, rerateMonth } from "./rerate.js";
import { updateEventRatings } from "./rerating-repository.js";

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
    const wanted = invoices.map((i) => ({
      contractId: contract.id,
      periodStart: i.periodStart,
      periodEnd: i.periodEnd,
      currency: contract.currency,
      paymentTermsDays: 30, // the drafts exist: none is created here
    }));
    const versions = await programVersions(tx, contract.id);
    const inForce = new Map<string, ProgramSegment>();
    await book.recordIn(tx, wanted, async (open) => {
      const wallet = await openCredits(tx, [contract.id]);
      for (const invoice of invoices) {
        if (open.draftNumber(contract.id, invoice.periodStart) === null) {
          throw new ConflictError(
            `Invoice ${invoice.number} was issued meanwhile: its period is closed`,
            "period_closed",
          );
        }
        const stored = pricedWith(versions, contract.id);
        const rerated = await rerateMonth({
          scope: tx,
          book: open,
          wallet,
          contractId: contract.id,
          periodStart: invoice.periodStart,
          invoiceNumber: invoice.number,
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
        });
        if (rerated.unpriced.length > 0) {
          const first = rerated.unpriced[0]!;
          throw new ConflictError(
            `${rerated.unpriced.length} usage event(s) from ${from} on would have no rule under the changed program (the first: ${first.id}, metric '${first.metric}')`,
            "usage_without_rule",
          );
        }
        await updateEventRatings(tx, rerated.changed);
      }
      await saveCredits(tx, wallet, clock.now());
    });
  };
}
