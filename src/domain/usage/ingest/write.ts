import type { CompanyScope } from "../../../db/company-scope.js";
import type { CompanyData } from "../../kernel/tenancy.js";
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
import type { Candidate } from "./judge.js";
import { ACCEPTED, type Outcome } from "./outcome.js";
import { priceForBatch, priceOnBook } from "./price.js";

/**
 * Stage 4: prices and stores the candidates, on one of two paths. Without monthly caps, pricing needs nothing
 * from the stored state, so the batch goes to the database in one call (batch-writer.ts); a capped rule's
 * remainder depends on the locked draft (the locking path). Throws StaleContracts when a contract changed since
 * it was read.
 */
export function createEventWriter({
  clock,
  book,
  ingest,
}: {
  clock: Clock;
  book: LineBook;
  ingest?: IngestSettings | undefined;
}) {
  const batchWriter = createBatchWriter({ clock, book, settings: ingest });

  /** The one-round-trip path (migrations/functions/billing_ingest_usage_lines.sql). */
  function batchPath(company: CompanyData, candidates: readonly Candidate[]): Promise<WrittenDuplicates> {
    const writes = new Array(candidates.length);
    for (let i = 0; i < candidates.length; i++) writes[i] = priceForBatch(candidates[i] as Candidate, book);
    return batchWriter.write(company, writes, (contractId, periodStart) =>
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
      new Map(candidates.map((c) => [c.contract.id, c.contract.current_version])),
    );
    if (stale.length > 0) throw new StaleContracts(stale);
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
      else writes.push(priceOnBook(c, open, number));
    }
    if (writes.length === 0) return { meanwhile, closed, clashed: false };
    const inserted = await insertRatedEvents(scope, writes, clock.now());
    return { meanwhile, closed, clashed: inserted.length !== writes.length };
  }

  return function write(company: CompanyData, candidates: readonly Candidate[]): Promise<WrittenDuplicates> {
    const capped = candidates.some((c) => c.rule.monthly_cap !== null);
    return capped ? lockingPath(company, candidates) : batchPath(company, candidates);
  };
}

/** What each candidate's write came to. */
export function writtenOutcomes(candidates: readonly Candidate[], written: WrittenDuplicates): Map<number, Outcome> {
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
    paymentTerms: c.contract.payment_terms,
  };
}
