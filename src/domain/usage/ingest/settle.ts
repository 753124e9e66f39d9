import type { CompanyScope } from "../../../db/company-scope.js";
import type { CompanyData } from "../../kernel/tenancy.js";
import { toDecimalString } from "../../kernel/money.js";
import { countUsageDuplicates } from "../../../platform/metrics.js";
import { ruleRate } from "../pricers.js";
import { findDifferingCopies, findStoredEventIds, type DuplicateCopy } from "../usage-repository.js";
import type { UsageEventInput } from "../usage-schemas.js";
import type { SubmitResult } from "../usage-schemas.js";
import { answer } from "./answer.js";
import type { Candidate } from "./judge.js";
import { ACCEPTED, DUPLICATE, type Decisions, type Outcome } from "./outcome.js";
import type { WrittenBatch } from "./write.js";

/**
 * Stage 5, the last but the answer: every entry's outcome from the stage that decided it, refused entries whose id
 * is stored already and the duplicates' `differs` settled, then the answer (answer.ts).
 */
export async function settleStage(tenant: CompanyData, batch: WrittenBatch): Promise<SubmitResult> {
  const { judgement } = batch;
  const chosen = new Set(judgement.candidates.map((c) => c.input.event_id));
  const storedRefused = await settleRefusedStored(
    tenant.data,
    [batch.refused, judgement.refused],
    batch.eventIds,
    chosen,
  );
  const copies = new Set(judgement.copies);
  const outcomes = new Array<Outcome>(batch.eventIds.length);
  for (let index = 0; index < outcomes.length; index++) {
    outcomes[index] =
      batch.written.get(index) ??
      (copies.has(index) ? DUPLICATE : undefined) ??
      storedRefused.get(index) ??
      judgement.refused.get(index) ??
      batch.refused.get(index) ??
      unreachable(index);
  }
  for (const index of batch.storedEarlier.values()) outcomes[index] = ACCEPTED;
  const inputs = new Map(batch.parsed.map((p) => [p.index, p.input]));
  return answer(await settleDuplicates(tenant.data, outcomes, inputs, judgement.good), batch.eventIds);
}

function unreachable(index: number): never {
  throw new Error(`entry ${index} of the batch has no outcome`);
}

/**
 * An id stored already answers accepted and changes nothing, even if this copy is refused (docs/decisions.md,
 * "Rating" 8). Candidates learn it from the write itself; the refused entries' ids (but those of the batch's
 * own events, `chosen`) are looked up here, in one query when there are any. Returns the entries found stored.
 */
async function settleRefusedStored(
  scope: CompanyScope,
  refused: readonly Decisions[],
  eventIds: readonly (string | null)[],
  chosen: ReadonlySet<string>,
): Promise<Map<number, Outcome>> {
  const entries: [number, string][] = [];
  for (const decisions of refused) {
    for (const index of decisions.keys()) {
      const id = eventIds[index];
      if (id !== null && id !== undefined && !chosen.has(id)) entries.push([index, id]);
    }
  }
  const found = new Map<number, Outcome>();
  if (entries.length === 0) return found;
  const stored = await findStoredEventIds(scope, [...new Set(entries.map(([, id]) => id))]);
  for (const [index, id] of entries) if (stored.has(id)) found.set(index, DUPLICATE);
  return found;
}

/**
 * Stage 5: settles `differs` on every duplicate: whether its copy differs from the event stored under its id (by
 * an earlier request, a concurrent one, or this one for an earlier entry). The stored event stands either way;
 * this only tells the sender. The ingest function judges the duplicates of a replayed batch itself
 * (migrations/functions/billing_ingest_usage_lines.sql); the rest (a batch mixing new and stored ids, the locking
 * path, refused copies of stored ids, repeats within the batch) take one query, only when there are such
 * duplicates, so that new events never pay for it. A copy that is not a valid event cannot be the stored one.
 * `inputs`: each entry's event when it was well-formed; `good`: its verdict when it was judged good.
 */
async function settleDuplicates(
  scope: CompanyScope,
  outcomes: readonly Outcome[],
  inputs: ReadonlyMap<number, UsageEventInput>,
  good: ReadonlyMap<number, Candidate>,
): Promise<Outcome[]> {
  const settled = [...outcomes];
  let duplicates = 0;
  const copies: DuplicateCopy[] = [];
  const entries: number[] = [];
  settled.forEach((outcome, index) => {
    if (outcome.kind !== "accepted" || !outcome.duplicate) return;
    duplicates += 1;
    if (outcome.differs !== undefined) return;
    const input = inputs.get(index);
    settled[index] = { kind: "accepted", duplicate: true, differs: !input };
    if (input) {
      copies.push(duplicateCopy(input, good.get(index)));
      entries.push(index);
    }
  });
  if (duplicates === 0) return settled;
  if (copies.length > 0) {
    for (const i of await findDifferingCopies(scope, copies)) {
      const index = entries[i];
      if (index !== undefined) settled[index] = { kind: "accepted", duplicate: true, differs: true };
    }
  }
  let differing = 0;
  for (const outcome of settled) if (outcome.kind === "accepted" && outcome.differs) differing += 1;
  countUsageDuplicates(duplicates, differing);
  return settled;
}

/** A duplicate's copy as compared with the stored event; `candidate`: its verdict, when it was not refused. */
function duplicateCopy(input: UsageEventInput, candidate: Candidate | undefined): DuplicateCopy {
  return {
    id: input.event_id,
    contractId: input.external_contract_id,
    metric: input.metric,
    quantity: toDecimalString(input.quantity),
    timestamp: input.timestamp,
    feeAmount: input.fee_amount ? toDecimalString(input.fee_amount) : null,
    appliedRate: input.applied_rate ? toDecimalString(input.applied_rate) : null,
    counterparty: input.counterparty ?? null,
    counterpartySide: input.counterparty_side ?? null,
    pair: input.pair ?? null,
    ruleId: candidate ? candidate.rule.id : null,
    version: candidate ? candidate.version : null,
    ruleRate: candidate ? toDecimalString(ruleRate(candidate.rule)) : null,
  };
}
