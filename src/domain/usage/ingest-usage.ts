import { forCompany } from "../../db/company-scope.js";
import type { Database, Tx } from "../../db/database.js";
import type { RatingContextRow } from "../contracts/contract-repository.js";
import type { RatingContextCache } from "../contracts/rating-context-cache.js";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { addCharge, capUsedByRule, lineIdentity } from "../invoices/invoice-lines.js";
import {
  periodKey,
  RetryTransaction,
  withDrafts,
  type DraftInvoices,
  type WantedInvoice,
} from "../invoices/draft-invoices.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { periodOf, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { Big, toDecimalString } from "../kernel/money.js";
import { countUsageDuplicates } from "../../platform/metrics.js";
import { rateEvent, selectRule, type RatableEvent, type Rating } from "./rate-event.js";
import { ruleRate } from "./pricers.js";
import type { RejectionCode, SubmitResult, UsageEventInput } from "./usage-schemas.js";
import { parseUsageEvent } from "./parse-usage-event.js";
import { createBatchWriter, StaleContracts, type IngestSettings } from "./batch-writer.js";
import { mergeWritten, nothingRefused, writeIsolating, type WrittenDuplicates } from "./write-isolation.js";
import {
  findDifferingCopies,
  findStaleContracts,
  findStoredEventIds,
  insertRatedEvents,
  type BatchEventWrite,
  type DuplicateCopy,
  type RatedEventWrite,
} from "./usage-repository.js";

const ZERO = new Big(0);

/** `differs` of a duplicate: whether its copy differs from the stored event, once known. */
type Outcome =
  | { kind: "accepted"; duplicate: boolean; differs?: boolean }
  | { kind: "rejected"; code: RejectionCode; message: string };

interface Parsed {
  index: number;
  input: UsageEventInput;
}

/** The verdict on one parsed event: a candidate to rate, or its refusal. Pure. */
function judgeParsed(
  { index, input }: Parsed,
  contracts: ReadonlyMap<string, RatingContextRow>,
): { candidate: Candidate } | { refusal: Outcome } {
  const ratable: RatableEvent = {
    metric: input.metric,
    quantity: input.quantity,
    feeAmount: input.fee_amount ?? null,
    appliedRate: input.applied_rate ?? null,
    counterparty: input.counterparty ?? null,
    counterpartySide: input.counterparty_side ?? null,
    pair: input.pair ?? null,
  };
  const contract = contracts.get(input.external_contract_id);
  const instant = new Date(input.timestamp);
  const rule = contract ? selectRule(contract.rules, ratable) : undefined;
  const refusal = judge(input, toDateString(instant), contract, rule);
  if (refusal) return { refusal };
  const period = periodOf(instant);
  return {
    candidate: {
      index,
      input,
      ratable,
      contract: contract!,
      rule: rule!,
      periodStart: period.start,
      periodEnd: period.end,
    },
  };
}

interface Candidate {
  index: number;
  input: UsageEventInput;
  ratable: RatableEvent;
  contract: RatingContextRow;
  /** The rule that prices the event (selectRule), chosen once. */
  rule: PricingRule;
  periodStart: string;
  periodEnd: string;
}

/**
 * Judges an event against its contract (docs/decisions.md, "Rating" 1 to 3). `day` is the event's UTC date, `rule`
 * the contract's rule for it (selectRule), if any. Pure.
 */
function judge(
  input: UsageEventInput,
  day: string,
  contract: RatingContextRow | undefined,
  rule: PricingRule | undefined,
): Outcome | undefined {
  if (!contract)
    return { kind: "rejected", code: "contract_not_found", message: `No contract '${input.external_contract_id}'` };
  if (contract.status !== "active") {
    return {
      kind: "rejected",
      code: "contract_not_active",
      message: `Contract '${contract.id}' is ${contract.status}, not active`,
    };
  }
  if (day < contract.start_date || (contract.end_date !== null && day > contract.end_date)) {
    return {
      kind: "rejected",
      code: "outside_contract_term",
      message: `timestamp ${input.timestamp} is outside the contract term ${contract.start_date}..${contract.end_date ?? "(open)"}`,
    };
  }
  if (!contract.metrics.includes(input.metric) || !rule) {
    const known = contract.metrics.length > 0 ? contract.metrics.join(", ") : "none: add a usage rule first";
    return {
      kind: "rejected",
      code: "unknown_metric",
      message: `Metric '${input.metric}' has no rule on contract '${contract.id}' for this event (metrics: ${known})`,
    };
  }
  return undefined;
}

/** What every event priced at a rule's own rate shares: the rate as text, its line key and description. */
interface RuleLine {
  unitPrice: string;
  key: string;
  description: string;
}
const ruleLines = new WeakMap<PricingRule, RuleLine>();

/** The line of a usage charge at the rule's own rate, worked out once per rule object (rules are not mutated). */
function ruleLine(rule: PricingRule, metric: string, rate: Big): RuleLine {
  let line = ruleLines.get(rule);
  if (!line) {
    const identity = lineIdentity({ kind: "usage", rule, metric, unitPrice: rate });
    line = { unitPrice: toDecimalString(rate), key: identity.key, description: identity.description };
    ruleLines.set(rule, line);
  }
  return line;
}

/**
 * Usage ingestion (docs/api.md, "Usage events"; docs/decisions.md, "Rating an event"). Every new event is stored,
 * rated and put on its draft invoice in one transaction; a request is one transaction per lane of the
 * contracts it touches (batch-writer.ts), or one transaction on the locking path.
 */
export function createUsageIngestion({
  db,
  clock,
  drafts,
  contexts,
  ingest,
}: {
  db: Database;
  clock: Clock;
  drafts: DraftInvoices;
  contexts: RatingContextCache;
  ingest?: IngestSettings | undefined;
}) {
  const batchWriter = createBatchWriter({ db, clock, drafts, settings: ingest });
  return async function submit(actor: Actor, rawEvents: readonly unknown[]): Promise<SubmitResult> {
    requireScope(actor, "usage:write");
    const outcomes: Outcome[] = new Array(rawEvents.length);
    const eventIds: (string | null)[] = new Array(rawEvents.length).fill(null);
    const parsed: Parsed[] = [];

    // 1. The shape of each event on its own.
    rawEvents.forEach((raw, index) => {
      const rawId = (raw as { event_id?: unknown } | null)?.event_id;
      if (typeof rawId === "string") eventIds[index] = rawId;
      const result = parseUsageEvent(raw);
      if (result.ok) parsed.push({ index, input: result.input });
      else outcomes[index] = { kind: "rejected", code: "invalid_event", message: result.message };
    });

    // 2-4. Judge, rate and store; again with fresh contracts if a cached one changed meanwhile. An event that
    //      another lane stored before that is this request's own (the entry whose copy was stored), whatever
    //      the next attempt makes of it: found stored, refused by a contract that changed, or a later copy.
    const storedEarlier = new Map<string, number>(); // event id → index of the entry stored
    const judged: (Candidate | undefined)[] = new Array(rawEvents.length);
    for (let attempt = 0; ; attempt++) {
      try {
        await judgeRateAndStore(actor.companyId, parsed, eventIds, outcomes, storedEarlier, judged);
        break;
      } catch (error) {
        if (!(error instanceof StaleContracts) || attempt >= 3) throw error;
        contexts.invalidate(actor.companyId, error.contractIds);
      }
    }
    for (const index of storedEarlier.values()) outcomes[index] = { kind: "accepted", duplicate: false };
    await markDiffering(actor.companyId, parsed, outcomes, judged);

    let accepted = 0;
    const events = outcomes.map((outcome, index) => {
      if (outcome.kind === "accepted") {
        accepted += 1;
        // `differs` only when true, so that an honest retry's answer is what it always was.
        return outcome.differs
          ? { event_id: eventIds[index]!, status: "accepted" as const, duplicate: true, differs: true }
          : { event_id: eventIds[index]!, status: "accepted" as const, duplicate: outcome.duplicate };
      }
      return {
        event_id: eventIds[index] ?? null,
        status: "rejected" as const,
        error: { code: outcome.code, message: outcome.message },
      };
    });
    return { accepted, rejected: rawEvents.length - accepted, events };
  };

  async function judgeRateAndStore(
    companyId: string,
    parsed: Parsed[],
    eventIds: (string | null)[],
    outcomes: Outcome[],
    storedEarlier: Map<string, number>,
    judged: (Candidate | undefined)[],
  ): Promise<void> {
    // 2. Judge each event against its contract (cached, or one query for the batch).
    const ids = [...new Set(parsed.map((p) => p.input.external_contract_id))];
    let contracts = await contexts.get(db, companyId, ids);
    let verdicts = parsed.map((p) => judgeParsed(p, contracts));
    // A refusal is never based on a cached contract: confirm it against fresh rows.
    const refusedContracts = [
      ...new Set(parsed.filter((_, i) => !("candidate" in verdicts[i]!)).map((p) => p.input.external_contract_id)),
    ];
    if (refusedContracts.length > 0) {
      const fresh = await contexts.get(db, companyId, refusedContracts, true);
      contracts = new Map(contracts);
      for (const id of refusedContracts) {
        if (fresh.has(id)) contracts.set(id, fresh.get(id)!);
        else contracts.delete(id);
      }
      verdicts = parsed.map((p) => judgeParsed(p, contracts));
    }
    parsed.forEach((p, i) => {
      const verdict = verdicts[i]!;
      judged[p.index] = "candidate" in verdict ? verdict.candidate : undefined;
    });

    // Copies of an id within the batch: the first copy that is judged good is the event; copies before it
    // keep their own refusals, copies after it are duplicates of it (docs/decisions.md, "Rating" 8).
    const candidates: Candidate[] = [];
    const chosen = new Map<string, Candidate>();
    parsed.forEach((p, i) => {
      const verdict = verdicts[i]!;
      if (chosen.has(p.input.event_id)) return;
      if ("candidate" in verdict) {
        chosen.set(p.input.event_id, verdict.candidate);
        candidates.push(verdict.candidate);
      } else {
        outcomes[p.index] = verdict.refusal;
      }
    });

    // 3. An id stored already answers accepted and changes nothing, even if this copy would be refused
    //    (Rating 8). Candidates learn it from the write itself; refused ids are looked up here.
    const refusedIds = [
      ...new Set(
        outcomes.flatMap((o, index) =>
          o?.kind === "rejected" && eventIds[index] !== null && !chosen.has(eventIds[index]!) ? [eventIds[index]!] : [],
        ),
      ),
    ];
    if (refusedIds.length > 0) {
      const stored = await findStoredEventIds(forCompany(db, companyId), refusedIds);
      outcomes.forEach((o, index) => {
        if (o?.kind === "rejected" && eventIds[index] !== null && stored.has(eventIds[index]!)) {
          outcomes[index] = { kind: "accepted", duplicate: true };
        }
      });
    }

    // 4. Rate and store. Without monthly caps, rating needs nothing from the stored state, so the batch
    //    goes to the database in one call; a capped rule's remainder depends on the locked draft.
    if (candidates.length > 0) {
      const capped = candidates.some((c) => c.rule.monthly_cap !== null);
      let written: WrittenDuplicates;
      try {
        written = capped ? await lockingPath(companyId, candidates) : await batchPath(companyId, candidates);
      } catch (error) {
        if (error instanceof StaleContracts && error.storedIds.length > 0) {
          const entryOf = new Map(candidates.map((c) => [c.input.event_id, c.index]));
          for (const id of error.storedIds) storedEarlier.set(id, entryOf.get(id)!);
        }
        throw error;
      }
      for (const candidate of candidates) {
        const id = candidate.input.event_id;
        const unstorable = written.unstorable.get(id);
        outcomes[candidate.index] = unstorable
          ? { kind: "rejected", code: "invalid_event", message: unstorable }
          : written.closed.has(id)
            ? periodClosed(candidate)
            : written.duplicates.has(id)
              ? { kind: "accepted", duplicate: true, differs: written.verdicts.get(id) }
              : { kind: "accepted", duplicate: false };
      }
    }
    parsed.forEach((p) => {
      const first = chosen.get(p.input.event_id);
      if (first && first.index !== p.index && p.index > first.index)
        outcomes[p.index] = { kind: "accepted", duplicate: true };
    });
  }

  /**
   * Settles `differs` on every duplicate: whether its copy differs from the event stored under its id (by an
   * earlier request, a concurrent one, or this one for an earlier entry). The stored event stands either
   * way; this only tells the sender. The ingest function judges the duplicates of a replayed batch itself
   * (migrations/functions/billing_ingest_usage_lines.sql); the rest (a batch mixing new and stored ids, the locking path, refused copies of
   * stored ids, repeats within the batch) take one query, only when there are such duplicates, so that new
   * events never pay for it. A copy that is not a valid event cannot be the stored one.
   */
  async function markDiffering(
    companyId: string,
    parsed: Parsed[],
    outcomes: Outcome[],
    judged: (Candidate | undefined)[],
  ): Promise<void> {
    let duplicates = 0;
    let unjudged = 0;
    for (const outcome of outcomes) {
      if (outcome.kind !== "accepted" || !outcome.duplicate) continue;
      duplicates += 1;
      if (outcome.differs === undefined) unjudged += 1;
    }
    if (duplicates === 0) return;
    let differing = 0;
    if (unjudged > 0) {
      const inputs = new Array<UsageEventInput | undefined>(outcomes.length);
      for (const p of parsed) inputs[p.index] = p.input;
      const copies: DuplicateCopy[] = [];
      const entries: number[] = [];
      outcomes.forEach((outcome, index) => {
        if (outcome.kind !== "accepted" || !outcome.duplicate || outcome.differs !== undefined) return;
        const input = inputs[index];
        if (input) {
          copies.push(duplicateCopy(input, judged[index]));
          entries.push(index);
        }
        outcomes[index] = { kind: "accepted", duplicate: true, differs: !input };
      });
      for (const i of await findDifferingCopies(forCompany(db, companyId), copies)) {
        outcomes[entries[i]!] = { kind: "accepted", duplicate: true, differs: true };
      }
    }
    for (const outcome of outcomes) if (outcome.kind === "accepted" && outcome.differs) differing += 1;
    countUsageDuplicates(duplicates, differing);
  }

  /** The one-round-trip path (migrations/functions/billing_ingest_usage_lines.sql). Returns the ids found stored already, some judged. */
  async function batchPath(companyId: string, candidates: Candidate[]): Promise<WrittenDuplicates> {
    const writes = new Array<BatchEventWrite>(candidates.length);
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i]!;
      const rule = c.rule;
      const rating = rateEvent(c.ratable, rule, ZERO);
      // A usage charge at the rule's own rate (the usual case) shares its line's strings with every other.
      const line =
        rating.kind === "usage" && c.ratable.appliedRate === null
          ? ruleLine(rule, c.input.metric, rating.appliedRate!)
          : {
              ...lineIdentity({ kind: rating.kind, rule, metric: c.input.metric, unitPrice: rating.appliedRate }),
              unitPrice: rating.appliedRate ? toDecimalString(rating.appliedRate) : null,
            };
      // The stored fields, then where it lands (added in one fixed order: every write has the same shape).
      const write = eventWrite(c, rule, rating, line.unitPrice) as BatchEventWrite;
      write.lineKey = line.key;
      write.kind = rating.kind;
      write.description = line.description;
      write.unitPrice = line.unitPrice;
      write.quantityDecimal = c.input.quantity;
      write.chargeDecimal = rating.charge;
      writes[i] = write;
    }
    return batchWriter.write(companyId, writes, (contractId, periodStart) =>
      wantedInvoice(candidates.find((c) => c.contract.id === contractId && c.periodStart === periodStart)!),
    );
  }

  /** The locking path for batches with capped rules: see rateAndStore. Stored duplicates never reach it. */
  async function lockingPath(companyId: string, candidates: Candidate[]): Promise<WrittenDuplicates> {
    const stored = await findStoredEventIds(
      forCompany(db, companyId),
      candidates.map((c) => c.input.event_id),
    );
    const fresh = candidates.filter((c) => !stored.has(c.input.event_id));
    const written = nothingRefused();
    for (const id of stored) written.duplicates.add(id);
    if (fresh.length === 0) return written;
    // One transaction for the batch; an event the database refuses costs only itself (write-isolation.ts).
    const storedParts: string[] = [];
    try {
      const report = await writeIsolating(
        fresh,
        (c) => c.input.event_id,
        async (part) => {
          const attempt = { recheckStored: false };
          const closed = new Set<string>();
          const meanwhile = await withDrafts(db, drafts, companyId, (tx) =>
            rateAndStore(tx, companyId, [...part], attempt, closed),
          );
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
   * Inside one transaction: lock the drafts (sorted), rate each event in batch order against its rule's cap
   * room, store the events, save the drafts. Returns the ids found stored by a concurrent request.
   */
  async function rateAndStore(
    tx: Tx,
    companyId: string,
    candidates: Candidate[],
    attempt: { recheckStored: boolean },
    closed: Set<string>,
  ): Promise<Set<string>> {
    const wanted = new Map<string, WantedInvoice>();
    for (const c of candidates) wanted.set(periodKey(c.contract.id, c.periodStart), wantedInvoice(c));
    const locked = await drafts.lock(tx, companyId, [...wanted.values()]);
    const stale = await findStaleContracts(
      forCompany(tx, companyId),
      new Map(candidates.map((c) => [c.contract.id, c.contract.current_version])),
    );
    if (stale.length > 0) throw new StaleContracts(stale);

    // After a clash with a concurrent request (below), look again for ids stored since the first check.
    const storedMeanwhile = attempt.recheckStored
      ? await findStoredEventIds(
          forCompany(tx, companyId),
          candidates.map((c) => c.input.event_id),
        )
      : new Set<string>();
    // An invoice that has left draft is closed: its period's events are refused (held by the lock, it stays so).
    closed.clear();
    const toStore = candidates.filter((c) => {
      if (storedMeanwhile.has(c.input.event_id)) return false;
      if (locked.get(periodKey(c.contract.id, c.periodStart))!.status === "draft") return true;
      closed.add(c.input.event_id);
      return false;
    });

    const capUsed = new Map<string, Map<string, Big>>();
    const writes: RatedEventWrite[] = [];
    for (const c of toStore) {
      const draft = locked.get(periodKey(c.contract.id, c.periodStart))!;
      let used = capUsed.get(draft.number);
      if (!used) {
        used = capUsedByRule(draft.lines.values());
        capUsed.set(draft.number, used);
      }
      const rule = c.rule;
      const rating = rateEvent(c.ratable, rule, used.get(rule.id) ?? new Big(0));
      if (rating.kind === "usage") used.set(rule.id, (used.get(rule.id) ?? new Big(0)).plus(rating.cappedCharge));
      const charge = {
        kind: rating.kind,
        rule,
        metric: c.input.metric,
        quantity: c.input.quantity,
        unitPrice: rating.appliedRate,
        charge: rating.charge,
        cappedCharge: rating.cappedCharge,
      };
      const { key } = lineIdentity(charge);
      draft.lines.set(key, addCharge(draft.lines.get(key), charge));
      writes.push({ ...eventWrite(c, rule, rating), invoiceNumber: draft.number, lineKey: key });
    }

    if (writes.length > 0) {
      const inserted = await insertRatedEvents(forCompany(tx, companyId), writes, clock.now());
      // A concurrent request stored one of these ids (for another contract, under another lock) after our
      // check: the charges computed here counted it, so start over; the next attempt sees it as stored.
      if (inserted.length !== writes.length) {
        attempt.recheckStored = true;
        throw new RetryTransaction("event ids stored concurrently");
      }
      await drafts.save(tx, companyId, locked.values());
    }
    return storedMeanwhile;
  }
}

/** The refusal of an event whose month's invoice is no longer a draft (docs/api.md, "Usage events"). */
function periodClosed(c: Candidate): Outcome {
  return {
    kind: "rejected",
    code: "period_closed",
    message: `The invoice of ${c.contract.id} for ${c.periodStart.slice(0, 7)} has been issued: its period is closed`,
  };
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
    version: candidate ? candidate.contract.current_version : null,
    ruleRate: candidate ? ruleLine(candidate.rule, input.metric, ruleRate(candidate.rule)).unitPrice : null,
  };
}

function wantedInvoice(c: Candidate): WantedInvoice {
  return {
    contractId: c.contract.id,
    periodStart: c.periodStart,
    periodEnd: c.periodEnd,
    currency: c.contract.currency,
    paymentTerms: c.contract.payment_terms,
  };
}

/** The stored fields of a rated event, but for where it lands. `appliedRate`: the rating's rate as text. */
function eventWrite(
  c: Candidate,
  rule: PricingRule,
  rating: Rating,
  appliedRate: string | null = rating.appliedRate ? toDecimalString(rating.appliedRate) : null,
): Omit<RatedEventWrite, "invoiceNumber" | "lineKey"> {
  return {
    id: c.input.event_id,
    contractId: c.contract.id,
    metric: c.input.metric,
    quantity: toDecimalString(c.input.quantity),
    feeAmount: c.input.fee_amount ? toDecimalString(c.input.fee_amount) : null,
    appliedRate,
    counterparty: c.input.counterparty ?? null,
    counterpartySide: c.input.counterparty_side ?? null,
    pair: c.input.pair ?? null,
    ratedAmount: toDecimalString(rating.charge),
    ruleId: rule.id,
    pricingVersion: c.contract.current_version,
    periodStart: c.periodStart,
    periodEnd: c.periodEnd,
    timestamp: c.input.timestamp,
  };
}
