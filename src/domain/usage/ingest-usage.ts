import type { Database, Tx } from "../../db/database.js";
import type { RatingContextRow } from "../contracts/contract-repository.js";
import { findRatingContexts } from "../contracts/contract-repository.js";
import { addCharge, capUsedByRule, feeLineKey, usageLineKey } from "../invoices/invoice-lines.js";
import { periodKey, RetryTransaction, withDrafts, type DraftInvoices, type WantedInvoice } from "../invoices/draft-invoices.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { periodOf, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { Big, toDecimalString } from "../kernel/money.js";
import { rateEvent, selectRule, type RatableEvent } from "./rate-event.js";
import { usageEventInput, type RejectionCode, type SubmitResult, type UsageEventInput } from "./usage-schemas.js";
import { findStoredEventIds, insertRatedEvents, type RatedEventWrite } from "./usage-repository.js";

type Outcome =
  | { kind: "accepted"; duplicate: boolean }
  | { kind: "rejected"; code: RejectionCode; message: string };

interface Candidate {
  index: number;
  input: UsageEventInput;
  ratable: RatableEvent;
  contract: RatingContextRow;
  periodStart: string;
  periodEnd: string;
}

function describeIssue(issue: { path: PropertyKey[]; message: string; code: string; keys?: string[] }): string {
  if (issue.code === "unrecognized_keys" && issue.keys) return `Unknown field: ${issue.keys.join(", ")}`;
  const path = issue.path.map(String).join(".");
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return `${path} is required`;
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Judges an event against its contract (decisions.md, Rating 1 to 3). Pure. */
export function judge(input: UsageEventInput, ratable: RatableEvent, contract: RatingContextRow | undefined): Outcome | undefined {
  if (!contract) return { kind: "rejected", code: "contract_not_found", message: `No contract '${input.external_contract_id}'` };
  if (contract.status !== "active") {
    return { kind: "rejected", code: "contract_not_active", message: `Contract '${contract.id}' is ${contract.status}, not active` };
  }
  const day = toDateString(new Date(input.timestamp));
  if (day < contract.start_date || (contract.end_date !== null && day > contract.end_date)) {
    return {
      kind: "rejected",
      code: "outside_contract_term",
      message: `timestamp ${input.timestamp} is outside the contract term ${contract.start_date}..${contract.end_date ?? "(open)"}`,
    };
  }
  if (!contract.metrics.includes(input.metric) || !selectRule(contract.rules, ratable)) {
    const known = contract.metrics.length > 0 ? contract.metrics.join(", ") : "none: add a usage rule first";
    return {
      kind: "rejected",
      code: "unknown_metric",
      message: `Metric '${input.metric}' has no rule on contract '${contract.id}' for this event (metrics: ${known})`,
    };
  }
  return undefined;
}

/**
 * Usage ingestion (spec section 4, submitUsage; decisions.md "Rating an event"). One request is one
 * transaction: every new event is stored, rated and put on its draft invoice together, or none is.
 */
export function createUsageIngestion({ db, clock, drafts }: { db: Database; clock: Clock; drafts: DraftInvoices }) {
  return async function submit(actor: Actor, rawEvents: readonly unknown[]): Promise<SubmitResult> {
    requireScope(actor, "usage:write");
    const outcomes: Outcome[] = new Array(rawEvents.length);
    const eventIds: (string | null)[] = new Array(rawEvents.length).fill(null);
    const firstIndexOf = new Map<string, number>();
    const parsed: { index: number; input: UsageEventInput }[] = [];

    // 1. Shape of each event, and copies within the batch (the first copy decides).
    rawEvents.forEach((raw, index) => {
      const rawId = (raw as { event_id?: unknown } | null)?.event_id;
      if (typeof rawId === "string") eventIds[index] = rawId;
      const result = usageEventInput.safeParse(raw);
      if (!result.success) {
        const issue = result.error.issues[0]!;
        outcomes[index] = { kind: "rejected", code: "invalid_event", message: describeIssue(issue as never) };
        return;
      }
      const first = firstIndexOf.get(result.data.event_id);
      if (first !== undefined) return; // settled after the first copy is
      firstIndexOf.set(result.data.event_id, index);
      parsed.push({ index, input: result.data });
    });

    // 2. Ids stored already answer accepted and change nothing (Rating 8).
    const stored = await findStoredEventIds(db, actor.companyId, parsed.map((p) => p.input.event_id));
    const fresh = parsed.filter((p) => {
      if (!stored.has(p.input.event_id)) return true;
      outcomes[p.index] = { kind: "accepted", duplicate: true };
      return false;
    });

    // 3. Judge the rest against their contracts (one query for the batch).
    const contracts = new Map(
      (await findRatingContexts(db, actor.companyId, [...new Set(fresh.map((p) => p.input.external_contract_id))])).map((c) => [c.id, c]),
    );
    const candidates: Candidate[] = [];
    for (const { index, input } of fresh) {
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
      const verdict = judge(input, ratable, contract);
      if (verdict) {
        outcomes[index] = verdict;
        continue;
      }
      const period = periodOf(new Date(input.timestamp));
      candidates.push({ index, input, ratable, contract: contract!, periodStart: period.start, periodEnd: period.end });
    }

    // 4. Rate and store under the draft invoices' locks.
    if (candidates.length > 0) {
      const attempt = { recheckStored: false };
      const duplicates = await withDrafts(db, drafts, actor.companyId, (tx) => rateAndStore(tx, actor.companyId, candidates, attempt));
      for (const candidate of candidates) {
        outcomes[candidate.index] = { kind: "accepted", duplicate: duplicates.has(candidate.input.event_id) };
      }
    }

    // Later copies within the batch share their first copy's outcome, marked duplicate when accepted.
    rawEvents.forEach((_, index) => {
      if (outcomes[index]) return;
      const first = outcomes[firstIndexOf.get(eventIds[index]!)!]!;
      outcomes[index] = first.kind === "accepted" ? { kind: "accepted", duplicate: true } : first;
    });

    let accepted = 0;
    const events = outcomes.map((outcome, index) => {
      if (outcome.kind === "accepted") {
        accepted += 1;
        return { event_id: eventIds[index]!, status: "accepted" as const, duplicate: outcome.duplicate };
      }
      return { event_id: eventIds[index] ?? null, status: "rejected" as const, error: { code: outcome.code, message: outcome.message } };
    });
    return { accepted, rejected: rawEvents.length - accepted, events };
  };

  /**
   * Inside one transaction: lock the drafts (sorted), rate each event in batch order against its rule's cap
   * room, store the events, save the drafts. Returns ids that turned out to be stored by a concurrent request
   * (only possible when the batch is then retried: see below).
   */
  async function rateAndStore(
    tx: Tx,
    companyId: string,
    candidates: Candidate[],
    attempt: { recheckStored: boolean },
  ): Promise<Set<string>> {
    const wanted = new Map<string, WantedInvoice>();
    for (const c of candidates) {
      wanted.set(periodKey(c.contract.id, c.periodStart), {
        contractId: c.contract.id,
        periodStart: c.periodStart,
        periodEnd: c.periodEnd,
        currency: c.contract.currency,
        paymentTerms: c.contract.payment_terms,
      });
    }
    const locked = await drafts.lock(tx, companyId, [...wanted.values()]);

    // After a clash with a concurrent request (below), look again for ids stored since the first check.
    const storedMeanwhile = attempt.recheckStored
      ? await findStoredEventIds(tx, companyId, candidates.map((c) => c.input.event_id))
      : new Set<string>();
    const toStore = candidates.filter((c) => !storedMeanwhile.has(c.input.event_id));

    const capUsed = new Map<string, Map<string, Big>>();
    const writes: RatedEventWrite[] = [];
    for (const c of toStore) {
      const draft = locked.get(periodKey(c.contract.id, c.periodStart))!;
      let used = capUsed.get(draft.number);
      if (!used) capUsed.set(draft.number, (used = capUsedByRule(draft.lines.values())));
      const rule = selectRule(c.contract.rules, c.ratable)!;
      const rating = rateEvent(c.ratable, rule, used.get(rule.id) ?? new Big(0));
      if (rating.kind === "usage") used.set(rule.id, (used.get(rule.id) ?? new Big(0)).plus(rating.cappedCharge));
      const lineKey = rating.kind === "fee" ? feeLineKey(c.input.metric) : usageLineKey(rule.id, rating.appliedRate!);
      draft.lines.set(
        lineKey,
        addCharge(
          draft.lines.get(lineKey),
          {
            kind: rating.kind,
            rule,
            metric: c.input.metric,
            quantity: c.input.quantity,
            unitPrice: rating.appliedRate,
            charge: rating.charge,
            cappedCharge: rating.cappedCharge,
          },
          draft.currency,
        ),
      );
      writes.push({
        id: c.input.event_id,
        contractId: c.contract.id,
        metric: c.input.metric,
        quantity: toDecimalString(c.input.quantity),
        feeAmount: c.input.fee_amount ? toDecimalString(c.input.fee_amount) : null,
        appliedRate: rating.appliedRate ? toDecimalString(rating.appliedRate) : null,
        counterparty: c.input.counterparty ?? null,
        counterpartySide: c.input.counterparty_side ?? null,
        pair: c.input.pair ?? null,
        ratedAmount: toDecimalString(rating.charge),
        ruleId: rule.id,
        pricingVersion: c.contract.current_version,
        invoiceNumber: draft.number,
        lineKey,
        periodStart: c.periodStart,
        periodEnd: c.periodEnd,
        timestamp: c.input.timestamp,
      });
    }

    if (writes.length > 0) {
      const inserted = await insertRatedEvents(tx, companyId, writes, clock.now());
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
