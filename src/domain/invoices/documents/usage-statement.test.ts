import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../../kernel/money.js";
import { billInvoice } from "../invoice-figures.js";
import { lineFromRecord } from "../invoice-lines.js";
import { spreadsheetText, STATEMENT_HEADER, statementLine, statementSummary } from "./usage-statement.js";

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
    assert.equal(
      STATEMENT_HEADER,
      "row_type,event_id,timestamp,metric,counterparty,counterparty_side,pair,quantity,fee_amount,applied_rate,rated_amount,rule_id,pricing_version,line_kind,description,unit_price,amount\r\n",
    );
    assert.equal(
      statementLine(row()),
      "event,evt-1,2026-03-20T10:00:00.000Z,domestic_wire,,,,2,,20,40.000000000001,rule_1,3,,,,\r\n",
    );
  });

  it("ends with a row per line of the invoice, then its tax and total, figures as the invoice gives them", () => {
    const billed = billInvoice(
      [
        lineFromRecord({
          key: "subscription|sub",
          kind: "subscription",
          rule_id: "sub",
          metric: null,
          description: "Platform, monthly",
          quantity: "1",
          rate: null,
          charge_total: "99",
          capped_total: "0",
        }),
        lineFromRecord({
          key: "usage|wire|20",
          kind: "usage",
          rule_id: "wire",
          metric: "domestic_wire",
          description: "=Domestic wire",
          quantity: "3",
          rate: "20",
          charge_total: "60.004",
          capped_total: "60.004",
        }),
      ],
      new Big("1000"),
      "USD",
    );
    assert.equal(
      statementSummary(billed, "USD"),
      [
        'line,,,,,,,1,,,,sub,,subscription,"Platform, monthly",99,99.00',
        "line,,,domestic_wire,,,,3,,,,wire,,usage,'=Domestic wire,20,60.00",
        'line,,,,,,,1,,,,,,minimum,"Monthly minimum: $1,000.00 committed, $159.00 counted",841,841.00',
        "tax,,,,,,,,,,,,,,Tax,,0.00",
        "total,,,,,,,,,,,,,,Total,,1000.00",
        "",
      ].join("\r\n"),
    );
    const columns = STATEMENT_HEADER.split(",").length;
    for (const row of statementSummary(billed, "USD").split("\r\n").slice(0, -1))
      assert.equal(row.replace(/"[^"]*"/g, "x").split(",").length, columns, row);
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
      assert.equal(
        statementLine(row({ counterparty: value }))
          .split(",domestic_wire,")[1]!
          .startsWith(`${written},`),
        true,
      );
    });
  }
});

describe("spreadsheetText: text a spreadsheet would run is written as text (OWASP, CSV Injection)", () => {
  const cases: Array<[string | null, string]> = [
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["+1", "'+1"],
    ["-1+2", "'-1+2"],
    ["\tcmd", "'\tcmd"],
    ["\rcmd", `"'\rcmd"`],
    ["=1,2", `"'=1,2"`],
    ["-", "'-"],
    // Only the first character counts: inside, these are plain text.
    ["a=b", "a=b"],
    ["fx-usd", "fx-usd"],
    ["user@example.com", "user@example.com"],
    // A space first is no formula start; it is quoted as RFC 4180 asks.
    [" =1", '" =1"'],
    ["'=1", "'=1"],
    ["", ""],
    [null, ""],
  ];
  for (const [value, written] of cases) {
    it(`writes ${JSON.stringify(value)} as ${JSON.stringify(written)}`, () =>
      assert.equal(spreadsheetText(value), written));
  }

  it("applies to every text column and to no number", () => {
    const line = statementLine(
      row({
        id: "=id",
        metric: "+m",
        counterparty: "-c",
        counterparty_side: "@s",
        pair: "\tp",
        rule_id: "=r",
        quantity: "2",
        applied_rate: "0.5",
      }),
    );
    assert.equal(line, "event,'=id,2026-03-20T10:00:00.000Z,'+m,'-c,'@s,'\tp,2,,0.5,40.000000000001,'=r,3,,,,\r\n");
  });
});
