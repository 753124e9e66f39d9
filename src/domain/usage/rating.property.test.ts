/**
 * Property-based tests of pure rating (issue 8): priceCharge + addCharge + ruleTotals, as the locking path of
 * ingestion chains them, then billInvoice, which derives every figure the invoice shows from the stored sums,
 * against random rule sets and events, and against the BigInt reference of test/support/rating-reference.ts.
 * No database.
 *
 * FC_SEED=<n> replays a run; FC_RUNS=<n> runs every property n times (soak).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { PricingRule } from "../contracts/pricing-rule.js";
import { billInvoice, type BilledLine } from "../invoices/invoice-figures.js";
import { addCharge, lineIdentity, ruleTotals, type Charge, type Line } from "../invoices/invoice-lines.js";
import { Big, minorUnitExponent } from "../kernel/money.js";
import { selectRule } from "./ingest/judge.js";
import { priceCharge, takesAppliedRate, type RatableEvent } from "./pricers.js";
import {
  SCALE,
  apiRuleFields,
  expectedCapped,
  fcParams,
  fromUnits,
  hasCaps,
  pricedOnRunningQuantity,
  referenceInvoice,
  roundHalfEven,
  scenarioArb,
  shuffleBy,
  shuffleKeysArb,
  toUnits,
  type EventSpec,
  type RuleSpec,
  type Scenario,
} from "../../../test/support/rating-reference.js";

const METRICS = ["m_a", "m_b", "m_c"];
const COUNTERPARTIES = ["acme", "globex"];
const SIDES = ["maker", "taker"];
const MAX_EVENTS = 40;

/** The stored rule the API makes of a spec (apiRuleFields, the service suite's translation), without the API. */
const toPricingRule = (spec: RuleSpec, currency: string): PricingRule =>
  ({
    id: spec.key,
    name: spec.metric, // the API names a rule given no name after its metric
    amount: null,
    rate: null,
    frequency: null,
    monthly_cap: null,
    currency,
    counterparty: null,
    counterparty_side: null,
    pair: null,
    ...apiRuleFields(spec),
  }) as PricingRule;

const toRatable = (e: EventSpec): RatableEvent => ({
  metric: e.metric,
  quantity: new Big(e.quantity),
  feeAmount: e.fee === null ? null : new Big(e.fee),
  appliedRate: e.appliedRate === null ? null : new Big(e.appliedRate),
  counterparty: e.counterparty,
  counterpartySide: e.counterpartySide,
  pair: null,
});

/** Ingestion stores an id once; the pure properties rate each id's first copy only. */
const firstCopies = (events: readonly EventSpec[]): EventSpec[] => {
  const seen = new Set<string>();
  return events.filter((e) => !seen.has(e.id) && seen.add(e.id));
};

interface CodeEvent {
  id: string;
  ruleId: string | null;
  lineKey: string | null;
  charge: Big | null;
  cappedCharge: Big | null;
}

/** Rates events in order as the locking path does: cap room from the lines so far, then the charge onto its line. */
function rateWithCode(rules: readonly PricingRule[], events: readonly EventSpec[], currency: string) {
  const lines = new Map<string, Line>();
  const rated: CodeEvent[] = [];
  for (const e of events) {
    const ratable = toRatable(e);
    const rule = selectRule(rules, ratable);
    // The judge refuses an applied rate under a rule without a single rate (graduated, volume, package).
    if (!rule || (ratable.feeAmount === null && ratable.appliedRate !== null && !takesAppliedRate(rule))) {
      rated.push({ id: e.id, ruleId: null, lineKey: null, charge: null, cappedCharge: null });
      continue;
    }
    const sofar = ruleTotals(lines.values()).get(rule.id) ?? { capped: new Big(0), quantity: new Big(0) };
    const rating = priceCharge(ratable, rule, sofar);
    const charge: Charge = {
      kind: rating.kind,
      rule,
      metric: e.metric,
      quantity: ratable.quantity,
      unitPrice: rating.appliedRate,
      charge: rating.charge,
      cappedCharge: rating.cappedCharge,
      ...(rating.tiers ? { tiers: rating.tiers } : {}),
    };
    const { key } = lineIdentity(charge);
    lines.set(key, addCharge(lines.get(key), charge));
    rated.push({ id: e.id, ruleId: rule.id, lineKey: key, charge: rating.charge, cappedCharge: rating.cappedCharge });
  }
  return { lines, rated, invoice: billInvoice(lines.values(), null, currency) };
}

const units = (value: Big, scale = SCALE): bigint => toUnits(value.toFixed(), scale);

/**
 * A stored line's key in the reference's terms (`usage|<rule>|<unit price units>`, `usage|<rule>` for a rule priced
 * on its running quantity, `fee|<metric>`).
 */
const refKeyOf = (line: Line): string =>
  line.kind === "fee"
    ? `fee|${line.metric}`
    : line.rate === null
      ? `usage|${line.ruleId}`
      : `usage|${line.ruleId}|${units(line.rate)}`;

/**
 * A billed line's key in the same terms: a usage line is billed at its rate, which is part of its key, but for a
 * rule priced on its running quantity (`running`: their ids), whose one line has no rate.
 */
const refKeyOfBilled = (line: BilledLine, running: ReadonlySet<string>): string =>
  line.kind === "fee"
    ? `fee|${line.metric}`
    : running.has(line.ruleId ?? "")
      ? `usage|${line.ruleId}`
      : `usage|${line.ruleId}|${units(line.unitPrice)}`;

/** The billed lines by their key in the reference's terms; each key once. */
function billedByRefKey(lines: readonly BilledLine[], rules: readonly RuleSpec[]): Map<string, BilledLine> {
  const running = new Set(rules.filter(pricedOnRunningQuantity).map((r) => r.key));
  const byKey = new Map<string, BilledLine>();
  for (const line of lines) {
    const key = refKeyOfBilled(line, running);
    assert.ok(!byKey.has(key), `two billed lines for ${key}`);
    byKey.set(key, line);
  }
  return byKey;
}

const scenarioWithCurrency = (digits: number, caps: boolean) =>
  fc.constantFrom("USD", "USD", "JPY", "KWD").chain((currency) =>
    scenarioArb({
      metrics: METRICS,
      counterparties: COUNTERPARTIES,
      sides: SIDES,
      exponent: minorUnitExponent(currency),
      digits,
      maxRules: 6,
      maxEvents: MAX_EVENTS,
      caps,
    }).map((scenario) => ({ currency, scenario })),
  );

/** Properties (a), (b) and (c) for one scenario in its own order. */
function checkAgainstReference({ currency, scenario }: { currency: string; scenario: Scenario }): void {
  const exponent = minorUnitExponent(currency);
  const rules = scenario.rules.map((r) => toPricingRule(r, currency));
  const events = firstCopies(scenario.events);
  const code = rateWithCode(rules, events, currency);
  const ref = referenceInvoice(scenario.rules, events, exponent);

  // Each event: the same rule (or none), the same charge to the last digit.
  events.forEach((e, i) => {
    const mine = code.rated[i]!;
    const theirs = ref.outcomes[i]!;
    if (theirs.status === "rejected") {
      assert.equal(mine.ruleId, null, `event ${e.id}: the reference finds no rule, the code finds ${mine.ruleId}`);
      return;
    }
    assert.equal(theirs.status, "rated");
    if (theirs.status !== "rated") return;
    assert.equal(mine.ruleId, theirs.ruleKey, `event ${e.id}: rule`);
    assert.equal(
      units(mine.charge!),
      theirs.charge,
      `event ${e.id}: charge ${mine.charge!.toFixed()} vs reference ${fromUnits(theirs.charge)}`,
    );
  });

  // (a) Per rule, the capped charges never exceed the cap: on the lines and summed over the events.
  const usedOnLines = new Map([...ruleTotals(code.lines.values())].map(([id, t]) => [id, t.capped]));
  for (const rule of scenario.rules) {
    if (rule.cap === null) continue;
    const cap = toUnits(rule.cap);
    const onLines = usedOnLines.get(rule.key) ?? new Big(0);
    assert.ok(units(onLines) <= cap, `rule ${rule.key}: ${onLines.toFixed()} on its lines above the cap ${rule.cap}`);
    let summed = 0n;
    for (const r of code.rated) if (r.ruleId === rule.key && r.cappedCharge) summed += units(r.cappedCharge);
    assert.ok(summed <= cap, `rule ${rule.key}: events charged ${fromUnits(summed)} against a cap of ${rule.cap}`);
    assert.equal(units(onLines), summed, `rule ${rule.key}: the lines' capped totals are the events' capped charges`);
  }

  // (b) Each stored line's charge total is the exact sum of its charges; billed, its amount is the half-even
  // rounding of that sum, one billed line per stored line (no minimum here); the total is the sum of the amounts.
  const billed = billedByRefKey(code.invoice.lines, scenario.rules);
  assert.equal(code.invoice.lines.length, code.lines.size, "one billed line per stored line");
  const sums = new Map<string, bigint>();
  for (const r of code.rated) if (r.lineKey) sums.set(r.lineKey, (sums.get(r.lineKey) ?? 0n) + units(r.charge!));
  for (const line of code.lines.values()) {
    const exact = sums.get(line.key)!;
    assert.equal(units(line.chargeTotal), exact, `line ${line.key}: chargeTotal is the exact sum of its charges`);
    const shown = billed.get(refKeyOf(line));
    assert.ok(shown, `line ${line.key}: billed`);
    assert.equal(
      units(shown.amount, exponent),
      roundHalfEven(exact, SCALE, exponent),
      `line ${line.key}: amount ${shown.amount.toFixed()}`,
    );
  }
  // (b') A graduated or volume rule's line shows its tiers: their amounts (plus the cap adjustment, when a cap
  // cut the line) sum to its exact charge total, their quantities to its quantity. No other line has tiers.
  const tiered = new Set(
    scenario.rules.filter((r) => r.model === "graduated" || r.model === "volume").map((r) => r.key),
  );
  for (const line of code.lines.values()) {
    const shown = billed.get(refKeyOf(line))!;
    const hasTiers = line.kind === "usage" && tiered.has(line.ruleId ?? "");
    assert.equal(line.tiers !== null, hasTiers, `line ${line.key}: tiers exactly on graduated and volume lines`);
    assert.equal(shown.tiers !== undefined, hasTiers, `line ${line.key}: billed tiers`);
    if (!shown.tiers) {
      assert.equal(shown.capAdjustment, undefined, `line ${line.key}: no cap adjustment without tiers`);
      continue;
    }
    let amount = shown.capAdjustment ? units(shown.capAdjustment) : 0n;
    let quantity = 0n;
    for (const tier of shown.tiers) {
      amount += units(tier.amount);
      quantity += units(tier.quantity);
    }
    assert.equal(amount, units(line.chargeTotal), `line ${line.key}: tier amounts + cap adjustment = charge total`);
    assert.equal(quantity, units(line.quantity), `line ${line.key}: tier quantities = quantity`);
    if (shown.capAdjustment) assert.ok(shown.capAdjustment.lt(0), `line ${line.key}: a cap only lowers`);
  }

  let amounts = 0n;
  for (const line of code.invoice.lines) amounts += units(line.amount, exponent);
  assert.equal(units(code.invoice.subtotal, exponent), amounts, "subtotal is the sum of the line amounts");
  assert.equal(units(code.invoice.tax, exponent), 0n, "no tax");
  assert.equal(units(code.invoice.total, exponent), amounts, "total is the subtotal (no tax)");

  // (c) The reference gives the same lines, charge totals, billed figures and invoice total.
  const codeLines = new Map([...code.lines.values()].map((l) => [refKeyOf(l), l]));
  assert.deepEqual([...codeLines.keys()].sort(), [...ref.lines.keys()].sort(), "the same lines");
  assert.deepEqual([...billed.keys()].sort(), [...ref.lines.keys()].sort(), "the same billed lines");
  for (const [key, theirs] of ref.lines) {
    const mine = codeLines.get(key)!;
    const shown = billed.get(key)!;
    assert.equal(mine.description, theirs.description, `line ${key}: description`);
    assert.equal(shown.description, theirs.description, `line ${key}: billed description`);
    assert.equal(units(mine.quantity), theirs.quantity, `line ${key}: quantity`);
    assert.equal(units(shown.quantity), theirs.quantity, `line ${key}: billed quantity`);
    assert.equal(
      units(mine.chargeTotal),
      theirs.chargeTotal,
      `line ${key}: charge total ${mine.chargeTotal.toFixed()} vs ${fromUnits(theirs.chargeTotal)}`,
    );
    assert.equal(units(shown.amount, exponent), theirs.amountMinor, `line ${key}: amount`);
    assert.equal(
      units(shown.unitPrice),
      theirs.unitPrice,
      `line ${key}: unit price ${shown.unitPrice.toFixed()} vs ${fromUnits(theirs.unitPrice!)}`,
    );
  }
  assert.equal(
    units(code.invoice.total, exponent),
    ref.totalMinor,
    `invoice total ${code.invoice.total.toFixed()} vs ${fromUnits(ref.totalMinor, exponent)}`,
  );

  // With caps: what each capped rule charged is min(cap, what it would have charged uncapped).
  for (const [ruleKey, expected] of expectedCapped(scenario.rules, ref)) {
    assert.equal(
      units(usedOnLines.get(ruleKey) ?? new Big(0)),
      expected,
      `rule ${ruleKey}: capped total = min(cap, uncapped sum)`,
    );
  }
}

describe("rating properties (pure)", () => {
  it("caps hold, lines round half-even, and the BigInt reference agrees (prices and quantities of up to 6 decimals)", () => {
    fc.assert(fc.property(scenarioWithCurrency(6, true), checkAgainstReference), fcParams(300));
  });

  it("the same with 12-decimal prices and quantities, where each charge is rounded to 12 digits", () => {
    fc.assert(fc.property(scenarioWithCurrency(12, true), checkAgainstReference), fcParams(200));
  });

  it("without caps, the invoice does not depend on the order of the events", () => {
    fc.assert(
      fc.property(scenarioWithCurrency(6, false), shuffleKeysArb(MAX_EVENTS), ({ currency, scenario }, keys) => {
        assert.ok(!hasCaps(scenario.rules));
        const rules = scenario.rules.map((r) => toPricingRule(r, currency));
        const events = firstCopies(scenario.events);
        const inOrder = rateWithCode(rules, events, currency);
        const shuffled = rateWithCode(rules, shuffleBy(events, keys), currency);
        assert.equal(shuffled.invoice.total.toFixed(), inOrder.invoice.total.toFixed(), "total");
        const stored = (lines: Map<string, Line>) =>
          [...lines.values()]
            .map((l) =>
              [l.key, l.description, l.quantity.toFixed(), l.chargeTotal.toFixed(), l.rate?.toFixed() ?? "-"].join(" "),
            )
            .sort();
        assert.deepEqual(stored(shuffled.lines), stored(inOrder.lines), "stored lines");
        // The billed lines come in presentation order, so they are compared as billInvoice gives them. (A fee
        // line's rule is that of the last fee added to it, which the order does decide: fees are billed per metric.)
        const shown = (lines: readonly BilledLine[]) =>
          lines.map((l) =>
            [
              l.kind,
              l.kind === "fee" ? "-" : l.ruleId,
              l.metric,
              l.description,
              l.quantity.toFixed(),
              l.amount.toFixed(),
              l.unitPrice.toFixed(),
            ].join(" "),
          );
        assert.deepEqual(shown(shuffled.invoice.lines), shown(inOrder.invoice.lines), "billed lines");
      }),
      fcParams(300),
    );
  });

  it("with caps, the order decides who gets the remainder but not what a capped rule charges in all", () => {
    fc.assert(
      fc.property(scenarioWithCurrency(6, true), shuffleKeysArb(MAX_EVENTS), ({ currency, scenario }, keys) => {
        const rules = scenario.rules.map((r) => toPricingRule(r, currency));
        const events = firstCopies(scenario.events);
        const ref = referenceInvoice(scenario.rules, events, minorUnitExponent(currency));
        const expected = expectedCapped(scenario.rules, ref);
        for (const order of [events, shuffleBy(events, keys)]) {
          const used = new Map(
            [...ruleTotals(rateWithCode(rules, order, currency).lines.values())].map(([id, t]) => [id, t.capped]),
          );
          for (const [ruleKey, total] of expected) {
            assert.equal(
              units(used.get(ruleKey) ?? new Big(0)),
              total,
              `rule ${ruleKey}: min(cap, uncapped sum) in any order`,
            );
          }
        }
      }),
      fcParams(300),
    );
  });
});
