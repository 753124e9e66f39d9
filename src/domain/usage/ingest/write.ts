import type { CompanyScope } from "../../../db/company-scope.js";
import type { CompanyData } from "../../kernel/tenancy.js";
import { openCredits, saveCredits } from "../../credits/credit-service.js";
import { RetryTransaction, type LineBook, type OpenBook, type WantedInvoice } from "../../invoices/line-book.js";
import type { Clock } from "../../kernel/clock.js";
import { createBatchWriter, StaleContracts, type IngestSettings } from "../batch-writer.js";
import {
  findStaleContracts,
  findStoredEventIds,
  insertRatedEvents,
  type RatedEventWrite,
} from "../usage-repository.js";
import { mergeWritten, nothingRefused, writeIsolating, type WrittenDuplicates } from "../write-isolation.js";
import type { Candidate, JudgedBatch } from "./judge.js";
import { ACCEPTED, type Outcome, type Stage } from "./outcome.js";
import { priceOnBook, type PricedBatch } from "./price.js";

/** The batch as the write hands it on: what each candidate's write came to, by entry. */
export interface WrittenBatch extends JudgedBatch {
  written: ReadonlyMap<number, Outcome>;
}

/**
 * Stage 4: stores the candidates, on one of two paths, and hands on what each write came to. Priced events go to
 * the database in one call (the batch path, batch-writer.ts); a capped rule's remainder depends on the locked
 * draft, so capped events are priced and stored on the locked drafts (the locking path). Throws StaleContracts
 * when a contract changed since it was read (the judge judges the batch again).
 */
export function writeStages({
  clock,
  book,
  ingest,
  next,
}: {
  clock: Clock;
  book: LineBook;
  ingest?: IngestSettings | undefined;
  next: Stage<WrittenBatch>;
}): { batch: Stage<PricedBatch>; locking: Stage<JudgedBatch> } {
  const batchWriter = createBatchWriter({ clock, book, settings: ingest });

  /** The one-round-trip path (migrations/functions/billing_ingest_usage_lines.sql). */
  function batchPath(company: CompanyData, batch: PricedBatch): Promise<WrittenDuplicates> {
    const { candidates } = batch.judgement;
    return batchWriter.write(company, batch.writes, (contractId, periodStart) =>
      wantedInvoice(candidates.find((c) => c.contract.id === contractId && c.periodStart === periodStart)),
    );
  }

  /** The locking path: one transaction for the batch; an event the database refuses costs only itself. */
  async function lockingPath(company: CompanyData, candidates: readonly Candidate[]): Promise<WrittenDuplicates> {
    const stored = await findStoredEventIds(
      company.data,
      candidates.map((c) => c.input.event_id),
    );
    const fresh = candidates.filter((c) => !stored.has(c.input.event_id));
    const written = nothingRefused();
    for (const id of stored) written.duplicates.add(id);
    if (fresh.length === 0) return written;
    const storedParts: string[] = [];
    try {
      const report = await writeIsolating(
        fresh,
        (c) => c.input.event_id,
        async (part) => {
          let recheckStored = false;
          const wanted = new Map<string, WantedInvoice>();
          for (const c of part) wanted.set(`${c.contract.id}|${c.periodStart}`, wantedInvoice(c));
          const { meanwhile, closed } = await book.record(company, [...wanted.values()], async (tx, open) => {
            const result = await rateAndStore(tx, open, part, recheckStored);
            recheckStored = result.clashed;
            if (result.clashed) throw new RetryTransaction("event ids stored concurrently");
            return result;
          });
          return { ...nothingRefused(), duplicates: meanwhile, closed };
        },
        (ids) => storedParts.push(...ids),
      );
      return mergeWritten([written, report]);
    } catch (error) {
      if (error instanceof StaleContracts && storedParts.length > 0)
        throw new StaleContracts(error.contractIds, [...error.storedIds, ...storedParts]);
      throw error;
    }
  }

  /**
   * Inside the book's transaction (drafts locked): check the contracts, price each event in batch order against
   * its rule's cap room, store the events. `clashed`: a concurrent request stored one of these ids meanwhile (for
   * another contract, under another lock): the charges counted it, so the transaction starts over and the next
   * attempt (`recheckStored`) sees it as stored.
   */
  async function rateAndStore(
    scope: CompanyScope,
    open: OpenBook,
    candidates: readonly Candidate[],
    recheckStored: boolean,
  ): Promise<{ meanwhile: Set<string>; closed: Set<string>; clashed: boolean }> {
    const stale = await findStaleContracts(
      scope,
      new Map(
        candidates.map((c) => [
          c.contract.id,
          { version: c.contract.current_version, hasCredits: c.contract.has_credits },
        ]),
      ),
    );
    if (stale.length > 0) throw new StaleContracts(stale);
    // Contracts with credits: their grants, locked after the drafts, burn as the events are priced.
    const withCredits = [...new Set(candidates.filter((c) => c.contract.has_credits).map((c) => c.contract.id))];
    const wallet = withCredits.length > 0 ? await openCredits(scope, withCredits) : null;
    const meanwhile = recheckStored
      ? await findStoredEventIds(
          scope,
          candidates.map((c) => c.input.event_id),
        )
      : new Set<string>();
    // An invoice that has left draft is closed: its period's events are refused (held by the lock, it stays so).
    const closed = new Set<string>();
    const writes: RatedEventWrite[] = [];
    for (const c of candidates) {
      if (meanwhile.has(c.input.event_id)) continue;
      const number = open.draftNumber(c.contract.id, c.periodStart);
      if (number === null) closed.add(c.input.event_id);
      else writes.push(priceOnBook(c, open, number, wallet));
    }
    if (writes.length === 0) return { meanwhile, closed, clashed: false };
    const inserted = await insertRatedEvents(scope, writes, clock.now());
    if (wallet) await saveCredits(scope, wallet, clock.now());
    return { meanwhile, closed, clashed: inserted.length !== writes.length };
  }

  /** The stage of one path: what each candidate's write came to, handed on; nothing to write, nothing asked. */
  const stage =
    <T extends JudgedBatch>(path: (company: CompanyData, batch: T) => Promise<WrittenDuplicates>): Stage<T> =>
    async (tenant, batch) => {
      const { candidates } = batch.judgement;
      const written = candidates.length === 0 ? new Map() : writtenOutcomes(candidates, await path(tenant, batch));
      return next(tenant, { ...batch, written });
    };

  return {
    batch: stage(batchPath),
    locking: stage((company, batch: JudgedBatch) => lockingPath(company, batch.judgement.candidates)),
  };
}

/** What each candidate's write came to. */
function writtenOutcomes(candidates: readonly Candidate[], written: WrittenDuplicates): Map<number, Outcome> {
  const outcomes = new Map<number, Outcome>();
  for (const c of candidates) {
    const id = c.input.event_id;
    const unstorable = written.unstorable.get(id);
    outcomes.set(
      c.index,
      unstorable
        ? { kind: "rejected", code: "invalid_event", message: unstorable }
        : written.closed.has(id)
          ? periodClosed(c)
          : written.duplicates.has(id)
            ? { kind: "accepted", duplicate: true, differs: written.verdicts.get(id) }
            : ACCEPTED,
    );
  }
  return outcomes;
}

/** The refusal of an event whose month's invoice is no longer a draft (docs/api.md, "Usage events"). */
function periodClosed(c: Candidate): Outcome {
  return {
    kind: "rejected",
    code: "period_closed",
    message: `The invoice of ${c.contract.id} for ${c.periodStart.slice(0, 7)} has been issued: its period is closed`,
  };
}

function wantedInvoice(c: Candidate | undefined): WantedInvoice {
  if (!c) throw new Error("a draft was asked for that no event of the batch lands on");
  return {
    contractId: c.contract.id,
    periodStart: c.periodStart,
    periodEnd: c.periodEnd,
    currency: c.contract.currency,
    paymentTermsDays: c.contract.payment_terms_days,
  };
}
