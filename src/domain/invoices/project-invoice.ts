import { programOn } from "../contracts/program-timeline.js";
import type { CompanyScope } from "../../db/company-scope.js";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { requireScope } from "../kernel/actor.js";
import type { Tenancy } from "../kernel/tenancy.js";
import { requireBillingPeriod, requirePeriodInTerm } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError } from "../kernel/errors.js";
import { toJsonMoney } from "../kernel/money.js";
import { periodKey, withDrafts, type DraftInvoice, type DraftInvoices } from "./lifecycle/draft-invoices.js";
import { billInvoice, type BilledInvoice } from "./invoice-figures.js";
import { type InvoiceStatus, may } from "./invoice-states.js";
import { projectLines } from "./invoice-lines.js";
import { findContractTerms } from "./lifecycle/invoice-change-repository.js";
import { findOneTimeRulesBilled } from "./invoice-repository.js";
import type { InvoiceProjection } from "./invoice-schemas.js";

/**
 * Brings a locked draft up to date as projection does (docs/decisions.md, "Invoices", projection): subscription
 * lines, one-time fees not billed on another invoice, the usage rated onto it, the monthly minimum, by its
 * contract's current `rules`. Saves it; returns its figures. Projection and finalizing both call it.
 */
export async function bringUpToDate(
  { tx, clock, drafts }: { tx: CompanyScope; clock: Clock; drafts: DraftInvoices },
  rules: readonly PricingRule[],
  draft: DraftInvoice,
): Promise<BilledInvoice> {
  const billedElsewhere = await findOneTimeRulesBilled(tx, draft.contractId, draft.number);
  const { lines, minimum } = projectLines([...draft.lines.values()], rules, billedElsewhere);
  draft.lines = lines;
  draft.minimum = minimum;
  draft.projectedAt = clock.now();
  await drafts.save(tx, [draft]);
  return billInvoice(lines.values(), minimum, draft.currency);
}

/** 409 for a projection of a period whose invoice has left draft: the period is closed. */
const notADraft = (status: InvoiceStatus, number: string) =>
  new ConflictError(
    `Invoice ${number} is ${status}: its period is closed and its lines no longer change`,
    `invoice_is_${status}`,
  );

/**
 * Creates or updates the draft of a contract and month (docs/decisions.md, "Invoices", projection): subscription
 * lines, one-time fees not billed yet, the usage already rated onto it, and the minimum true-up.
 * Idempotent: projecting again changes nothing that is already right.
 */
export function createProjectInvoice({ clock, drafts }: { clock: Clock; drafts: DraftInvoices }) {
  return async function project(
    tenant: Tenancy,
    input: { contractId: string; periodStart: string; periodEnd: string },
  ): Promise<InvoiceProjection> {
    requireScope(tenant, "invoices:write");
    const period = requireBillingPeriod(input);
    const contract = await findContractTerms(tenant.data, input.contractId);
    if (!contract) throw new NotFoundError("contract");
    requirePeriodInTerm(period, contract);
    const wanted = {
      contractId: contract.id,
      periodStart: period.start,
      periodEnd: period.end,
      currency: contract.currency,
      paymentTermsDays: contract.payment_terms_days,
    };
    const created = new Set<string>();
    const ensureAndRemember: DraftInvoices = {
      ...drafts,
      ensure: async (company, list) => {
        const numbers = await drafts.ensure(company, list);
        for (const n of numbers) created.add(n);
        return numbers;
      },
    };
    return withDrafts(tenant, ensureAndRemember, async (tx) => {
      const draft = (await drafts.lock(tx, [wanted])).get(periodKey(contract.id, period.start))!;
      if (!may(draft.status as InvoiceStatus, "change")) throw notADraft(draft.status as InvoiceStatus, draft.number);
      const totals = await bringUpToDate({ tx, clock, drafts }, programOn(contract.programs, period.end).rules, draft);
      return {
        object: "invoice" as const,
        number: draft.number,
        contract: contract.id,
        status: "draft",
        is_new: created.has(draft.number),
        subtotal: toJsonMoney(totals.subtotal, draft.currency),
        tax: toJsonMoney(totals.tax, draft.currency),
        total: toJsonMoney(totals.total, draft.currency),
        currency: draft.currency,
        billing_period: { start: period.start, end: period.end },
      };
    });
  };
}
