import type { RatingContextCache } from "../contracts/rating-context-cache.js";
import { normalizeProgram, type RuleFields } from "../contracts/pricing-rule.js";
import { programOn } from "../contracts/program-timeline.js";
import { bookInMemory } from "../invoices/line-book.js";
import { comparePeriodBills, creditsOnPeriod } from "../invoices/period-comparison.js";
import { peekCredits } from "../credits/credit-service.js";
import type { PricingPreview } from "../invoices/invoice-schemas.js";
import { requireScope } from "../kernel/actor.js";
import { requireBillingPeriod, requirePeriodInTerm } from "../kernel/billing-period.js";
import { NotFoundError, RateLimitedError, ValidationError } from "../kernel/errors.js";
import { createFairQueue, type FairQueueLimits, QueueFullError } from "../../platform/fair-queue.js";
import type { Tenancy } from "../kernel/tenancy.js";
import { pricedWith, rerateMonth } from "./rerate.js";
import { programVersions } from "../contracts/rating-context-cache.js";
import { toDateString } from "../kernel/billing-period.js";
import { lastPeriodSeq } from "./rerating-repository.js";

/** A previewed program, as the API takes it (contract-schemas.ts, `pricingPreviewInput`). */
export interface PreviewRequest {
  rules: readonly RuleFields[];
  periodStart: string;
  periodEnd: string;
  /** The day the program would apply from (null: the whole month); events before it keep their stored version. */
  effectiveDate?: string | null;
}

/**
 * The most stored events a previewed month may hold (docs/api.md, "Limits"): pricing them again is work of one
 * core for a few seconds at most, done in slices between other requests (rerate.ts).
 */
export const MAX_PREVIEW_EVENTS = 100_000;

/**
 * Previews priced at once over the service, one per company; a company's second preview while its first runs is
 * refused, as is any once eight wait: a preview is a few seconds of a core, and every waiting one holds its rules.
 */
const PREVIEW_QUEUE: FairQueueLimits = { slots: 2, runningPerKey: 1, perKey: 1, waiting: 8 };

/** When a company refused `too_many_previews` may try again. */
const PREVIEW_RETRY_SECONDS = 5;

/**
 * A month's pages of events, refused once they hold more than `max` (counted as they are read: a count of the
 * month first would be one statement over all its events, which on the embedded database holds every other
 * company's statement back).
 */
async function* atMost<T>(max: number, pages: AsyncIterable<readonly T[]>): AsyncGenerator<readonly T[]> {
  let read = 0;
  for await (const page of pages) {
    read += page.length;
    if (read > max) {
      throw new ValidationError(
        `The month holds more than ${max.toLocaleString("en-US")} usage events, the most a preview prices again`,
        "preview_too_large",
        [{ path: "billing_period_start", message: `a month of at most ${max} usage events` }],
      );
    }
    yield page;
  }
}

/**
 * POST /v1/billing/contracts/{id}/pricing/preview (docs/api.md, "Previewing a pricing change"): the period's stored
 * events (voided ones left out) priced again, in the order they were stored, under the previewed program, on a
 * draft that exists only in memory; then that draft beside the period's invoice as it stands. The same rating
 * as ingestion's locking path and re-rating (rerate.ts), so that the preview is the invoice the program would
 * give. Nothing is stored.
 */
export function createPricingPreview({ contexts }: { contexts: RatingContextCache }) {
  const queue = createFairQueue(PREVIEW_QUEUE);
  return async function preview(tenant: Tenancy, contractId: string, request: PreviewRequest): Promise<PricingPreview> {
    requireScope(tenant, "contracts:read");
    const period = requireBillingPeriod(request);
    const contract = (await contexts.get(tenant.data, [contractId], true)).get(contractId);
    if (!contract) throw new NotFoundError("contract");
    requirePeriodInTerm(period, contract);
    const proposed = normalizeProgram(request.rules, contract.currency);
    const from = request.effectiveDate ?? null;
    if (from !== null && (from < period.start || from > period.end)) {
      throw new ValidationError("effective_date must be a day of the previewed month", "invalid_request", [
        { path: "effective_date", message: `must be from ${period.start} to ${period.end}` },
      ]);
    }
    const stored = from === null ? null : pricedWith(await programVersions(tenant.data, contractId), contractId);
    // The events stored so far, and no later one: the preview prices the month as it was when it was asked for.
    const lastSeq = await lastPeriodSeq(tenant.data, contractId, period.start);
    const work = async () => {
      const { book, lines } = bookInMemory(contractId, period.start, contract.currency);
      const program = { version: 0, rules: proposed };
      const rerated = await rerateMonth({
        scope: tenant.data,
        book,
        // The grants as they stand, with what they cover of this month given back: the month burns them again.
        wallet: await peekCredits(tenant.data, contractId),
        heldCredits: await creditsOnPeriod(tenant.data, contractId, period.start),
        contractId,
        periodStart: period.start,
        invoiceNumber: "preview",
        // As saving the change would: before its day, the version an event was priced with (usage/reprice.ts).
        programOf: (e) => (stored !== null && toDateString(e.event_timestamp) < from! ? stored(e) : program),
        upToSeq: lastSeq ?? "0",
        keepChanges: false,
        limitPages: (pages) => atMost(MAX_PREVIEW_EVENTS, pages),
      });
      return comparePeriodBills(tenant.data, {
        contractId,
        period,
        currency: contract.currency,
        rulesNow: programOn(contract.programs, period.end).rules,
        proposed,
        ratedLines: lines(),
        events: rerated.priced,
        unpriced: rerated.unpriced.length,
      });
    };
    return queue.run(tenant.companyId, work).catch((error: unknown) => {
      if (!(error instanceof QueueFullError)) throw error;
      throw new RateLimitedError(
        PREVIEW_RETRY_SECONDS,
        error.bound === "key"
          ? "Your company has a pricing preview running already; try again when it has answered"
          : "The service is pricing as many previews as it holds; try again in a few seconds",
        "too_many_previews",
      );
    });
  };
}
