import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dateRefusal, instantRefusal, isBillingMonth, utcDayMs } from "./time-range.js";

describe("instantRefusal", () => {
  const accepted: Array<[string, boolean]> = [
    ["2026-03-20T10:00:00Z", true],
    ["2026-03-20T10:00:00.123456Z", true],
    ["2026-03-20T10:00:00+15:59", true],
    ["2026-03-20T10:00:00-15:59", true],
    ["2026-03-20T10:00:00-00:00", true],
    ["2028-02-29T23:59:59.999999+01:00", true],
    ["1970-01-01T00:00:00Z", true],
    ["1970-01-01T15:59:00+15:59", true],
    ["9989-12-31T23:59:59.999999Z", true],
    ["9990-01-01T00:00:00Z", false],
    ["9999-12-31T23:59:59.999999Z", false],
  ];
  for (const [text, billable] of accepted) {
    it(`takes ${text}${billable ? " as the date of an event" : ""}`, () => {
      assert.equal(instantRefusal(text, billable), undefined);
    });
  }

  const refused: Array<{ text: string; billable?: boolean; why: RegExp }> = [
    { text: "2026-03-20T10:00:00+16:00", why: /offset must be at most ±15:59/ },
    { text: "2026-03-20T10:00:00+20:00", why: /offset must be at most ±15:59/ },
    { text: "2026-03-20T10:00:00-23:59", why: /offset must be at most ±15:59/ },
    { text: "2026-03-20T10:00:00+2000", why: /offset must be at most ±15:59/ },
    { text: "2026-06-30T23:59:60Z", why: /leap seconds/ },
    { text: "2026-03-20T10:00:00.1234567Z", why: /at most 6 fractional digits/ },
    { text: "2026-01-31T23:59:59.9999999Z", why: /at most 6 fractional digits/ },
    { text: "2026-02-29T10:00:00Z", why: /not a calendar date/ },
    { text: "2100-02-29T10:00:00Z", why: /not a calendar date/ },
    { text: "2026-13-01T10:00:00Z", why: /not a calendar date/ },
    { text: "2026-03-20T10:00Z", why: /ISO 8601 date and time with seconds/ },
    { text: "2026-03-20T10:00:00", why: /ISO 8601/ },
    { text: "2026-03-20 10:00:00Z", why: /ISO 8601/ },
    { text: "2026-03-20t10:00:00z", why: /ISO 8601/ },
    { text: "+002026-03-20T10:00:00Z", why: /ISO 8601/ },
    { text: "0001-01-01T00:00:00Z", why: /from 1970-01-01T00:00:00Z/ },
    { text: "1969-12-31T23:59:59.999999Z", why: /from 1970-01-01T00:00:00Z/ },
    { text: "1970-01-01T00:00:00+00:01", why: /from 1970-01-01T00:00:00Z/ },
    { text: "9999-12-31T23:59:59Z", billable: true, why: /billing month from 1970-01 to 9989-12/ },
    { text: "9999-12-20T10:00:00Z", billable: true, why: /billing month from 1970-01 to 9989-12/ },
    { text: "9989-12-31T23:59:59-00:01", billable: true, why: /billing month/ },
    { text: "9999-12-31T23:59:59-00:01", why: /to 9999-12-31T23:59:59.999999Z/ },
    { text: "10000-01-01T00:00:00Z", why: /ISO 8601/ },
  ];
  for (const c of refused) {
    it(`refuses ${JSON.stringify(c.text)}${c.billable ? " as the date of an event" : ""}`, () => {
      assert.match(instantRefusal(c.text, c.billable) ?? "(taken)", c.why);
    });
  }
});

describe("dateRefusal", () => {
  const cases: Array<[string, RegExp | undefined]> = [
    ["1970-01-01", undefined],
    ["9999-12-31", undefined],
    ["2000-02-29", undefined],
    ["1969-12-31", undefined],
    ["0001-01-01", undefined],
    ["0004-02-29", undefined],
    ["0000-01-01", /from 0001-01-01 to 9999-12-31/],
    ["0000-12-31", /from 0001-01-01 to 9999-12-31/],
    ["1900-02-29", /not a calendar date/],
    ["2026-04-31", /not a calendar date/],
    ["10000-01-01", /YYYY-MM-DD/],
    ["2026-1-01", /YYYY-MM-DD/],
  ];
  for (const [text, why] of cases) {
    it(`${why ? "refuses" : "takes"} ${text}`, () => {
      const refusal = dateRefusal(text);
      if (why) assert.match(refusal ?? "(taken)", why);
      else assert.equal(refusal, undefined);
    });
  }
});

describe("isBillingMonth", () => {
  for (const [month, billable] of [
    ["1970-01", true],
    ["1969-12", false],
    ["9989-12-31", true],
    ["9990-01", false],
    ["2026-03-15", true],
  ] as const) {
    it(`${month} is ${billable ? "" : "not "}a billing month`, () => assert.equal(isBillingMonth(month), billable));
  }
});

describe("utcDayMs", () => {
  it("is right for years 1 to 99, which Date.UTC maps to 1900-1999", () => {
    assert.equal(new Date(utcDayMs(1, 1, 1)).toISOString(), "0001-01-01T00:00:00.000Z");
    assert.equal(new Date(utcDayMs(99, 12, 31)).toISOString(), "0099-12-31T00:00:00.000Z");
  });
  it("rolls a 13th month into the next year", () => {
    assert.equal(new Date(utcDayMs(9989, 13, 1)).toISOString(), "9990-01-01T00:00:00.000Z");
  });
});
