import type { Database } from "../../db/database.js";
import { findRatingContexts } from "../contracts/contract-repository.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { isCalendarMonth, periodOf, parseDate } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError, ValidationError } from "../kernel/errors.js";
import type { JsonNumber } from "../../platform/exact-json.js";
import { toJsonDecimal, toJsonMoney } from "../kernel/money.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { periodKey, withDrafts, type DraftInvoices } from "./draft-invoices.js";
import { projectLines, sortLines, totalsOf, type LineKindName } from "./invoice-lines.js";
import * as repo from "./invoice-repository.js";
import type { Invoice, InvoiceProjection, InvoiceWithLines } from "./invoice-schemas.js";

function presentInvoice(row: repo.InvoiceRow): Invoice {
  return {
    object: "invoice",
    number: row.number,
    contract: row.contract_id,
    status: row.status,
    subtotal: toJsonMoney(row.subtotal, row.currency),
    tax: toJsonMoney(row.tax, row.currency),
    total: toJsonMoney(row.total, row.currency),
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

function presentLines(lines: repo.LineRow[], currency: string) {
  return sortLines(lines.map((l) => ({ ...l, kind: l.kind as LineKindName }))).map((l) => ({
    description: l.description,
    quantity: toJsonDecimal(l.quantity),
    unit_price: toJsonDecimal(l.unit_price),
    amount: toJsonMoney(l.amount, currency),
    kind: l.kind,
    rule_id: l.rule_id,
    metric: l.metric,
  }));
}

export function createInvoiceService({ db, clock, drafts }: { db: Database; clock: Clock; drafts: DraftInvoices }) {
  return {
    async list(actor: Actor, filter: repo.InvoiceFilter, page: PageRequest): Promise<Page<Invoice>> {
      requireScope(actor, "invoices:read");
      let afterSeq: string | undefined;
      if (page.startingAfter !== undefined) {
        afterSeq = await repo.findInvoiceSeq(db, actor.companyId, page.startingAfter);
        if (afterSeq === undefined) throw new ValidationError("starting_after does not name an invoice of this company", "invalid_cursor");
      }
      const rows = await repo.listInvoices(db, actor.companyId, filter, afterSeq, page.limit);
      const result = toPage(rows, page.limit);
      return { items: result.items.map(presentInvoice), hasMore: result.hasMore };
    },

    async get(actor: Actor, number: string): Promise<InvoiceWithLines> {
      requireScope(actor, "invoices:read");
      const row = await repo.findInvoice(db, actor.companyId, number);
      if (!row) throw new NotFoundError("invoice");
      return { ...presentInvoice(row), line_items: presentLines(row.lines, row.currency) };
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
      const [contract] = await findRatingContexts(db, actor.companyId, [input.contractId]);
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
        const billedElsewhere = await repo.findOneTimeRulesBilled(tx, actor.companyId, contract.id, draft.number);
        const { lines, minimum } = projectLines([...draft.lines.values()], contract.rules, billedElsewhere, draft.currency);
        draft.lines = lines;
        draft.minimum = minimum;
        draft.projectedAt = clock.now();
        await drafts.save(tx, actor.companyId, [draft]);
        const totals = totalsOf(lines.values());
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
      const rows = await repo.listInvoices(db, actor.companyId, { status: "draft", from: period.start, to: period.end }, undefined, pageSize);
      const page = toPage(rows, pageSize);
      const sums = await repo.sumInvoiceTotalsByCurrency(db, actor.companyId, "draft", period.start);
      return {
        period,
        invoices: { items: page.items.map(presentInvoice), hasMore: page.hasMore },
        totals: sums.map((s) => ({ currency: s.currency, total: toJsonMoney(s.total, s.currency), invoices: Number(s.invoices) })),
      };
    },
  };
}
