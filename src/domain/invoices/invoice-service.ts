import { createHash } from "node:crypto";
import { forCompany } from "../../db/company-scope.js";
import type { Database, Tx } from "../../db/database.js";
import { findContract, findRatingContexts, type RatingContextRow } from "../contracts/contract-repository.js";
import { findCompanyById } from "../access/access-repository.js";
import { findCustomerById } from "../customers/customer-repository.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { isCalendarMonth, periodOf, parseDate, toDateString } from "../kernel/billing-period.js";
import { BILLING_RANGE_WORDS, isBillingMonth } from "../kernel/time-range.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError } from "../kernel/errors.js";
import type { JsonNumber } from "../../platform/exact-json.js";
import { Big, toDecimalString, toJsonDecimal, toJsonMoney } from "../kernel/money.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { periodKey, withDrafts, type DraftInvoice, type DraftInvoices } from "./draft-invoices.js";
import { billInvoice, billRecords, freezeBill, thawBill, type BilledInvoice } from "./invoice-figures.js";
import {
  dueDateOf,
  lastDuePeriodEnd,
  paidDateOf,
  transition,
  type InvoiceAction,
  type InvoiceStatus,
} from "./invoice-lifecycle.js";
import { projectLines } from "./invoice-lines.js";
import * as repo from "./invoice-repository.js";
import { findLastStatementSeq, listStatementRows } from "../usage/usage-repository.js";
import { STATEMENT_HEADER, statementLine } from "./usage-statement.js";
import type { Invoice, InvoiceProjection, InvoiceWithLines } from "./invoice-schemas.js";

/** An invoice's figures: a draft's derived now, any other's as it was issued (frozen). */
const billStored = (row: Pick<repo.InvoiceRow, "lines" | "minimum_amount" | "currency" | "billed">): BilledInvoice =>
  row.billed === null ? billRecords(row) : thawBill(row.billed);

function presentInvoice(row: repo.InvoiceRow, billed: BilledInvoice): Invoice {
  return {
    object: "invoice",
    number: row.number,
    contract: row.contract_id,
    status: row.status as InvoiceStatus,
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

/** Drafts read per query when the month-to-date totals add up every draft's derived total. */
const MONTH_PAGE = 1000;

/** Events per page of a usage statement: a page is one query and one chunk of the response. */
const STATEMENT_PAGE = 5000;

/** 409 for a projection of a period whose invoice has left draft: the period is closed. */
const notADraft = (status: InvoiceStatus, number: string) =>
  new ConflictError(
    `Invoice ${number} is ${status}: its period is closed and its lines no longer change`,
    `invoice_is_${status}`,
  );

export function createInvoiceService({ db, clock, drafts }: { db: Database; clock: Clock; drafts: DraftInvoices }) {
  /**
   * Brings a locked draft up to date as projection does (docs/decisions.md, "Invoices", projection): subscription
   * lines, one-time fees not billed on another invoice, the usage rated onto it, the monthly minimum. Saves it;
   * returns its figures.
   */
  async function bringUpToDate(
    tx: Tx,
    companyId: string,
    contract: RatingContextRow,
    draft: DraftInvoice,
  ): Promise<BilledInvoice> {
    const billedElsewhere = await repo.findOneTimeRulesBilled(forCompany(tx, companyId), contract.id, draft.number);
    const { lines, minimum } = projectLines([...draft.lines.values()], contract.rules, billedElsewhere);
    draft.lines = lines;
    draft.minimum = minimum;
    draft.projectedAt = clock.now();
    await drafts.save(tx, companyId, [draft]);
    return billInvoice(lines.values(), minimum, draft.currency);
  }

  /** The invoice as the API answers it, read in `tx` (after a change made in it). */
  async function read(tx: Tx, companyId: string, number: string): Promise<InvoiceWithLines> {
    const row = await repo.findInvoice(forCompany(tx, companyId), number);
    if (!row) throw new NotFoundError("invoice");
    const billed = billStored(row);
    return { ...presentInvoice(row, billed), line_items: presentLines(billed, row.currency) };
  }

  /**
   * One change of status, under the invoice's row lock: what `transition` allows, applied by `apply`; an
   * action that happened already answers the invoice unchanged (`unchanged` may refuse that, e.g. a payment
   * on another date). Concurrent calls on one invoice queue on the lock: one applies, the rest see its result.
   */
  async function change(
    companyId: string,
    number: string,
    action: InvoiceAction,
    apply: (tx: Tx, invoice: repo.InvoiceForChange) => Promise<void>,
    unchanged?: (invoice: repo.InvoiceForChange) => void,
  ): Promise<{ invoice: InvoiceWithLines; applied: boolean }> {
    return db.transaction(async (tx) => {
      const invoice = await repo.lockInvoiceByNumber(forCompany(tx, companyId), number);
      if (!invoice) throw new NotFoundError("invoice");
      const verdict = transition(invoice.status as InvoiceStatus, action);
      if (verdict.kind === "refused") throw verdict.error;
      if (verdict.kind === "apply") await apply(tx, invoice);
      else unchanged?.(invoice);
      return { invoice: await read(tx, companyId, number), applied: verdict.kind === "apply" };
    });
  }

  /** Issues a draft: brought up to date as projection does, then frozen with its figures and dates. */
  async function finalize(companyId: string, number: string): Promise<{ invoice: InvoiceWithLines; applied: boolean }> {
    return change(companyId, number, "finalize", async (tx, invoice) => {
      const [contract] = await findRatingContexts(forCompany(tx, companyId), [invoice.contract_id]);
      const wanted = {
        contractId: invoice.contract_id,
        periodStart: invoice.period_start,
        periodEnd: invoice.period_end,
        currency: invoice.currency,
        paymentTerms: contract!.payment_terms,
      };
      const draft = (await drafts.lock(tx, companyId, [wanted])).get(
        periodKey(invoice.contract_id, invoice.period_start),
      )!;
      const billed = await bringUpToDate(tx, companyId, contract!, draft);
      const now = clock.now();
      const issuedDate = toDateString(now);
      await repo.issueInvoice(forCompany(tx, companyId), {
        number,
        at: now,
        issuedDate,
        dueDate: dueDateOf(issuedDate, contract!.payment_terms),
        billed: freezeBill(billed),
      });
    });
  }

  return {
    async list(actor: Actor, filter: repo.InvoiceFilter, page: PageRequest): Promise<Page<Invoice>> {
      requireScope(actor, "invoices:read");
      let afterSeq: string | undefined;
      if (page.startingAfter !== undefined) {
        afterSeq = await repo.findInvoiceSeq(forCompany(db, actor.companyId), page.startingAfter);
        if (afterSeq === undefined)
          throw new ValidationError("starting_after does not name an invoice of this company", "invalid_cursor");
      }
      const rows = await repo.listInvoices(forCompany(db, actor.companyId), filter, afterSeq, page.limit);
      const result = toPage(rows, page.limit);
      return { items: result.items.map(presentListed), hasMore: result.hasMore };
    },

    async get(actor: Actor, number: string): Promise<InvoiceWithLines> {
      requireScope(actor, "invoices:read");
      return read(db, actor.companyId, number);
    },

    /**
     * Creates or updates the draft of a contract and month (docs/decisions.md, "Invoices", projection): subscription
     * lines, one-time fees not billed yet, the usage already rated onto it, and the minimum true-up.
     * Idempotent: projecting again changes nothing that is already right.
     */
    async project(
      actor: Actor,
      input: { contractId: string; periodStart: string; periodEnd: string },
    ): Promise<InvoiceProjection> {
      requireScope(actor, "invoices:write");
      if (!isCalendarMonth(input.periodStart, input.periodEnd)) {
        throw new ValidationError(
          "The billing period must be exactly one calendar month: its first day to its last day",
          "invalid_billing_period",
        );
      }
      if (!isBillingMonth(input.periodStart)) {
        throw new ValidationError(
          `The billing period must be a month ${BILLING_RANGE_WORDS}`,
          "invalid_billing_period",
        );
      }
      const [contract] = await findRatingContexts(forCompany(db, actor.companyId), [input.contractId]);
      if (!contract) throw new NotFoundError("contract");
      if (
        input.periodEnd < contract.start_date ||
        (contract.end_date !== null && input.periodStart > contract.end_date)
      ) {
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
        if (draft.status !== "draft") throw notADraft(draft.status as InvoiceStatus, draft.number);
        const totals = await bringUpToDate(tx, actor.companyId, contract, draft);
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

    /** POST /v1/billing/invoices/{number}/finalize: draft → issued; an issued or paid invoice answers unchanged. */
    async finalize(actor: Actor, number: string): Promise<InvoiceWithLines> {
      requireScope(actor, "invoices:write");
      return (await finalize(actor.companyId, number)).invoice;
    },

    /**
     * POST …/pay: issued → paid on `paidDate` (default: today, by the service's clock). A paid invoice answers
     * unchanged, unless the date given is another one (409).
     */
    async pay(actor: Actor, number: string, paidDate?: string): Promise<InvoiceWithLines> {
      requireScope(actor, "invoices:write");
      const { invoice } = await change(
        actor.companyId,
        number,
        "pay",
        async (tx, invoice) => {
          const now = clock.now();
          await repo.payInvoice(
            forCompany(tx, actor.companyId),
            number,
            paidDateOf(paidDate, invoice.issued_date, toDateString(now)),
            now,
          );
        },
        (invoice) => {
          if (paidDate !== undefined && invoice.paid_date !== paidDate) {
            throw new ConflictError(`Invoice ${number} was paid on ${invoice.paid_date}`, "invoice_is_paid");
          }
        },
      );
      return invoice;
    },

    /** POST …/void: issued → void; a void invoice answers unchanged. */
    async void(actor: Actor, number: string): Promise<InvoiceWithLines> {
      requireScope(actor, "invoices:write");
      const { invoice } = await change(actor.companyId, number, "void", async (tx) => {
        await repo.voidInvoice(forCompany(tx, actor.companyId), number, clock.now());
      });
      return invoice;
    },

    /**
     * The invoice worker's round: issues up to `limit` drafts, of every company, whose billing period ended
     * more than `graceMs` ago. Each is finalized in its own transaction, exactly as by hand; a draft another
     * process issued meanwhile is left as it is; one that fails stays a draft for the next round, and the
     * others go on. Returns how many drafts it found due, how many it issued, and those that failed.
     */
    async issueDue(
      graceMs: number,
      limit: number,
    ): Promise<{ found: number; issued: number; failed: { number: string; error: unknown }[] }> {
      const due = await repo.findDraftsDue(db, lastDuePeriodEnd(clock.now(), graceMs), limit);
      let issued = 0;
      const failed: { number: string; error: unknown }[] = [];
      // One draft that cannot be issued (its transaction rolled back) must not hold up the others.
      for (const draft of due) {
        try {
          if ((await finalize(draft.company_id, draft.number)).applied) issued += 1;
        } catch (error) {
          failed.push({ number: draft.number, error });
        }
      }
      return { found: due.length, issued, failed };
    },

    /**
     * GET …/pdf: the invoice as a PDF for the customer, from what GET answers (an issued invoice's frozen
     * figures, a draft's as they are now, marked DRAFT), the seller's and the customer's details.
     */
    async pdf(actor: Actor, number: string): Promise<{ filename: string; pdf: Buffer }> {
      requireScope(actor, "invoices:read");
      const invoice = await read(db, actor.companyId, number);
      const scope = forCompany(db, actor.companyId);
      const contract = await findContract(scope, invoice.contract);
      const [company, customer] = await Promise.all([
        findCompanyById(db, actor.companyId),
        contract ? findCustomerById(scope, contract.customer_id) : undefined,
      ]);
      // pdfkit and its fonts cost ~27 MB of memory once loaded: only a process that renders a PDF pays for them.
      const { renderInvoicePdf } = await import("./invoice-pdf.js");
      const pdf = await renderInvoicePdf({
        sellerName: company?.name ?? "",
        customer: {
          name: customer?.name ?? contract?.customer_name ?? "",
          address: customer?.address ?? null,
          email: customer?.email ?? null,
        },
        invoice: {
          number: invoice.number,
          status: invoice.status,
          currency: invoice.currency,
          period: invoice.billing_period,
          issuedDate: invoice.issued_date,
          dueDate: invoice.due_date,
          paidDate: invoice.paid_date,
          contract: invoice.contract,
          lines: invoice.line_items.map((l) => ({
            description: l.description,
            quantity: String(l.quantity),
            unitPrice: String(l.unit_price),
            amount: String(l.amount),
          })),
          subtotal: String(invoice.subtotal),
          tax: String(invoice.tax),
          total: String(invoice.total),
        },
        generatedAt: clock.now(),
      });
      return { filename: `${number}.pdf`, pdf };
    },

    /**
     * GET …/usage.csv: the invoice's usage statement, streamed a page of events at a time, with the SHA-256 of
     * its content. The events are those stored on the invoice when the call began (up to their highest
     * sequence number then), so the digest, taken in a first pass, is that of exactly what the second sends.
     */
    async usageStatement(
      actor: Actor,
      number: string,
    ): Promise<{ filename: string; sha256: string; chunks: () => AsyncGenerator<string> }> {
      requireScope(actor, "invoices:read");
      const scope = forCompany(db, actor.companyId);
      const invoice = await repo.findInvoice(scope, number);
      if (!invoice) throw new NotFoundError("invoice");
      const which = { contractId: invoice.contract_id, periodStart: invoice.period_start, number };
      const lastSeq = await findLastStatementSeq(scope, which);
      async function* chunks(): AsyncGenerator<string> {
        yield STATEMENT_HEADER;
        for (let after: string | null = null; lastSeq !== null; ) {
          const rows = await listStatementRows(scope, which, after, lastSeq, STATEMENT_PAGE);
          if (rows.length === 0) return;
          yield rows.map(statementLine).join("");
          after = rows[rows.length - 1]!.seq;
        }
      }
      const hash = createHash("sha256");
      for await (const chunk of chunks()) hash.update(chunk);
      return { filename: `${number}-usage.csv`, sha256: hash.digest("base64"), chunks };
    },

    /**
     * This month so far, by the service's clock (dashboard overview): the calendar month, its newest `limit`
     * draft invoices (one per contract) and the totals per currency over all of the month's drafts.
     */
    async monthToDate(
      actor: Actor,
      limit: number,
    ): Promise<{
      period: { start: string; end: string };
      invoices: Page<Invoice>;
      totals: { currency: string; total: JsonNumber; invoices: number }[];
    }> {
      requireScope(actor, "invoices:read");
      const period = periodOf(clock.now());
      const pageSize = Math.min(Math.max(Math.trunc(limit) || 1, 1), 100);
      const rows = await repo.listInvoices(
        forCompany(db, actor.companyId),
        { status: "draft", from: period.start, to: period.end },
        undefined,
        pageSize,
      );
      const page = toPage(rows, pageSize);
      // Totals per currency over all of the month's drafts, each derived from its lines, read a page at a time.
      const sums = new Map<string, { total: Big; invoices: number }>();
      for (let after: string | null = null; ; ) {
        const states = await repo.listInvoiceStates(
          forCompany(db, actor.companyId),
          "draft",
          period.start,
          after,
          MONTH_PAGE,
        );
        for (const state of states) {
          const sum = sums.get(state.currency) ?? { total: new Big(0), invoices: 0 };
          sums.set(state.currency, { total: sum.total.plus(billRecords(state).total), invoices: sum.invoices + 1 });
        }
        if (states.length < MONTH_PAGE) break;
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
