import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PricingRule } from "../../contracts/pricing-rule.js";
import type { RatingContextRow } from "../../contracts/rating-context-cache.js";
import { Big } from "../../kernel/money.js";
import type { UsageEventInput } from "../usage-schemas.js";
import { judgeBatch, selectRule } from "./judge.js";
import type { Parsed } from "./parse.js";
import { ratable, rule } from "../../../../test/fixtures/pricing-rules.js";

/** The judge's clock: events are from March 2026, so this is April 2026 (the month after is the future). */
const NOW = new Date("2026-04-10T12:00:00Z");

/** A contract with one program version (`rules`) in force from its start, unless `programs` are given. */
const contract = ({
  rules = [rule({ id: "r1", amount: "2" })],
  ...fields
}: Partial<RatingContextRow> & { rules?: PricingRule[] } = {}): RatingContextRow => ({
  id: "k1",
  status: "active",
  start_date: "2026-01-01",
  end_date: null,
  currency: "USD",
  current_version: 1,
  programs: [{ from: "2026-01-01", version: 1, effective_date: "2026-01-01", rules }],
  has_credits: false,
  payment_terms_days: 30,
  ...fields,
});

const entry = (index: number, fields: Partial<UsageEventInput> = {}): Parsed => ({
  index,
  input: {
    external_contract_id: "k1",
    event_id: `e${index}`,
    metric: "m",
    quantity: new Big(1),
    timestamp: "2026-03-15T10:00:00Z",
    ...fields,
  },
});

/** Each entry's verdict, in order: "event", "copy" or its refusal code. */
function verdicts(parsed: readonly Parsed[], contracts: RatingContextRow[]): string[] {
  const j = judgeBatch(parsed, new Map(contracts.map((c) => [c.id, c])), NOW);
  const events = new Set(j.candidates.map((c) => c.index));
  const copies = new Set(j.copies);
  return parsed.map((p) => {
    const refusal = j.refused.get(p.index);
    if (refusal?.kind === "rejected") return refusal.code;
    return events.has(p.index) ? "event" : copies.has(p.index) ? "copy" : "none";
  });
}

describe("judgeBatch", () => {
  const cases: Array<{ name: string; contracts: RatingContextRow[]; parsed: Parsed[]; expected: string[] }> = [
    { name: "a good event is an event", contracts: [contract()], parsed: [entry(0)], expected: ["event"] },
    {
      name: "no such contract",
      contracts: [contract()],
      parsed: [entry(0, { external_contract_id: "k9" })],
      expected: ["contract_not_found"],
    },
    {
      name: "a contract that is not active",
      contracts: [contract({ status: "terminated" })],
      parsed: [entry(0)],
      expected: ["contract_not_active"],
    },
    {
      name: "before the term starts (the event's UTC date)",
      contracts: [contract({ start_date: "2026-03-16" })],
      parsed: [entry(0, { timestamp: "2026-03-16T01:00:00+02:00" })],
      expected: ["outside_contract_term"],
    },
    {
      name: "the term's last day is inside it, the next day is not",
      contracts: [contract({ end_date: "2026-03-15" })],
      parsed: [entry(0, { timestamp: "2026-03-15T23:59:59Z" }), entry(1, { timestamp: "2026-03-16T00:00:00Z" })],
      expected: ["event", "outside_contract_term"],
    },
    {
      name: "a metric the contract lacks",
      contracts: [contract()],
      parsed: [entry(0, { metric: "other" })],
      expected: ["unknown_metric"],
    },
    {
      name: "a metric of the contract with no rule matching the event's scope",
      contracts: [contract({ rules: [rule({ id: "r1", amount: "2", counterparty: "acme" })] })],
      parsed: [entry(0, { counterparty: "other" }), entry(1, { counterparty: "acme" })],
      expected: ["unknown_metric", "event"],
    },
    {
      name: "later copies of an id are copies of the first good one",
      contracts: [contract()],
      parsed: [entry(0, { event_id: "x" }), entry(1, { event_id: "x" }), entry(2, { event_id: "x", metric: "bad" })],
      expected: ["event", "copy", "copy"],
    },
    {
      name: "copies before the first good one keep their own refusals",
      contracts: [contract()],
      parsed: [
        entry(0, { event_id: "x", metric: "bad" }),
        entry(1, { event_id: "x", external_contract_id: "k9" }),
        entry(2, { event_id: "x" }),
        entry(3, { event_id: "x" }),
      ],
      expected: ["unknown_metric", "contract_not_found", "event", "copy"],
    },
    {
      name: "a month after the current one (UTC) is the future; the current month's last instant is not",
      contracts: [contract({ start_date: "2026-01-01" })],
      parsed: [
        entry(0, { timestamp: "2026-05-01T00:00:00Z" }),
        entry(1, { timestamp: "2026-04-30T23:59:59Z" }),
        entry(2, { timestamp: "2026-04-30T23:30:00-01:00" }),
      ],
      expected: ["timestamp_in_future", "event", "timestamp_in_future"],
    },
    {
      name: "a future timestamp is refused before its contract is looked at (no contract is read again for it)",
      contracts: [],
      parsed: [entry(0, { timestamp: "2027-01-01T00:00:00Z", external_contract_id: "k9" })],
      expected: ["timestamp_in_future"],
    },
    {
      name: "an applied rate cannot price a graduated, volume or package rule's event; a fee can",
      contracts: [
        contract({
          rules: [
            rule({
              id: "r1",
              model: "graduated",
              amount: null,
              tiers: [{ up_to: null, unit_amount: "1", flat_amount: null }],
            }),
          ],
        }),
      ],
      parsed: [
        entry(0, { applied_rate: new Big("0.5") }),
        entry(1, { fee_amount: new Big("2"), applied_rate: new Big("0.5") }),
        entry(2),
      ],
      expected: ["invalid_event", "event", "event"],
    },
    {
      name: "an id never judged good: every copy keeps its refusal",
      contracts: [contract()],
      parsed: [entry(0, { event_id: "x", metric: "bad" }), entry(1, { event_id: "x", metric: "bad" })],
      expected: ["unknown_metric", "unknown_metric"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(verdicts(c.parsed, c.contracts), c.expected));
  }

  it("a candidate carries its rule (the most specific) and its UTC month", () => {
    const general = rule({ id: "general", amount: "2" });
    const scoped = rule({ id: "scoped", amount: "3", counterparty: "acme" });
    const j = judgeBatch(
      [entry(0, { counterparty: "acme", timestamp: "2026-03-31T23:30:00-01:00" })],
      new Map([["k1", contract({ rules: [general, scoped] })]]),
      NOW,
    );
    const [c] = j.candidates;
    assert.deepEqual([c?.rule.id, c?.periodStart, c?.periodEnd], ["scoped", "2026-04-01", "2026-04-30"]);
  });

  it("a future timestamp names no contract to read again", () => {
    const j = judgeBatch([entry(0, { timestamp: "2026-06-01T00:00:00Z" })], new Map([["k1", contract()]]), NOW);
    assert.deepEqual(j.refusingContracts, []);
  });

  it("names the contracts behind refusals once each (they are read again before a refusal stands)", () => {
    const j = judgeBatch(
      [
        entry(0, { external_contract_id: "k9" }),
        entry(1, { external_contract_id: "k9" }),
        entry(2),
        entry(3, { metric: "bad" }),
      ],
      new Map([["k1", contract()]]),
      NOW,
    );
    assert.deepEqual([...j.refusingContracts].sort(), ["k1", "k9"]);
    assert.deepEqual([...j.good.keys()], [2]);
  });
});

const event = ratable;

describe("selectRule", () => {
  const unscoped = rule({ id: "unscoped", amount: "1" });
  const acme = rule({ id: "acme", amount: "2", counterparty: "acme" });
  const acmeMaker = rule({ id: "acme-maker", amount: "3", counterparty: "acme", counterparty_side: "maker" });
  const other = rule({ id: "other-metric", metric: "x", amount: "9" });
  const rules = [unscoped, acme, acmeMaker, other];

  it("picks the unscoped rule for an event without counterparty", () => {
    assert.equal(selectRule(rules, event())?.id, "unscoped");
  });
  it("picks the counterparty rule over the unscoped one", () => {
    assert.equal(selectRule(rules, event({ counterparty: "acme" }))?.id, "acme");
  });
  it("picks the most specific rule whose scope fields all match", () => {
    assert.equal(selectRule(rules, event({ counterparty: "acme", counterpartySide: "maker" }))?.id, "acme-maker");
    assert.equal(selectRule(rules, event({ counterparty: "acme", counterpartySide: "taker" }))?.id, "acme");
  });
  it("falls back to the unscoped rule for another counterparty", () => {
    assert.equal(selectRule(rules, event({ counterparty: "globex" }))?.id, "unscoped");
  });
  it("finds nothing when only scoped rules exist and none matches", () => {
    assert.equal(selectRule([acme], event({ counterparty: "globex" })), undefined);
  });
  it("finds nothing for a metric without rules", () => {
    assert.equal(selectRule(rules, event({ metric: "nope" })), undefined);
  });
  it("prefers the rule added first among equally specific ones", () => {
    const second = rule({ id: "second", amount: "5" });
    assert.equal(selectRule([unscoped, second], event())?.id, "unscoped");
  });
});
