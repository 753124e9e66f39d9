import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addDays, isCalendarMonth, parseDate, periodOf, termEnd, toDateString } from "./billing-period.js";

describe("periodOf", () => {
  const cases: Array<{ name: string; instant: string; start: string; end: string }> = [
    {
      name: "holds an instant in the middle of a month",
      instant: "2026-03-15T12:00:00Z",
      start: "2026-03-01",
      end: "2026-03-31",
    },
    {
      name: "puts the first millisecond of a month in that month",
      instant: "2026-04-01T00:00:00.000Z",
      start: "2026-04-01",
      end: "2026-04-30",
    },
    {
      name: "puts the last millisecond of a month in that month",
      instant: "2026-04-30T23:59:59.999Z",
      start: "2026-04-01",
      end: "2026-04-30",
    },
    {
      name: "ends a 30-day month on the 30th",
      instant: "2026-06-10T00:00:00Z",
      start: "2026-06-01",
      end: "2026-06-30",
    },
    {
      name: "ends February of a common year on the 28th",
      instant: "2026-02-14T00:00:00Z",
      start: "2026-02-01",
      end: "2026-02-28",
    },
    {
      name: "ends February of a leap year on the 29th",
      instant: "2028-02-01T00:00:00Z",
      start: "2028-02-01",
      end: "2028-02-29",
    },
    { name: "holds the leap day itself", instant: "2028-02-29T23:59:59.999Z", start: "2028-02-01", end: "2028-02-29" },
    {
      name: "ends February 2100 on the 28th: a century is not a leap year",
      instant: "2100-02-10T00:00:00Z",
      start: "2100-02-01",
      end: "2100-02-28",
    },
    {
      name: "ends February 2000 on the 29th: every fourth century is a leap year",
      instant: "2000-02-10T00:00:00Z",
      start: "2000-02-01",
      end: "2000-02-29",
    },
    { name: "ends December on the 31st", instant: "2026-12-31T23:59:59.999Z", start: "2026-12-01", end: "2026-12-31" },
    { name: "starts January on the 1st", instant: "2027-01-01T00:00:00Z", start: "2027-01-01", end: "2027-01-31" },
    {
      name: "uses UTC, not the offset the instant was written with",
      instant: "2026-03-31T23:30:00-02:00",
      start: "2026-04-01",
      end: "2026-04-30",
    },
    {
      name: "uses UTC for an instant written ahead of UTC",
      instant: "2026-04-01T01:00:00+02:00",
      start: "2026-03-01",
      end: "2026-03-31",
    },
    {
      name: "keeps a year below 100 (Date.UTC would make it 19xx)",
      instant: "0001-01-01T00:00:00Z",
      start: "0001-01-01",
      end: "0001-01-31",
    },
    {
      name: "ends February of year 4 on the 29th",
      instant: "0004-02-03T00:00:00Z",
      start: "0004-02-01",
      end: "0004-02-29",
    },
    {
      name: "holds the last month of year 9999",
      instant: "9999-12-31T23:59:59.999Z",
      start: "9999-12-01",
      end: "9999-12-31",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(periodOf(new Date(c.instant)), { start: c.start, end: c.end });
    });
  }
});

describe("parseDate", () => {
  const valid: Array<{ text: string; iso: string }> = [
    { text: "2026-01-01", iso: "2026-01-01T00:00:00.000Z" },
    { text: "2026-12-31", iso: "2026-12-31T00:00:00.000Z" },
    { text: "2028-02-29", iso: "2028-02-29T00:00:00.000Z" },
    { text: "2000-02-29", iso: "2000-02-29T00:00:00.000Z" },
    { text: "0001-01-01", iso: "0001-01-01T00:00:00.000Z" },
    { text: "0099-12-31", iso: "0099-12-31T00:00:00.000Z" },
    { text: "0004-02-29", iso: "0004-02-29T00:00:00.000Z" },
    { text: "9999-12-31", iso: "9999-12-31T00:00:00.000Z" },
  ];
  for (const c of valid) {
    it(`reads ${c.text} as UTC midnight`, () => {
      assert.equal(parseDate(c.text)?.toISOString(), c.iso);
    });
  }

  const invalid: Array<{ name: string; text: string }> = [
    { name: "refuses February 30th", text: "2026-02-30" },
    { name: "refuses February 29th of a common year", text: "2026-02-29" },
    { name: "refuses February 29th of a century that is not a leap year", text: "2100-02-29" },
    { name: "refuses April 31st", text: "2026-04-31" },
    { name: "refuses month 13", text: "2026-13-01" },
    { name: "refuses month 0", text: "2026-00-10" },
    { name: "refuses day 0", text: "2026-01-00" },
    { name: "refuses day 32", text: "2026-01-32" },
    { name: "refuses an unpadded month", text: "2026-2-03" },
    { name: "refuses an unpadded day", text: "2026-02-3" },
    { name: "refuses a two-digit year", text: "26-02-03" },
    { name: "refuses a date with a time", text: "2026-02-03T00:00:00Z" },
    { name: "refuses slashes", text: "2026/02/03" },
    { name: "refuses surrounding spaces", text: " 2026-02-03 " },
    { name: "refuses the empty string", text: "" },
    { name: "refuses words", text: "today" },
  ];
  for (const c of invalid) {
    it(c.name, () => {
      assert.equal(parseDate(c.text), undefined);
    });
  }

  it("prints back the date it read", () => {
    for (const text of ["2026-01-01", "2028-02-29", "2099-12-31"]) assert.equal(toDateString(parseDate(text)!), text);
  });
});

describe("isCalendarMonth", () => {
  const cases: Array<{ name: string; start: string; end: string; expected: boolean }> = [
    { name: "accepts a whole 31-day month", start: "2026-01-01", end: "2026-01-31", expected: true },
    { name: "accepts a whole 30-day month", start: "2026-04-01", end: "2026-04-30", expected: true },
    {
      name: "accepts February of a common year ending on the 28th",
      start: "2026-02-01",
      end: "2026-02-28",
      expected: true,
    },
    {
      name: "accepts February of a leap year ending on the 29th",
      start: "2028-02-01",
      end: "2028-02-29",
      expected: true,
    },
    {
      name: "refuses February of a leap year ending on the 28th",
      start: "2028-02-01",
      end: "2028-02-28",
      expected: false,
    },
    { name: "refuses a month that stops a day short", start: "2026-01-01", end: "2026-01-30", expected: false },
    {
      name: "refuses a month-long span that does not start on the 1st",
      start: "2026-01-15",
      end: "2026-02-14",
      expected: false,
    },
    { name: "refuses two months", start: "2026-01-01", end: "2026-02-28", expected: false },
    { name: "refuses a reversed period", start: "2026-01-31", end: "2026-01-01", expected: false },
    { name: "refuses an impossible end date", start: "2026-02-01", end: "2026-02-30", expected: false },
    { name: "refuses an unpadded start date", start: "2026-1-01", end: "2026-01-31", expected: false },
    { name: "refuses text that is not a date", start: "january", end: "2026-01-31", expected: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(isCalendarMonth(c.start, c.end), c.expected);
    });
  }
});

describe("addDays", () => {
  const cases: Array<{ name: string; date: string; days: number; expected: string }> = [
    { name: "moves within a month", date: "2026-03-10", days: 5, expected: "2026-03-15" },
    { name: "crosses the year end", date: "2026-12-31", days: 1, expected: "2027-01-01" },
    { name: "crosses the year end backwards", date: "2027-01-01", days: -1, expected: "2026-12-31" },
    { name: "lands on a leap day", date: "2028-02-28", days: 1, expected: "2028-02-29" },
    { name: "skips the missing leap day of a common year", date: "2026-02-28", days: 1, expected: "2026-03-01" },
    { name: "adds zero days", date: "2026-05-05", days: 0, expected: "2026-05-05" },
    { name: "adds a whole year of days across a leap year", date: "2028-01-01", days: 366, expected: "2029-01-01" },
    { name: "is not disturbed by daylight-saving dates", date: "2026-03-28", days: 2, expected: "2026-03-30" },
    { name: "keeps years below 100", date: "0001-12-31", days: 1, expected: "0002-01-01" },
    {
      name: "stays in year 9999 from the last billing month's end, its issue day and the longest payment terms",
      date: "9989-12-31",
      days: 1 + 3650,
      expected: "9999-12-30",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(addDays(c.date, c.days), c.expected);
    });
  }

  it("throws on a date it cannot read", () => {
    assert.throws(() => addDays("2026-02-30", 1), /not a date/);
  });

  it("throws rather than write a date past year 9999 (inputs are kept in range before any arithmetic)", () => {
    assert.throws(() => addDays("9999-12-31", 1), /not a date: \+010000-01-01|not a date: 10000-01-01/);
  });
});

describe("termEnd", () => {
  const cases: Array<{ name: string; start: string; years: number; expected: string }> = [
    {
      name: "ends a one-year term starting on January 1st on December 31st",
      start: "2026-01-01",
      years: 1,
      expected: "2026-12-31",
    },
    {
      name: "ends a one-year term the day before its anniversary",
      start: "2026-07-15",
      years: 1,
      expected: "2027-07-14",
    },
    {
      name: "ends a term starting March 1st on the leap day before it",
      start: "2027-03-01",
      years: 1,
      expected: "2028-02-29",
    },
    {
      name: "ends a term starting on a leap day on February 28th of the next year",
      start: "2028-02-29",
      years: 1,
      expected: "2029-02-28",
    },
    { name: "ends a term of several years", start: "2026-03-01", years: 3, expected: "2029-02-28" },
    {
      name: "ends a term starting on the leap day after four years on the day before the next leap day",
      start: "2028-02-29",
      years: 4,
      expected: "2032-02-28",
    },
    { name: "keeps years below 100", start: "0050-03-01", years: 1, expected: "0051-02-28" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(termEnd(c.start, c.years), c.expected);
    });
  }

  it("throws on a date it cannot read", () => {
    assert.throws(() => termEnd("2026-13-01", 1), /not a date/);
  });
});
