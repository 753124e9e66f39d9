import type { RatingContextRow } from "../../contracts/rating-context-cache.js";
import type { PricingRule } from "../../contracts/pricing-rule.js";
import { periodOf, toDateString } from "../../kernel/billing-period.js";
import { selectRule, type RatableEvent } from "../rate-event.js";
import type { UsageEventInput } from "../usage-schemas.js";
import type { Outcome } from "./outcome.js";
import type { Parsed } from "./parse.js";

/** An event judged good: its contract, the rule that prices it, its service period. */
export interface Candidate {
  index: number;
  input: UsageEventInput;
  ratable: RatableEvent;
  contract: RatingContextRow;
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

/** One event against its contract (docs/decisions.md, "Rating" 1 to 3): a candidate, or its refusal. Pure. */
function judgeEvent(
  { index, input }: Parsed,
  contract: RatingContextRow | undefined,
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
  if (!contract) return refusal("contract_not_found", `No contract '${input.external_contract_id}'`);
  if (contract.status !== "active")
    return refusal("contract_not_active", `Contract '${contract.id}' is ${contract.status}, not active`);
  const instant = new Date(input.timestamp);
  const day = toDateString(instant);
  if (day < contract.start_date || (contract.end_date !== null && day > contract.end_date)) {
    return refusal(
      "outside_contract_term",
      `timestamp ${input.timestamp} is outside the contract term ${contract.start_date}..${contract.end_date ?? "(open)"}`,
    );
  }
  const rule = contract.metrics.includes(input.metric) ? selectRule(contract.rules, ratable) : undefined;
  if (!rule) {
    const known = contract.metrics.length > 0 ? contract.metrics.join(", ") : "none: add a usage rule first";
    return refusal(
      "unknown_metric",
      `Metric '${input.metric}' has no rule on contract '${contract.id}' for this event (metrics: ${known})`,
    );
  }
  const period = periodOf(instant);
  return {
    candidate: { index, input, ratable, contract, rule, periodStart: period.start, periodEnd: period.end },
  };
}

const refusal = (
  code: "contract_not_found" | "contract_not_active" | "outside_contract_term" | "unknown_metric",
  message: string,
) => ({
  refusal: { kind: "rejected" as const, code, message },
});

/**
 * Stage 2: judges every parsed entry against its contract, then settles copies of an id within the batch
 * (docs/decisions.md, "Rating" 8): the first copy judged good is the event; copies before it keep their own
 * refusals, copies after it are duplicates of it. Pure.
 */
export function judgeBatch(parsed: readonly Parsed[], contracts: ReadonlyMap<string, RatingContextRow>): Judgement {
  const candidates: Candidate[] = [];
  const refused = new Map<number, Outcome>();
  const copies: number[] = [];
  const good = new Map<number, Candidate>();
  const refusingContracts = new Set<string>();
  const chosen = new Set<string>();
  for (const entry of parsed) {
    const verdict = judgeEvent(entry, contracts.get(entry.input.external_contract_id));
    if ("candidate" in verdict) good.set(entry.index, verdict.candidate);
    else refusingContracts.add(entry.input.external_contract_id);
    if (chosen.has(entry.input.event_id)) copies.push(entry.index);
    else if ("refusal" in verdict) refused.set(entry.index, verdict.refusal);
    else {
      chosen.add(entry.input.event_id);
      candidates.push(verdict.candidate);
    }
  }
  return { candidates, refused, copies, good, refusingContracts: [...refusingContracts] };
}
