import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  findDates,
  findMoney,
  findPercents,
  metricIdOf,
  percentToRate,
  readCount,
  termEndAfterMonths,
} from "./value-readers.js";

describe("reading amounts of money as written", () => {
  const cases: Array<[string, string, string | undefined]> = [
    ["$1,500.00", "1500.00", "USD"],
    ["£0.15 per payment", "0.15", "GBP"],
    ["€ 2,000", "2000", "EUR"],
    ["EUR 18.50", "18.50", "EUR"],
    ["250.00 CHF", "250.00", "CHF"],
    ["C$45.00", "45.00", "CAD"],
    ["A$ 12", "12", "AUD"],
    ["US$0.0025", "0.0025", "USD"],
    ["30¢", "0.30", undefined],
    ["5 cents", "0.05", undefined],
    ["2.5¢", "0.025", undefined],
    ["¥1,200", "1200", "JPY"],
  ];
  for (const [text, amount, currency] of cases) {
    it(`"${text}" is ${amount} ${currency ?? "(no currency)"}`, () => {
      const [money] = findMoney(text);
      assert.equal(money?.amount, amount);
      assert.equal(money?.currency, currency);
    });
  }

  it("does not read a percentage, a bare number or an unknown code as money", () => {
    assert.deepEqual(findMoney("2.35% of 1,000 units, ABC 12"), []);
  });
});

describe("reading percentages as exact fractions", () => {
  const cases: Array<[string, string]> = [
    ["2.35%", "0.0235"],
    ["2.9 %", "0.029"],
    ["15 percent", "0.15"],
    ["0.5%", "0.005"],
    ["100%", "1"],
    ["1.25 per cent", "0.0125"],
  ];
  for (const [text, rate] of cases) {
    it(`"${text}" is ${rate}`, () => assert.equal(findPercents(text)[0]?.rate, rate));
  }
  it("moves the point without rounding a long rate", () => assert.equal(percentToRate("0.123456789"), "0.00123456789"));
});

describe("reading dates in their common written forms", () => {
  const cases: Array<[string, "day_first" | "month_first", string, boolean]> = [
    ["January 5, 2026", "month_first", "2026-01-05", false],
    ["Jan. 5, 2026", "day_first", "2026-01-05", false],
    ["5 January 2026", "month_first", "2026-01-05", false],
    ["5th January 2026", "month_first", "2026-01-05", false],
    ["5 Jan 2026", "month_first", "2026-01-05", false],
    ["1st day of February, 2026", "month_first", "2026-02-01", false],
    ["2026-01-05", "day_first", "2026-01-05", false],
    ["05/01/2026", "day_first", "2026-01-05", true],
    ["05/01/2026", "month_first", "2026-05-01", true],
    ["25/01/2026", "month_first", "2026-01-25", false],
    ["01/25/2026", "day_first", "2026-01-25", false],
    ["05.01.2026", "day_first", "2026-01-05", true],
    ["03/03/2026", "month_first", "2026-03-03", false],
  ];
  for (const [text, order, date, ambiguous] of cases) {
    it(`"${text}" (${order}) is ${date}${ambiguous ? ", ambiguous" : ""}`, () => {
      const [found] = findDates(text, order);
      assert.equal(found?.date, date);
      assert.equal(found?.ambiguous, ambiguous);
    });
  }
  it("refuses a day the calendar does not have", () => {
    assert.deepEqual(findDates("February 30, 2026 and 31/04/2026", "day_first"), []);
  });
});

describe("counts, terms and metric ids", () => {
  it("reads a count written in words, digits or both", () => {
    assert.equal(readCount("fifteen (15)"), 15);
    assert.equal(readCount("thirty"), 30);
    assert.equal(readCount("forty-five"), 45);
    assert.equal(readCount("45"), 45);
    assert.equal(readCount("twelve (12)"), 12);
    assert.equal(readCount("many"), undefined);
  });
  it("ends a term of months the day before its anniversary", () => {
    assert.equal(termEndAfterMonths("2026-01-05", 12), "2027-01-04");
    assert.equal(termEndAfterMonths("2026-03-01", 1), "2026-03-31");
    assert.equal(termEndAfterMonths("2026-01-31", 1), "2026-02-27");
  });
  it("makes a metric id of a row's name", () => {
    assert.equal(metricIdOf("ACH debit origination"), "ach_debit_origination");
    assert.equal(metricIdOf("Card volume (domestic)"), "card_volume_domestic");
    assert.equal(metricIdOf("Überweisung – SEPA"), "uberweisung_sepa");
  });
});
