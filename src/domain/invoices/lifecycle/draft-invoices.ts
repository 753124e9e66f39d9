import type { CompanyScope } from "../../../db/company-scope.js";
import { type InvoiceStatus, may } from "../invoice-states.js";
import type { CompanyData } from "../../kernel/tenancy.js";
import { addDays } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import { Big, toDecimalString } from "../../kernel/money.js";
import { nextNumbers } from "../../counters/counters.js";
import { dueDateOf } from "./invoice-lifecycle.js";
import { lineFromRecord, tiersFromRecord, tiersToRecord, type Line } from "../invoice-lines.js";
import * as repo from "../invoice-repository.js";
import { termsFromRecord, termsToRecord, termsTotal, type MinimumTerm } from "../../contracts/minimum-terms.js";

/** A locked draft invoice and its lines, changed in memory, then saved in the same transaction. */
export interface DraftInvoice {
  number: string;
  contractId: string;
  periodStart: string;
  currency: string;
  /** Only a draft changes (invoice-states.ts); a locked invoice of another status is left as it is. */
  status: string;
  minimum: MinimumTerm[] | null;
  projectedAt: Date | null;
  lines: Map<string, Line>;
  original: Map<string, repo.LineRow>;
}

export interface WantedInvoice {
  contractId: string;
  periodStart: string;
  periodEnd: string;
  currency: string;
  paymentTermsDays: number;
}

/** Thrown inside a transaction that found a (contract, period) without a draft: create it, then try again. */
class MissingDraftInvoices extends Error {
  constructor(readonly wanted: WantedInvoice[]) {
    super("draft invoices missing");
  }
}

/** Thrown inside a transaction whose premises changed under it (a concurrent writer): run it again. */
export class RetryTransaction extends Error {
  constructor(reason: string) {
    super(reason);
  }
}

export const periodKey = (contractId: string, periodStart: string) => `${contractId}|${periodStart}`;

export const formatInvoiceNumber = (seq: number) => `INV-${String(seq).padStart(6, "0")}`;

function toLineWrite(invoiceNumber: string, line: Line): repo.LineWrite {
  return {
    invoiceNumber,
    key: line.key,
    kind: line.kind,
    ruleId: line.ruleId,
    metric: line.metric,
    description: line.description,
    quantity: toDecimalString(line.quantity),
    rate: line.rate === null ? null : toDecimalString(line.rate),
    chargeTotal: toDecimalString(line.chargeTotal),
    cappedTotal: toDecimalString(line.cappedTotal),
    tiers: line.tiers === null ? null : JSON.stringify(tiersToRecord(line.tiers)),
  };
}

const sameDecimal = (a: string | null, b: string | null) => (a === null || b === null ? a === b : new Big(a).eq(b));

const sameLine = (a: repo.LineWrite, b: repo.LineRow) =>
  a.kind === b.kind &&
  a.ruleId === b.rule_id &&
  a.metric === b.metric &&
  a.description === b.description &&
  sameDecimal(a.quantity, b.quantity) &&
  sameDecimal(a.rate, b.rate) &&
  sameDecimal(a.chargeTotal, b.charge_total) &&
  sameDecimal(a.cappedTotal, b.capped_total) &&
  a.tiers === (b.tiers == null ? null : JSON.stringify(tiersToRecord(tiersFromRecord(b.tiers))));

/**
 * Draft invoices as ingestion and projection share them: one per contract and calendar month, locked for the
 * length of one transaction, saved with one statement.
 */
export function createDraftInvoices({ clock }: { clock: Clock }) {
  return {
    /**
     * Creates the missing drafts in a short transaction of its own. Of ingestion and projection it is the only
     * place that takes the company's invoice-number counter, and it takes it before any invoice lock, so that
     * ingestion never deadlocks (a void's reissue takes it too, under the void invoice's lock: void-invoice.ts).
     */
    async ensure(company: CompanyData, wanted: readonly WantedInvoice[]): Promise<Set<string>> {
      if (wanted.length === 0) return new Set();
      const sorted = [...wanted].sort((a, b) =>
        periodKey(a.contractId, a.periodStart).localeCompare(periodKey(b.contractId, b.periodStart)),
      );
      return company.transaction(async (tx) => {
        // Take the counter (and with it the right to create drafts) first, then number only the drafts
        // still missing, so that numbers have no gaps but for rolled-back transactions.
        await nextNumbers(tx, "invoice_number", 0);
        // A pricing change dated into a period re-rates that period's drafts under the contract's lock: a draft
        // created meanwhile would be missed, so creating one waits for such a change to commit.
        await repo.holdContracts(tx, [...new Set(sorted.map((w) => w.contractId))]);
        const existing = new Set(
          (
            await repo.findExistingPeriods(
              tx,
              sorted.map((w) => ({ contractId: w.contractId, periodStart: w.periodStart })),
            )
          ).map((k) => periodKey(k.contractId, k.periodStart)),
        );
        const missing = sorted.filter((w) => !existing.has(periodKey(w.contractId, w.periodStart)));
        if (missing.length === 0) return new Set<string>();
        const last = await nextNumbers(tx, "invoice_number", missing.length);
        const first = last - missing.length + 1;
        const rows = missing.map((w, i) => {
          const issuedDate = addDays(w.periodEnd, 1);
          return {
            number: formatInvoiceNumber(first + i),
            seq: first + i,
            contractId: w.contractId,
            currency: w.currency,
            periodStart: w.periodStart,
            periodEnd: w.periodEnd,
            issuedDate,
            dueDate: dueDateOf(issuedDate, w.paymentTermsDays),
          };
        });
        return new Set(await repo.insertDraftInvoices(tx, rows, clock.now()));
      });
    },

    /**
     * Locks the drafts of these pairs (sorted order), then loads their lines in a second statement, whose
     * snapshot is taken after the locks are held. Throws MissingDraftInvoices for absent drafts.
     */
    async lock(tx: CompanyScope, wanted: readonly WantedInvoice[]): Promise<Map<string, DraftInvoice>> {
      const rows = await repo.lockInvoices(
        tx,
        wanted.map((w) => ({ contractId: w.contractId, periodStart: w.periodStart })),
      );
      const drafts = new Map<string, DraftInvoice>();
      const byNumber = new Map<string, DraftInvoice>();
      for (const row of rows) {
        const draft: DraftInvoice = {
          number: row.number,
          contractId: row.contract_id,
          periodStart: row.period_start,
          currency: row.currency,
          status: row.status,
          minimum: termsFromRecord(row),
          projectedAt: null,
          lines: new Map(),
          original: new Map(),
        };
        drafts.set(periodKey(row.contract_id, row.period_start), draft);
        byNumber.set(row.number, draft);
      }
      if (rows.length > 0) {
        for (const line of await repo.findLinesOfInvoices(tx, [...byNumber.keys()])) {
          const draft = byNumber.get(line.invoice_number)!;
          draft.lines.set(line.key, lineFromRecord(line));
          draft.original.set(line.key, line);
        }
      }
      const missing = wanted.filter((w) => !drafts.has(periodKey(w.contractId, w.periodStart)));
      if (missing.length > 0) throw new MissingDraftInvoices(missing);
      return drafts;
    },

    /** Writes the changed lines, removed lines and monthly minimum of these drafts in one statement. */
    async save(tx: CompanyScope, drafts: Iterable<DraftInvoice>): Promise<void> {
      const lines: repo.LineWrite[] = [];
      const removed: { invoiceNumber: string; key: string }[] = [];
      const invoices: repo.InvoiceStateWrite[] = [];
      for (const draft of drafts) {
        if (!may(draft.status as InvoiceStatus, "change")) continue; // issued, paid or void: frozen
        for (const line of draft.lines.values()) {
          const write = toLineWrite(draft.number, line);
          const before = draft.original.get(line.key);
          if (!before || !sameLine(write, before)) lines.push(write);
        }
        for (const key of draft.original.keys()) {
          if (!draft.lines.has(key)) removed.push({ invoiceNumber: draft.number, key });
        }
        invoices.push({
          number: draft.number,
          minimumAmount: draft.minimum === null ? null : toDecimalString(termsTotal(draft.minimum)!),
          minimumTerms: termsToRecord(draft.minimum),
          projectedAt: draft.projectedAt,
        });
      }
      if (invoices.length > 0) await repo.saveDraftState(tx, { lines, removed, invoices }, clock.now());
    },
  };
}

export type DraftInvoices = ReturnType<typeof createDraftInvoices>;

/** A contract's invoice of one period, as a pricing change sees it. */
export interface PeriodInvoice {
  number: string;
  status: string;
  periodStart: string;
  periodEnd: string;
}

/** A contract's invoices whose period ends on or after `day` (the periods a change dated `day` reaches). */
export async function invoicesEndingFrom(db: CompanyScope, contractId: string, day: string): Promise<PeriodInvoice[]> {
  return (await repo.findInvoicesEndingFrom(db, contractId, day)).map((r) => ({
    number: r.number,
    status: r.status,
    periodStart: r.period_start,
    periodEnd: r.period_end,
  }));
}

/**
 * Runs `work` in a transaction; when it meets missing drafts, creates them (own transaction) and runs it again.
 * Also retries on RetryTransaction and on a deadlock or serialization failure reported by PostgreSQL.
 */
export async function withDrafts<T>(
  company: CompanyData,
  drafts: DraftInvoices,
  work: (tx: CompanyScope) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await company.transaction(work);
    } catch (error) {
      if (error instanceof MissingDraftInvoices && attempt < 3) {
        await drafts.ensure(company, error.wanted);
        continue;
      }
      const code = (error as { code?: string }).code;
      if ((error instanceof RetryTransaction || code === "40P01" || code === "40001") && attempt < 5) continue;
      throw error;
    }
  }
}
