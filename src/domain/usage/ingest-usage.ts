import type { RatingContextCache } from "../contracts/rating-context-cache.js";
import type { LineBook } from "../invoices/line-book.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import type { Tenancy } from "../kernel/tenancy.js";
import type { IngestSettings } from "./batch-writer.js";
import { readsRunningTotals } from "./pricers.js";
import { judgeStage, type JudgedBatch } from "./ingest/judge.js";
import { parseStage } from "./ingest/parse.js";
import { priceStage } from "./ingest/price.js";
import { settleStage } from "./ingest/settle.js";
import { writeStages } from "./ingest/write.js";
import type { SubmitResult } from "./usage-schemas.js";

/**
 * Usage ingestion (docs/api.md, "Usage events"; docs/decisions.md, "Rating an event"; docs/architecture.md,
 * "Ingestion"): each event passes parse → judge → price → write → settle → answer (the files of ingest/), each
 * stage handing its value to the next. Every new event is stored, rated and put on its draft invoice in one
 * transaction; a request is one transaction per lane of the contracts it touches (batch-writer.ts), or one
 * transaction on the locking path.
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
  // Chained back to front: each stage is given the next.
  const write = writeStages({ clock, book, ingest, next: settleStage });
  const price = priceStage({ book, next: write.batch });
  // Without a monthly cap, a model priced on the running quantity or credits, pricing needs nothing stored: the
  // batch is priced first and written in one call. Otherwise the charge (or its credit) depends on the locked draft
  // and grants: such a batch is priced on the locked drafts as it is written.
  const priceAndWrite = (tenant: Tenancy, batch: JudgedBatch) =>
    batch.judgement.candidates.some((c) => c.contract.has_credits || readsRunningTotals(c.rule))
      ? write.locking(tenant, batch)
      : price(tenant, batch);
  const parse = parseStage(judgeStage({ contexts, clock, next: priceAndWrite }));

  return async function submit(tenant: Tenancy, rawEvents: readonly unknown[]): Promise<SubmitResult> {
    requireScope(tenant, "usage:write");
    return parse(tenant, rawEvents);
  };
}
