import type { CompanyScope } from "../../db/company-scope.js";
import type { CompanyData } from "../kernel/tenancy.js";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { periodOf } from "../kernel/billing-period.js";
import { ConflictError } from "../kernel/errors.js";
import { Big, toDecimalString } from "../kernel/money.js";
import { type InvoiceStatus, may } from "./invoice-states.js";
import {
  periodKey,
  withDrafts,
  type DraftInvoice,
  type DraftInvoices,
  type WantedInvoice,
} from "./lifecycle/draft-invoices.js";
import {
  addCharge,
  addCredit,
  creditLineKey,
  isCreditable,
  lineIdentity,
  prepaidLine,
  ruleTotals,
  type Charge,
  type Line,
  type RuleRunningTotals,
} from "./invoice-lines.js";

export { RetryTransaction, type WantedInvoice } from "./lifecycle/draft-invoices.js";

/** Where a charge lands: its line's key and description, and the line's unit price as stored (null on a fee line). */
export interface LinePlace {
  key: string;
  description: string;
  unitPrice: string | null;
}

/** A charge as usage hands it to the book: which line (kind, rule, metric, rate) and the sums it adds. */
export type RatedCharge = Charge;

/** The drafts of one transaction, locked, as the locking path of ingestion records charges on them. */
export interface OpenBook {
  /** The draft's number, or null when its invoice has left draft (its period is closed). */
  draftNumber(contractId: string, periodStart: string): string | null;
  /** What the rule has charged on this draft (against its cap, and its running quantity), with the charges recorded so far. */
  totalsSoFar(contractId: string, periodStart: string, ruleId: string): RuleRunningTotals;
  /** Adds a charge to its line of the draft (an open one); returns the line's key. */
  record(contractId: string, periodStart: string, charge: RatedCharge): string;
  /**
   * Takes every usage, fee and credit line off the draft, with its rules' running totals, so that its events can be
   * priced onto it again (re-rating, usage/rerate.ts). Subscription and one-time lines stay. Returns what each
   * grant's credit line held (grant id → credit), to give back to the grants.
   */
  clearRated(contractId: string, periodStart: string): Map<string, Big>;
  /** The exact total of the draft's lines credits may pay (`isCreditable`) of these metrics (null: every metric). */
  usageTotal(contractId: string, periodStart: string, metrics: ReadonlySet<string> | null): Big;
  /** What the grant's credit line on the draft holds (a credit, 0 or more). */
  creditOf(contractId: string, periodStart: string, grantId: string): Big;
  /** Adds `amount` of a grant's credit to its line on the draft (negative: gives some back). */
  recordCredit(contractId: string, periodStart: string, grantId: string, description: string, amount: Big): void;
}

const ZERO = new Big(0);
const NOTHING: RuleRunningTotals = { capped: ZERO, quantity: ZERO };

/** The place of a usage charge at its rule's own rate, worked out once per rule object (rules are not mutated). */
const ruleRatePlaces = new WeakMap<PricingRule, LinePlace>();

/**
 * The invoices' line book (docs/architecture.md, "Ingestion"): ingestion hands it rated charges and never works out
 * a line key or drives a draft itself. The batch path asks where each charge lands (the database function adds
 * the sums, line-deltas.ts); the locking path records charges on drafts locked for one transaction.
 */
export function createLineBook({ drafts }: { drafts: DraftInvoices }) {
  return {
    /**
     * The line a charge lands on. `atRuleRate`: a usage charge at its rule's own rate (the usual case), whose
     * place is shared by every such charge of the rule.
     */
    placeOf(charge: Pick<Charge, "kind" | "rule" | "metric" | "unitPrice">, atRuleRate: boolean): LinePlace {
      if (atRuleRate && charge.kind === "usage") {
        let place = ruleRatePlaces.get(charge.rule);
        if (!place) {
          place = { ...lineIdentity(charge), unitPrice: charge.unitPrice ? toDecimalString(charge.unitPrice) : null };
          ruleRatePlaces.set(charge.rule, place);
        }
        return place;
      }
      return { ...lineIdentity(charge), unitPrice: charge.unitPrice ? toDecimalString(charge.unitPrice) : null };
    },

    /** Creates the drafts missing for these periods (a short transaction of its own: draft-invoices.ts). */
    ensure(company: CompanyData, wanted: readonly WantedInvoice[]): Promise<Set<string>> {
      return drafts.ensure(company, wanted);
    },

    /**
     * `record`'s work inside a transaction the caller holds (a pricing change, under its contract's lock): locks
     * the wanted drafts, which must exist, runs `work` on their book, saves the lines it changed.
     */
    async recordIn<T>(
      tx: CompanyScope,
      wanted: readonly WantedInvoice[],
      work: (book: OpenBook) => Promise<T>,
    ): Promise<T> {
      const locked = await drafts.lock(tx, wanted);
      const book = openBook(locked);
      const result = await work(book);
      if (book.changed) await drafts.save(tx, locked.values());
      return result;
    },

    /**
     * A prepaid purchase billed as a one-time line on the contract's first open draft from `now`'s month: this
     * month's, or next month's when this month's invoice has left draft (409 `period_closed` when both have).
     * Inside the caller's transaction; the draft's number.
     */
    async billPurchase(
      tx: CompanyScope,
      contract: { id: string; currency: string; payment_terms_days: number },
      purchase: { grantId: string; name: string; amount: Big },
      now: Date,
    ): Promise<string> {
      let month = periodOf(now);
      for (let tries = 0; tries < 2; tries++) {
        const wanted: WantedInvoice = {
          contractId: contract.id,
          periodStart: month.start,
          periodEnd: month.end,
          currency: contract.currency,
          paymentTermsDays: contract.payment_terms_days,
        };
        const draft = [...(await drafts.lock(tx, [wanted])).values()][0];
        if (draft && may(draft.status as InvoiceStatus, "change")) {
          const line = prepaidLine(purchase.grantId, purchase.name, purchase.amount);
          draft.lines.set(line.key, line);
          await drafts.save(tx, [draft]);
          return draft.number;
        }
        month = periodOf(new Date(Date.parse(`${month.end}T00:00:00Z`) + 86_400_000));
      }
      throw new ConflictError(
        "This month's and next month's invoices have left draft: the purchase cannot be billed",
        "period_closed",
      );
    },

    /**
     * Runs `work` in one transaction on the wanted drafts, locked (sorted order) with their lines, then saves the
     * lines it recorded charges on. Creates missing drafts and runs again; retries on RetryTransaction, deadlocks
     * and serialization failures (withDrafts).
     */
    record<T>(
      company: CompanyData,
      wanted: readonly WantedInvoice[],
      work: (tx: CompanyScope, book: OpenBook) => Promise<T>,
    ) {
      return withDrafts(company, drafts, async (tx) => {
        const locked = await drafts.lock(tx, wanted);
        const book = openBook(locked);
        const result = await work(tx, book);
        if (book.changed) await drafts.save(tx, locked.values());
        return result;
      });
    },
  };
}

export type LineBook = ReturnType<typeof createLineBook>;

/**
 * A book over one draft that exists only in memory, never stored (a pricing preview): charges recorded on it
 * land on `lines` exactly as they would on the stored draft.
 */
export function bookInMemory(
  contractId: string,
  periodStart: string,
  currency: string,
): { book: OpenBook; lines: () => Iterable<Line> } {
  const draft: DraftInvoice = {
    number: "preview",
    contractId,
    periodStart,
    currency,
    status: "draft",
    minimum: null,
    projectedAt: null,
    lines: new Map(),
    original: new Map(),
  };
  return { book: openBook(new Map([[periodKey(contractId, periodStart), draft]])), lines: () => draft.lines.values() };
}

/** A book over drafts held in memory, locked for one transaction: records charges on their lines. */
function openBook(locked: ReadonlyMap<string, DraftInvoice>): OpenBook & { readonly changed: boolean } {
  const totals = new Map<string, Map<string, RuleRunningTotals>>(); // draft number → rule id → its totals
  const draftOf = (contractId: string, periodStart: string): DraftInvoice => {
    const draft = locked.get(periodKey(contractId, periodStart));
    if (!draft) throw new Error(`no locked draft for ${contractId} ${periodStart}`);
    return draft;
  };
  const totalsOf = (draft: DraftInvoice): Map<string, RuleRunningTotals> => {
    let byRule = totals.get(draft.number);
    if (!byRule) {
      byRule = ruleTotals(draft.lines.values());
      totals.set(draft.number, byRule);
    }
    return byRule;
  };
  let changed = false;
  return {
    get changed() {
      return changed;
    },
    draftNumber(contractId, periodStart) {
      const draft = draftOf(contractId, periodStart);
      return draft.status === "draft" ? draft.number : null;
    },
    totalsSoFar(contractId, periodStart, ruleId) {
      return totalsOf(draftOf(contractId, periodStart)).get(ruleId) ?? NOTHING;
    },
    record(contractId, periodStart, charge) {
      const draft = draftOf(contractId, periodStart);
      if (charge.kind === "usage") {
        const byRule = totalsOf(draft);
        const sofar = byRule.get(charge.rule.id) ?? NOTHING;
        byRule.set(charge.rule.id, {
          capped: sofar.capped.plus(charge.cappedCharge),
          quantity: charge.unitPrice === null ? sofar.quantity.plus(charge.quantity) : sofar.quantity,
        });
      }
      const { key } = lineIdentity(charge);
      draft.lines.set(key, addCharge(draft.lines.get(key), charge));
      changed = true;
      return key;
    },
    clearRated(contractId, periodStart) {
      const draft = draftOf(contractId, periodStart);
      const credits = new Map<string, Big>();
      for (const [key, line] of draft.lines) {
        if (line.kind === "credit") credits.set(key.slice(creditLineKey("").length), line.chargeTotal.neg());
        if (line.kind === "usage" || line.kind === "fee" || line.kind === "credit") draft.lines.delete(key);
      }
      totals.delete(draft.number);
      changed = true;
      return credits;
    },
    usageTotal(contractId, periodStart, metrics) {
      let total = ZERO;
      for (const line of draftOf(contractId, periodStart).lines.values()) {
        if (isCreditable(line) && (metrics === null || (line.metric !== null && metrics.has(line.metric))))
          total = total.plus(line.chargeTotal);
      }
      return total;
    },
    creditOf(contractId, periodStart, grantId) {
      const line = draftOf(contractId, periodStart).lines.get(creditLineKey(grantId));
      return line ? line.chargeTotal.neg() : ZERO;
    },
    recordCredit(contractId, periodStart, grantId, description, amount) {
      const draft = draftOf(contractId, periodStart);
      const key = creditLineKey(grantId);
      draft.lines.set(key, addCredit(draft.lines.get(key), grantId, description, amount));
      changed = true;
    },
  };
}
