import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { STATEMENT_HEADER, statementLine } from "./usage-statement.js";

const row = (fields: Partial<Parameters<typeof statementLine>[0]> = {}): Parameters<typeof statementLine>[0] => ({
  seq: "1",
  id: "evt-1",
  event_timestamp: new Date("2026-03-20T10:00:00.000Z"),
  metric: "domestic_wire",
  counterparty: null,
  counterparty_side: null,
  pair: null,
  quantity: "2",
  fee_amount: null,
  applied_rate: "20",
  rated_amount: "40.000000000001",
  rule_id: "rule_1",
  pricing_version: 3,
  ...fields,
});

describe("usage statement rows", () => {
  it("writes the header and one CRLF-ended row per event, decimals as stored and absent values empty", () => {
    assert.equal(STATEMENT_HEADER, "event_id,timestamp,metric,counterparty,counterparty_side,pair,quantity,fee_amount,applied_rate,rated_amount,rule_id,pricing_version\r\n");
    assert.equal(statementLine(row()), "evt-1,2026-03-20T10:00:00.000Z,domestic_wire,,,,2,,20,40.000000000001,rule_1,3\r\n");
  });

  const quoted: Array<[string, string]> = [
    ["Acme, Inc", '"Acme, Inc"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["cr\rhere", '"cr\rhere"'],
    [" leading", '" leading"'],
    ["trailing ", '"trailing "'],
    ["plain", "plain"],
    ["", ""],
  ];
  for (const [value, written] of quoted) {
    it(`writes ${JSON.stringify(value)} as ${JSON.stringify(written)} (RFC 4180)`, () => {
      assert.equal(statementLine(row({ counterparty: value })).split(",domestic_wire,")[1]!.startsWith(`${written},`), true);
    });
  }
});
