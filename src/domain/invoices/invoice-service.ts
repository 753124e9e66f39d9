import { forCompany } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import { findRatingContexts } from "../contracts/contract-repository.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { isCalendarMonth, periodOf, parseDate } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError, ValidationError } from "../kernel/errors.js";
import type { JsonNumber } from "../../platform/exact-json.js";
import { Big, toJsonDecimal, toJsonMoney } from "../kernel/money.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { periodKey, withDrafts, type DraftInvoices } from "./draft-invoices.js";
import { billInvoice, type BilledInvoice } from "./invoice-figures.js";
import { lineFromRecord, projectLines } from "./invoice-lines.js";
import * as repo from "./invoice-repository.js";
import type { Invoice, InvoiceProjection, InvoiceWithLines } from "./invoice-schemas.js";

/** Every figure of a stored invoice, derived from its lines by the one function that derives them. */
const billStored = (row: Pick<repo.InvoiceRow, "lines" | "minimum_amount" | "currency">): BilledInvoice =>
  billInvoice(row.lines.map(lineFromRecord), row.minimum_amount === null ? null : new Big(row.minimum_amount), row.currency);

function presentInvoice(row: repo.InvoiceRow, billed: BilledInvoice): Invoice {
  return {
    object: "invoice",
    number: row.number,
    contract: row.contract_id,
    status: row.status,
    subtotal: toJsonMoney(billed.subtotal, row.currency),
    tax: toJsonMoney(billed.tax, row.currency),
    total: toJsonMoney(billed.total, row.currency),
    currency: row.currency,
    billing_period: { start: row.period_start, end: row.period_end },
    issued_date: row.issued_date,
    due_date: row.due_date,
    paid_date: row.paid_date,
    metrics: row.metrics,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function presentLines(billed: BilledInvoice, currency: string) {
  return billed.lines.map((l) => ({
    description: l.description,
    quantity: toJsonDecimal(l.quantity),
    unit_price: toJsonDecimal(l.unitPrice),
    amount: toJsonMoney(l.amount, currency),
    kind: l.kind,
    rule_id: l.ruleId,
    metric: l.metric,
  }));
}

const presentListed = (row: repo.InvoiceRow) => presentInvoice(row, billStored(row));

export function createInvoiceService({ db, clock, drafts }: { db: Database; clock: Clock; drafts: DraftInvoices }) {
  return {
    async list(actor: Actor, filter: repo.InvoiceFilter, page: PageRequest): Promise<Page<Invoice>> {
      requireScope(actor, "invoices:read");
      let afterSeq: string | undefined;
      if (page.startingAfter !== undefined) {
        afterSeq = await repo.findInvoiceSeq(forCompany(db, actor.companyId), page.startingAfter);
        if (afterSeq === undefined) throw new ValidationError("starting_after does not name an invoice of this company", "invalid_cursor");
      }
      const rows = await repo.listInvoices(forCompany(db, actor.companyId), filter, afterSeq, page.limit);
      const result = toPage(rows, page.limit);
      return { items: result.items.map(presentListed), hasMore: result.hasMore };
    },

    async get(actor: Actor, number: string): Promise<InvoiceWithLines> {
      requireScope(actor, "invoices:read");
      const row = await repo.findInvoice(forCompany(db, actor.companyId), number);
      if (!row) throw new NotFoundError("invoice");
      const billed = billStored(row);
      return { ...presentInvoice(row, billed), line_items: presentLines(billed, row.currency) };
    },

    /**
     * Creates or updates the draft of a contract and month (docs/decisions.md, "Invoices", projection): subscription
     * lines, one-time fees not billed yet, the usage already rated onto it, and the minimum true-up.
     * Idempotent: projecting again changes nothing that is already right.
     */
    async project(actor: Actor, input: { contractId: string; periodStart: string; periodEnd: string }): Promise<InvoiceProjection> {
      requireScope(actor, "invoices:write");
      if (!isCalendarMonth(input.periodStart, input.periodEnd)) {
        throw new ValidationError(
          "The billing period must be exactly one calendar month: its first day to its last day",
          "invalid_billing_period",
        );
      }
      const [contract] = await findRatingContexts(forCompany(db, actor.companyId), [input.contractId]);
      if (!contract) throw new NotFoundError("contract");
      if (input.periodEnd < contract.start_date || (contract.end_date !== null && input.periodStart > contract.end_date)) {
        throw new ValidationError(
          `The billing period lies outside the contract term ${contract.start_date}..${contract.end_date ?? "(open)"}`,
          "outside_contract_term",
        );
      }
      const period = periodOf(parseDate(input.periodStart)!);
      const wanted = {
        contractId: contract.id,
        periodStart: period.start,
        periodEnd: period.end,
        currency: contract.currency,
        paymentTerms: contract.payment_terms,
      };
      const created = new Set<string>();
      const ensureAndRemember: DraftInvoices = {
        ...drafts,
        ensure: async (companyId, list) => {
          const numbers = await drafts.ensure(companyId, list);
          for (const n of numbers) created.add(n);
          return numbers;
        },
      };
      return withDrafts(db, ensureAndRemember, actor.companyId, async (tx) => {
        const draft = (await drafts.lock(tx, actor.companyId, [wanted])).get(periodKey(contract.id, period.start))!;
        const billedElsewhere = await repo.findOneTimeRulesBilled(forCompany(tx, actor.companyId), contract.id, draft.number);
        const { lines, minimum } = projectLines([...draft.lines.values()], contract.rules, billedElsewhere);
        draft.lines = lines;
        draft.minimum = minimum;
        draft.projectedAt = clock.now();
        await drafts.save(tx, actor.companyId, [draft]);
        const totals = billInvoice(lines.values(), minimum, draft.currency);
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
    },

    /**
     * This month so far, by the service's clock (dashboard overview): the calendar month, its newest `limit`
     * draft invoices (one per contract) and the totals per currency over all of the month's drafts.
     */
    async monthToDate(
      actor: Actor,
      limit: number,
    ): Promise<{ period: { start: string; end: string }; invoices: Page<Invoice>; totals: { currency: string; total: JsonNumber; invoices: number }[] }> {
      requireScope(actor, "invoices:read");
      const period = periodOf(clock.now());
      const pageSize = Math.min(Math.max(Math.trunc(limit) || 1, 1), 100);
      const rows = await repo.listInvoices(forCompany(db, actor.companyId), { status: "draft", from: period.start, to: period.end }, undefined, pageSize);
      const page = toPage(rows, pageSize);
      // Totals per currency over all of the month's drafts, each derived from its lines, read a page at a time.
      const sums = new Map<string, { total: Big; invoices: number }>();
      for (let after: string | null = null; ; ) {
        const states = await repo.listInvoiceStates(forCompany(db, actor.companyId), "draft", period.start, after, 1000);
        for (const state of states) {
          const sum = sums.get(state.currency) ?? { total: new Big(0), invoices: 0 };
          sums.set(state.currency, { total: sum.total.plus(billStored(state).total), invoices: sum.invoices + 1 });
        }
        if (states.length < 1000) break;
        after = states[states.length - 1]!.seq;
      }
      return {
        period,
        invoices: { items: page.items.map(presentListed), hasMore: page.hasMore },
        totals: [...sums.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([currency, s]) => ({ currency, total: toJsonMoney(s.total, currency), invoices: s.invoices })),
      };
    },
  };
}
