import { openCredits, saveCredits } from "../credits/credit-service.js";
import { programVersions, type RatingContextCache } from "../contracts/rating-context-cache.js";
import type { LineBook } from "../invoices/line-book.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError } from "../kernel/errors.js";
import type { Tenancy } from "../kernel/tenancy.js";
import { pricedWith, rerateMonth } from "./rerate.js";
import * as reads from "./usage-read-repository.js";
import * as repo from "./rerating-repository.js";

/**
 * POST /v1/billing/usage/{event_id}/void (docs/api.md, "Voiding a usage event"): the event stays stored, voided,
 * and its period's draft is priced again without it, in one transaction under the draft's lock: its line loses
 * what the event added, and the events of its rule priced after it get back the cap room or tier they took from
 * them. An event on an invoice that has left draft answers 409 period_closed (a credit note corrects it). Voiding
 * a voided event changes nothing.
 */
export function createVoidUsageEvent({
  clock,
  book,
  contexts,
}: {
  clock: Clock;
  book: LineBook;
  contexts: RatingContextCache;
}) {
  return async function voidUsageEvent(tenant: Tenancy, eventId: string, reason: string | null): Promise<void> {
    requireScope(tenant, "usage:write");
    const event = await reads.findUsageEvent(tenant.data, eventId);
    if (!event) throw new NotFoundError("usage_event");
    if (event.status === "voided") return;
    const contract = (await contexts.get(tenant.data, [event.contract_id])).get(event.contract_id);
    if (!contract) throw new NotFoundError("usage_event");
    const wanted = {
      contractId: event.contract_id,
      periodStart: event.service_period_start,
      periodEnd: event.service_period_end,
      currency: contract.currency,
      paymentTermsDays: contract.payment_terms_days,
    };
    await book.record(tenant, [wanted], async (tx, open) => {
      const locked = await repo.lockUsageEvent(tx, eventId);
      if (!locked || locked.status === "voided") return;
      if (open.draftNumber(event.contract_id, event.service_period_start) === null) {
        throw new ConflictError(
          `Usage event ${eventId} is billed on invoice ${event.invoice_number}, which has been issued: its period is closed (correct it with a credit note)`,
          "period_closed",
        );
      }
      const versions = await programVersions(tx, event.contract_id);
      const wallet = await openCredits(tx, [event.contract_id]);
      const rerated = await rerateMonth({
        scope: tx,
        book: open,
        wallet,
        contractId: event.contract_id,
        periodStart: event.service_period_start,
        invoiceNumber: event.invoice_number,
        programOf: pricedWith(versions, event.contract_id),
        except: eventId,
      });
      if (rerated.unpriced.length > 0)
        throw new Error(`events no longer priced by their own version: ${rerated.unpriced[0]!.id}`);
      await repo.updateEventRatings(tx, rerated.changed);
      await repo.markEventVoided(tx, eventId, reason, clock.now());
      await saveCredits(tx, wallet, clock.now(), "void");
    });
  };
}
