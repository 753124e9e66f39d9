import { invoiceLineFacts } from "./documents/line-facts.js";
import type { Tenancy } from "../kernel/tenancy.js";
import type { JsonNumber } from "../../platform/exact-json.js";
import { requireScope } from "../kernel/actor.js";
import { periodOf, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError, ValidationError } from "../kernel/errors.js";
import { Big, toJsonMoney } from "../kernel/money.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { billStored, presentListed, presentWithLines } from "./invoice-presenter.js";
import * as repo from "./invoice-read-repository.js";
import { createReceivables } from "./collections/receivables.js";
import type { Invoice, InvoiceListStatus, InvoiceWithLines } from "./invoice-schemas.js";
import type { CompanyScope } from "../../db/company-scope.js";
import type { BilledInvoice } from "./invoice-figures.js";
import { type InvoiceStatus, may } from "./invoice-states.js";
import { lineFromRecord } from "./invoice-lines.js";
import { billProjected, rulesForPeriod } from "./projected-bill.js";

/** Invoices read per query when the month-to-date totals add up every invoice's total. */
const MONTH_PAGE = 1000;

/** What the month to date counts as billed: every invoice of the month but a void one. */
const BILLED_STATUSES = ["draft", "issued", "paid"] as const;

/** A list's filter as the API takes it (`invoiceListFilters`). */
export interface InvoiceListFilter {
  contractId?: string | undefined;
  status?: InvoiceListStatus | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * The stored statuses and due date a list status means on `today`: `open` is issued (not paid, not void),
 * `overdue` is open and due before today.
 */
export function storedFilter(filter: InvoiceListFilter, today: string): repo.InvoiceFilter {
  const { status, ...rest } = filter;
  if (status === undefined) return rest;
  if (status === "open") return { ...rest, statuses: ["issued"] };
  if (status === "overdue") return { ...rest, statuses: ["issued"], dueBefore: today };
  return { ...rest, statuses: [status] };
}

/**
 * The drafts among these invoices, each brought up to date as projection would (`billProjected`), by number:
 * what its month will bill if nothing else arrives. One statement for all of them; none for a page without drafts.
 */
async function projectDrafts(
  db: CompanyScope,
  rows: readonly Pick<repo.InvoiceState, "number" | "status" | "period_end" | "lines" | "currency">[],
): Promise<Map<string, BilledInvoice>> {
  const drafts = rows.filter((row) => may(row.status as InvoiceStatus, "change"));
  const inputs = new Map(
    (
      await repo.findProjectionInputs(
        db,
        drafts.map((d) => d.number),
      )
    ).map((i) => [i.number, i]),
  );
  const projected = new Map<string, BilledInvoice>();
  for (const draft of drafts) {
    const input = inputs.get(draft.number);
    const rules = rulesForPeriod(input?.programs ?? null, draft.period_end);
    const billedElsewhere = new Set(input?.one_time_billed ?? []);
    projected.set(draft.number, billProjected(draft.lines.map(lineFromRecord), rules, billedElsewhere, draft.currency));
  }
  return projected;
}

/** Reading invoices: a page of them, one with its lines, and the dashboard's month to date. */
export function createInvoiceReads({ clock }: { clock: Clock }) {
  return {
    receivables: createReceivables({ clock }),

    async list(tenant: Tenancy, filter: InvoiceListFilter, page: PageRequest): Promise<Page<Invoice>> {
      requireScope(tenant, "invoices:read");
      let afterSeq: string | undefined;
      if (page.startingAfter !== undefined) {
        afterSeq = await repo.findInvoiceSeq(tenant.data, page.startingAfter);
        if (afterSeq === undefined)
          throw new ValidationError("starting_after does not name an invoice of this company", "invalid_cursor");
      }
      const rows = await repo.listInvoices(
        tenant.data,
        storedFilter(filter, toDateString(clock.now())),
        afterSeq,
        page.limit,
      );
      const result = toPage(rows, page.limit);
      const projected = await projectDrafts(tenant.data, result.items);
      return {
        items: result.items.map((row) => presentListed(row, projected.get(row.number) ?? null)),
        hasMore: result.hasMore,
      };
    },

    async get(tenant: Tenancy, number: string): Promise<InvoiceWithLines> {
      requireScope(tenant, "invoices:read");
      // With what explains its usage lines: their event counts and uncapped amounts (documents/line-facts.ts).
      const row = await repo.findInvoiceDocument(tenant.data, number);
      if (!row) throw new NotFoundError("invoice");
      const projected = await projectDrafts(tenant.data, [row]);
      const billed = billStored(row);
      const facts = await invoiceLineFacts(tenant.data, row, billed);
      return presentWithLines(row, billed, projected.get(row.number) ?? null, facts);
    },

    /**
     * This month so far, by the service's clock (dashboard overview): the calendar month, its newest `limit`
     * invoices billed for it (the billing period of this month: drafts, issued and paid; never void ones) and
     * the totals per currency over all of them: a draft's what its month will bill if nothing else arrives (its
     * projected total: subscriptions and the minimum's top-up included), any other's as issued.
     */
    async monthToDate(
      tenant: Tenancy,
      limit: number,
    ): Promise<{
      period: { start: string; end: string };
      invoices: Page<Invoice>;
      totals: { currency: string; total: JsonNumber; invoices: number }[];
    }> {
      requireScope(tenant, "invoices:read");
      const period = periodOf(clock.now());
      const pageSize = Math.min(Math.max(Math.trunc(limit) || 1, 1), 100);
      const rows = await repo.listInvoices(
        tenant.data,
        { statuses: BILLED_STATUSES, from: period.start, to: period.end },
        undefined,
        pageSize,
      );
      const page = toPage(rows, pageSize);
      const projectedRows = await projectDrafts(tenant.data, page.items);
      // Totals per currency over all of the month's invoices but void ones, read a page at a time.
      const sums = new Map<string, { total: Big; invoices: number }>();
      for (let after: string | null = null; ; ) {
        const states = await repo.listInvoiceStates(tenant.data, BILLED_STATUSES, period.start, after, MONTH_PAGE);
        const projected = await projectDrafts(tenant.data, states);
        for (const state of states) {
          const sum = sums.get(state.currency) ?? { total: new Big(0), invoices: 0 };
          const total = (projected.get(state.number) ?? billStored(state)).total;
          sums.set(state.currency, { total: sum.total.plus(total), invoices: sum.invoices + 1 });
        }
        if (states.length < MONTH_PAGE) break;
        after = states[states.length - 1]!.seq;
      }
      return {
        period,
        invoices: {
          items: page.items.map((row) => presentListed(row, projectedRows.get(row.number) ?? null)),
          hasMore: page.hasMore,
        },
        totals: [...sums.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([currency, s]) => ({ currency, total: toJsonMoney(s.total, currency), invoices: s.invoices })),
      };
    },
  };
}
