import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../kernel/money.js";
import { groupByLine, type GroupableEvent } from "./line-deltas.js";

const event = (fields: Partial<GroupableEvent> & { q?: string; c?: string } = {}): GroupableEvent => {
  const { q = "1", c = "20", ...rest } = fields;
  return {
    contractId: "k1",
    pricingVersion: 1,
    programHead: 1,
    periodStart: "2026-11-01",
    periodEnd: "2026-11-30",
    lineKey: "usage|r1|20",
    kind: "usage",
    ruleId: "r1",
    metric: "wire",
    description: "wire usage",
    unitPrice: "20",
    quantityDecimal: new Big(q),
    chargeDecimal: new Big(c),
    ...rest,
  };
};

/** The grouping in a comparable shape: pairs, lines with their sums as strings, each event's line. */
function shape(events: GroupableEvent[]) {
  const g = groupByLine(events);
  return {
    pairs: g.pairs.map((p) => `${p.contractId}@${p.version} ${p.periodStart}..${p.periodEnd}`),
    lines: g.lines.map(
      (l) => `${l.pair} ${l.key} ${l.kind} ${l.ruleId} q=${l.quantity.toFixed()} c=${l.charge.toFixed()}`,
    ),
    eventLines: g.eventLines,
  };
}

describe("groupByLine", () => {
  const cases: Array<{
    name: string;
    events: GroupableEvent[];
    pairs: string[];
    lines: string[];
    eventLines: number[];
  }> = [
    { name: "no events, nothing to add", events: [], pairs: [], lines: [], eventLines: [] },
    {
      name: "one event is one pair and one line",
      events: [event({ q: "3", c: "60" })],
      pairs: ["k1@1 2026-11-01..2026-11-30"],
      lines: ["0 usage|r1|20 usage r1 q=3 c=60"],
      eventLines: [0],
    },
    {
      name: "events on one line add up exactly, decimals included",
      events: [
        event({ q: "0.1", c: "0.000000000001" }),
        event({ q: "0.2", c: "0.000000000002" }),
        event({ q: "1e3", c: "999999999999999.999999999999" }),
      ],
      pairs: ["k1@1 2026-11-01..2026-11-30"],
      lines: ["0 usage|r1|20 usage r1 q=1000.3 c=1000000000000000.000000000002"],
      eventLines: [0, 0, 0],
    },
    {
      name: "another line key is another line of the same draft",
      events: [event(), event({ lineKey: "usage|r1|7.5", unitPrice: "7.5", c: "7.5" }), event({ c: "20" })],
      pairs: ["k1@1 2026-11-01..2026-11-30"],
      lines: ["0 usage|r1|20 usage r1 q=2 c=40", "0 usage|r1|7.5 usage r1 q=1 c=7.5"],
      eventLines: [0, 1, 0],
    },
    {
      name: "the same line key on two contracts is two lines of two drafts",
      events: [event({ contractId: "k1" }), event({ contractId: "k2" }), event({ contractId: "k1" })],
      pairs: ["k1@1 2026-11-01..2026-11-30", "k2@1 2026-11-01..2026-11-30"],
      lines: ["0 usage|r1|20 usage r1 q=2 c=40", "1 usage|r1|20 usage r1 q=1 c=20"],
      eventLines: [0, 1, 0],
    },
    {
      name: "another month is another draft",
      events: [event(), event({ periodStart: "2026-12-01", periodEnd: "2026-12-31" })],
      pairs: ["k1@1 2026-11-01..2026-11-30", "k1@1 2026-12-01..2026-12-31"],
      lines: ["0 usage|r1|20 usage r1 q=1 c=20", "1 usage|r1|20 usage r1 q=1 c=20"],
      eventLines: [0, 1],
    },
    {
      name: "two program versions of one contract are never folded together",
      events: [event({ pricingVersion: 1 }), event({ pricingVersion: 2 })],
      pairs: ["k1@1 2026-11-01..2026-11-30", "k1@2 2026-11-01..2026-11-30"],
      lines: ["0 usage|r1|20 usage r1 q=1 c=20", "1 usage|r1|20 usage r1 q=1 c=20"],
      eventLines: [0, 1],
    },
    {
      name: "fees of one metric share a line whatever their rule; the first event's rule names it",
      events: [
        event({
          lineKey: "fee|card",
          kind: "fee",
          ruleId: "r2",
          metric: "card",
          description: "card fees",
          unitPrice: null,
          q: "2",
          c: "1.25",
        }),
        event({
          lineKey: "fee|card",
          kind: "fee",
          ruleId: "r1",
          metric: "card",
          description: "card fees",
          unitPrice: null,
          q: "1",
          c: "0.5",
        }),
      ],
      pairs: ["k1@1 2026-11-01..2026-11-30"],
      lines: ["0 fee|card fee r2 q=3 c=1.75"],
      eventLines: [0, 0],
    },
    {
      name: "a line key is taken whole: a key holding the separator does not collide",
      events: [event({ lineKey: "fee|a\nb", kind: "fee" }), event({ lineKey: "fee|a", kind: "fee" })],
      pairs: ["k1@1 2026-11-01..2026-11-30"],
      lines: ["0 fee|a\nb fee r1 q=1 c=20", "0 fee|a fee r1 q=1 c=20"],
      eventLines: [0, 1],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(shape(c.events), { pairs: c.pairs, lines: c.lines, eventLines: c.eventLines });
    });
  }

  it("refuses an event whose metric or unit price differs from its line's (the database derives them from the line)", () => {
    assert.throws(() => groupByLine([event(), event({ metric: "other" })]), /differs from the line/);
    assert.throws(() => groupByLine([event(), event({ unitPrice: "21" })]), /differs from the line/);
  });

  it("does not change the events' decimals", () => {
    const events = [event({ q: "2", c: "40" }), event({ q: "3", c: "60" })];
    groupByLine(events);
    assert.equal(events[0]!.quantityDecimal.toFixed(), "2");
    assert.equal(events[0]!.chargeDecimal.toFixed(), "40");
  });
});
