import type { RatingContextCache } from "../contracts/rating-context-cache.js";
import { normalizeProgram, type RuleFields } from "../contracts/pricing-rule.js";
import { programOn } from "../contracts/program-timeline.js";
import { bookInMemory } from "../invoices/line-book.js";
import { comparePeriodBills, creditsOnPeriod } from "../invoices/period-comparison.js";
import { peekCredits } from "../credits/credit-service.js";
import type { PricingPreview } from "../invoices/invoice-schemas.js";
import { requireScope } from "../kernel/actor.js";
import { requireBillingPeriod, requirePeriodInTerm } from "../kernel/billing-period.js";
import { NotFoundError } from "../kernel/errors.js";
import type { Tenancy } from "../kernel/tenancy.js";
import { rerateOnBook } from "./rerate.js";
import { listPeriodEvents } from "./usage-repository.js";

/** A previewed program, as the API takes it (contract-schemas.ts, `pricingPreviewInput`). */
export interface PreviewRequest {
  rules: readonly RuleFields[];
  periodStart: string;
  periodEnd: string;
}

/**
 * POST /v1/billing/contracts/{id}/pricing/preview (docs/api.md, "Previewing a pricing change"): the period's stored
 * events (voided ones left out) priced again, in the order they were stored, under the previewed program, on a
 * draft that exists only in memory; then that draft beside the period's invoice as it stands. The same rating
 * as ingestion's locking path and re-rating (rerate.ts), so that the preview is the invoice the program would
 * give. Nothing is stored.
 */
export function createPricingPreview({ contexts }: { contexts: RatingContextCache }) {
  return async function preview(tenant: Tenancy, contractId: string, request: PreviewRequest): Promise<PricingPreview> {
    requireScope(tenant, "contracts:read");
    const period = requireBillingPeriod(request);
    const contract = (await contexts.get(tenant.data, [contractId], true)).get(contractId);
    if (!contract) throw new NotFoundError("contract");
    requirePeriodInTerm(period, contract);
    const proposed = normalizeProgram(request.rules, contract.currency);
    const events = await listPeriodEvents(tenant.data, contractId, period.start);
    const { book, lines } = bookInMemory(contractId, period.start, contract.currency);
    const program = { version: 0, rules: proposed };
    // The grants as they stand, with what they cover of this month given back: the month burns them again.
    const wallet = await peekCredits(tenant.data, contractId);
    wallet.giveBack(contractId, "preview", await creditsOnPeriod(tenant.data, contractId, period.start));
    const rerated = rerateOnBook(events, () => program, book, contractId, period.start, {
      wallet,
      invoiceNumber: "preview",
    });
    return comparePeriodBills(tenant.data, {
      contractId,
      period,
      currency: contract.currency,
      rulesNow: programOn(contract.programs, period.end).rules,
      proposed,
      ratedLines: lines(),
      events: events.length - rerated.unpriced.length,
      unpriced: rerated.unpriced.length,
    });
  };
}
