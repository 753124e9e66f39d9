import type { RatingContextCache, RatingContextRow } from "../../contracts/rating-context-cache.js";
import { metricsOf, type PricingRule } from "../../contracts/pricing-rule.js";
import { programOn } from "../../contracts/program-timeline.js";
import { periodOf, toDateString } from "../../kernel/billing-period.js";
import type { CompanyData } from "../../kernel/tenancy.js";
import { StaleContracts } from "../batch-writer.js";
import { takesAppliedRate, type RatableEvent } from "../pricers.js";
import type { Clock } from "../../kernel/clock.js";
import type { UsageEventInput } from "../usage-schemas.js";
import type { Outcome, Stage } from "./outcome.js";
import type { Parsed, ParsedBatch } from "./parse.js";

/** An event judged good: its contract, the rule that prices it, its service period. */
export interface Candidate {
  index: number;
  input: UsageEventInput;
  ratable: RatableEvent;
  contract: RatingContextRow;
  /** The program version in force on the event's day (program-timeline.ts), which prices it. */
  version: number;
  /** The rule that prices the event (selectRule), chosen once. */
  rule: PricingRule;
  periodStart: string;
  periodEnd: string;
}

/** The verdicts on a batch's parsed entries. */
export interface Judgement {
  /** The events to price and write: of each id, the first copy judged good, in batch order. */
  candidates: readonly Candidate[];
  /** Entries refused on their own (a copy before its id's good one included). */
  refused: ReadonlyMap<number, Outcome>;
  /** Entries that repeat an id with a good copy earlier in the batch: duplicates of it. */
  copies: readonly number[];
  /** Every entry judged good, chosen or not (a duplicate is compared with the stored event as judged). */
  good: ReadonlyMap<number, Candidate>;
  /** The contracts behind the refusals: a refusal is never based on a cached row, they are read again. */
  refusingContracts: readonly string[];
}

const SCOPE_FIELDS = [
  ["counterparty", "counterparty"],
  ["counterparty_side", "counterpartySide"],
  ["pair", "pair"],
] as const;

/**
 * The usage rule that prices an event (docs/decisions.md, "Rating" 3): of the rules of its metric whose scope fields
 * all match the event, the most specific one; among equally specific rules, the one added first.
 */
export function selectRule(rules: readonly PricingRule[], event: RatableEvent): PricingRule | undefined {
  let best: PricingRule | undefined;
  let bestScore = -1;
  for (const rule of rules) {
    if (rule.type !== "usage" || rule.metric !== event.metric) continue;
    let score = 0;
    let matches = true;
    for (const [ruleField, eventField] of SCOPE_FIELDS) {
      const wanted = rule[ruleField];
      if (wanted === null) continue;
      if (wanted !== event[eventField]) {
        matches = false;
        break;
      }
      score += 1;
    }
    if (matches && score > bestScore) {
      best = rule;
      bestScore = score;
    }
  }
  return best;
}

/** One event against its contract (docs/decisions.md, "Rating" 1 to 3): a candidate, or its refusal. Pure. */
function judgeEvent(
  { index, input }: Parsed,
  contract: RatingContextRow | undefined,
  thisMonth: string,
): { candidate: Candidate } | { refusal: Outcome; byContract: boolean } {
  const ratable: RatableEvent = {
    metric: input.metric,
    quantity: input.quantity,
    feeAmount: input.fee_amount ?? null,
    appliedRate: input.applied_rate ?? null,
    counterparty: input.counterparty ?? null,
    counterpartySide: input.counterparty_side ?? null,
    pair: input.pair ?? null,
  };
  const instant = new Date(input.timestamp);
  const day = toDateString(instant);
  if (day.slice(0, 7) > thisMonth) {
    const refused = refusal(
      "timestamp_in_future",
      `timestamp ${input.timestamp} falls in a month after the current one (${thisMonth}, UTC): its period has not begun`,
    );
    return { ...refused, byContract: false };
  }
  if (!contract) return refusal("contract_not_found", `No contract '${input.external_contract_id}'`);
  if (contract.status !== "active")
    return refusal("contract_not_active", `Contract '${contract.id}' is ${contract.status}, not active`);
  if (day < contract.start_date || (contract.end_date !== null && day > contract.end_date)) {
    return refusal(
      "outside_contract_term",
      `timestamp ${input.timestamp} is outside the contract term ${contract.start_date}..${contract.end_date ?? "(open)"}`,
    );
  }
  const program = programOn(contract.programs, day);
  const rule = selectRule(program.rules, ratable);
  if (!rule) {
    const metrics = metricsOf(program.rules);
    const known = metrics.length > 0 ? metrics.join(", ") : "none: add a usage rule first";
    return refusal(
      "unknown_metric",
      `Metric '${input.metric}' has no rule on contract '${contract.id}' for this event (metrics: ${known})`,
    );
  }
  if (ratable.appliedRate !== null && ratable.feeAmount === null && !takesAppliedRate(rule)) {
    return refusal(
      "invalid_event",
      `applied_rate cannot price an event of rule '${rule.id}': a ${rule.model} rule prices the period's quantity by its own ${rule.model === "package" ? "packages" : "tiers"}`,
    );
  }
  const period = periodOf(instant);
  return {
    candidate: {
      index,
      input,
      ratable,
      contract,
      version: program.version,
      rule,
      periodStart: period.start,
      periodEnd: period.end,
    },
  };
}

const refusal = (
  code:
    | "contract_not_found"
    | "contract_not_active"
    | "outside_contract_term"
    | "unknown_metric"
    | "invalid_event"
    | "timestamp_in_future",
  message: string,
) => ({
  refusal: { kind: "rejected" as const, code, message },
  byContract: true,
});

/**
 * Stage 2: judges every parsed entry against its contract, then settles copies of an id within the batch
 * (docs/decisions.md, "Rating" 8): the first copy judged good is the event; copies before it keep their own
 * refusals, copies after it are duplicates of it. Pure.
 */
export function judgeBatch(
  parsed: readonly Parsed[],
  contracts: ReadonlyMap<string, RatingContextRow>,
  now: Date,
): Judgement {
  const thisMonth = toDateString(now).slice(0, 7);
  const candidates: Candidate[] = [];
  const refused = new Map<number, Outcome>();
  const copies: number[] = [];
  const good = new Map<number, Candidate>();
  const refusingContracts = new Set<string>();
  const chosen = new Set<string>();
  for (const entry of parsed) {
    const verdict = judgeEvent(entry, contracts.get(entry.input.external_contract_id), thisMonth);
    if ("candidate" in verdict) good.set(entry.index, verdict.candidate);
    else if (verdict.byContract) refusingContracts.add(entry.input.external_contract_id);
    if (chosen.has(entry.input.event_id)) copies.push(entry.index);
    else if ("refusal" in verdict) refused.set(entry.index, verdict.refusal);
    else {
      chosen.add(entry.input.event_id);
      candidates.push(verdict.candidate);
    }
  }
  return { candidates, refused, copies, good, refusingContracts: [...refusingContracts] };
}

/** The batch as the judge hands it on. */
export interface JudgedBatch extends ParsedBatch {
  judgement: Judgement;
  /**
   * Events of this request that another of its lanes stored before a contract changed under the request (event id →
   * entry): they are the request's own, accepted, whatever the next round makes of them.
   */
  storedEarlier: ReadonlyMap<string, number>;
}

/** Rounds of judging a request may take when its contracts keep changing under it. */
const MAX_ROUNDS = 4;

/**
 * Stage 2 with its reads: the batch judged against its contracts from the per-process cache (one query for those
 * it lacks), handed on. When a contract changed since it was cached (the write throws StaleContracts), the batch
 * is judged again with fresh contracts and handed on again.
 */
export function judgeStage({
  contexts,
  clock,
  next,
}: {
  contexts: RatingContextCache;
  clock: Clock;
  next: Stage<JudgedBatch>;
}): Stage<ParsedBatch> {
  /** A refusal is never based on a cached row, so refused contracts are read again first. */
  async function judge(company: CompanyData, parsed: readonly Parsed[]): Promise<Judgement> {
    const ids = [...new Set(parsed.map((p) => p.input.external_contract_id))];
    const contracts = await contexts.get(company.data, ids);
    const now = clock.now();
    const first = judgeBatch(parsed, contracts, now);
    if (first.refusingContracts.length === 0) return first;
    const fresh = await contexts.get(company.data, first.refusingContracts, true);
    const confirmed = new Map<string, RatingContextRow>(contracts);
    for (const id of first.refusingContracts) {
      const row = fresh.get(id);
      if (row) confirmed.set(id, row);
      else confirmed.delete(id);
    }
    return judgeBatch(parsed, confirmed, now);
  }

  return async (tenant, batch) => {
    let storedEarlier: ReadonlyMap<string, number> = new Map();
    for (let round = 1; ; round++) {
      const judgement = await judge(tenant, batch.parsed);
      try {
        return await next(tenant, { ...batch, judgement, storedEarlier });
      } catch (error) {
        if (!(error instanceof StaleContracts)) throw error;
        const entryOf = new Map(judgement.candidates.map((c) => [c.input.event_id, c.index]));
        const stored = new Map(storedEarlier);
        for (const id of error.storedIds) {
          const index = entryOf.get(id);
          if (index !== undefined) stored.set(id, index);
        }
        storedEarlier = stored;
        if (round >= MAX_ROUNDS) throw new StaleContracts(error.contractIds);
        contexts.invalidate(tenant.companyId, error.contractIds);
      }
    }
  };
}
