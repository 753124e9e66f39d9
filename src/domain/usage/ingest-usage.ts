import type { RatingContextRow } from "../contracts/rating-context-cache.js";
import type { RatingContextCache } from "../contracts/rating-context-cache.js";
import type { LineBook } from "../invoices/line-book.js";
import { requireScope } from "../kernel/actor.js";
import type { Tenancy } from "../kernel/tenancy.js";
import type { Clock } from "../kernel/clock.js";
import { StaleContracts, type IngestSettings } from "./batch-writer.js";
import { answer } from "./ingest/answer.js";
import { judgeBatch, type Judgement } from "./ingest/judge.js";
import { ACCEPTED, DUPLICATE, type Outcome } from "./ingest/outcome.js";
import { parseBatch, type Parsed, type ParsedBatch } from "./ingest/parse.js";
import { settleDuplicates, settleRefusedStored } from "./ingest/settle.js";
import { createEventWriter, writtenOutcomes } from "./ingest/write.js";
import type { SubmitResult } from "./usage-schemas.js";

/** One pass of judge → price → write: every entry's outcome, or the contracts that changed under it. */
type Round =
  | { kind: "done"; outcomes: Outcome[]; judgement: Judgement }
  | { kind: "stale"; contractIds: string[]; storedEarlier: [string, number][] };

/**
 * Usage ingestion (docs/api.md, "Usage events"; docs/decisions.md, "Rating an event"; docs/architecture.md,
 * "Ingestion"): each event passes parse → judge → price → write → settle → answer (the files of ingest/). Every
 * new event is stored, rated and put on its draft invoice in one transaction; a request is one transaction per
 * lane of the contracts it touches (batch-writer.ts), or one transaction on the locking path.
 */
export function createUsageIngestion({
  clock,
  book,
  contexts,
  ingest,
}: {
  clock: Clock;
  book: LineBook;
  contexts: RatingContextCache;
  ingest?: IngestSettings | undefined;
}) {
  const write = createEventWriter({ clock, book, ingest });

  return async function submit(tenant: Tenancy, rawEvents: readonly unknown[]): Promise<SubmitResult> {
    requireScope(tenant, "usage:write");
    const batch = parseBatch(rawEvents);
    // Judge, price and write; again with fresh contracts if a cached one changed meanwhile. An event that another
    // lane stored before that is this request's own (the entry whose copy was stored), whatever the next round
    // makes of it: found stored, refused by a contract that changed, or a later copy.
    const storedEarlier = new Map<string, number>(); // event id → index of the entry stored
    for (let attempt = 0; ; attempt++) {
      const round = await judgePriceAndWrite(tenant, batch);
      if (round.kind === "stale") {
        for (const [id, index] of round.storedEarlier) storedEarlier.set(id, index);
        if (attempt >= 3) throw new StaleContracts(round.contractIds);
        contexts.invalidate(tenant.companyId, round.contractIds);
        continue;
      }
      const outcomes = [...round.outcomes];
      for (const index of storedEarlier.values()) outcomes[index] = ACCEPTED;
      const inputs = new Map(batch.parsed.map((p) => [p.index, p.input]));
      const settled = await settleDuplicates(tenant.data, outcomes, inputs, round.judgement.good);
      return answer(settled, batch.eventIds);
    }
  };

  async function judgePriceAndWrite(tenant: Tenancy, batch: ParsedBatch): Promise<Round> {
    const judgement = await judge(tenant, batch.parsed);
    const chosen = new Set(judgement.candidates.map((c) => c.input.event_id));
    const storedRefused = await settleRefusedStored(
      tenant.data,
      [batch.refused, judgement.refused],
      batch.eventIds,
      chosen,
    );
    let written: Map<number, Outcome> = new Map();
    if (judgement.candidates.length > 0) {
      try {
        written = writtenOutcomes(judgement.candidates, await write(tenant, judgement.candidates));
      } catch (error) {
        if (!(error instanceof StaleContracts)) throw error;
        const entryOf = new Map(judgement.candidates.map((c) => [c.input.event_id, c.index]));
        const storedEarlier: [string, number][] = [];
        for (const id of error.storedIds) {
          const index = entryOf.get(id);
          if (index !== undefined) storedEarlier.push([id, index]);
        }
        return { kind: "stale", contractIds: error.contractIds, storedEarlier };
      }
    }
    const copies = new Set(judgement.copies);
    const outcomes = new Array<Outcome>(batch.eventIds.length);
    for (let index = 0; index < outcomes.length; index++) {
      outcomes[index] =
        written.get(index) ??
        (copies.has(index) ? DUPLICATE : undefined) ??
        storedRefused.get(index) ??
        judgement.refused.get(index) ??
        batch.refused.get(index) ??
        unreachable(index);
    }
    return { kind: "done", outcomes, judgement };
  }

  /**
   * Stage 2 with its reads: the batch judged against its contracts from the per-process cache (one query for
   * those it lacks); a refusal is never based on a cached row, so refused contracts are read again first.
   */
  async function judge(tenant: Tenancy, parsed: readonly Parsed[]): Promise<Judgement> {
    const ids = [...new Set(parsed.map((p) => p.input.external_contract_id))];
    const contracts = await contexts.get(tenant.data, ids);
    const first = judgeBatch(parsed, contracts);
    if (first.refusingContracts.length === 0) return first;
    const fresh = await contexts.get(tenant.data, first.refusingContracts, true);
    const confirmed = new Map<string, RatingContextRow>(contracts);
    for (const id of first.refusingContracts) {
      const row = fresh.get(id);
      if (row) confirmed.set(id, row);
      else confirmed.delete(id);
    }
    return judgeBatch(parsed, confirmed);
  }
}

function unreachable(index: number): never {
  throw new Error(`entry ${index} of the batch has no outcome`);
}
