import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { documentMoney, dueWords, formatDate, supportedLocale } from "./document-format.js";

describe("document-format: dates, terms and money for people", () => {
  const dates: Array<[string, string | undefined, string]> = [
    ["2026-12-01", undefined, "December 1, 2026"],
    ["2026-12-01", "en-US", "December 1, 2026"],
    ["2026-12-01", "en-GB", "1 December 2026"],
    ["2026-12-01", "de-DE", "1. Dezember 2026"],
    ["2026-02-28", "xx-nope", "February 28, 2026"],
    ["not a date", "en-US", "not a date"],
  ];
  for (const [day, locale, expected] of dates)
    it(`writes ${day} in ${locale ?? "the default"} as ${expected}`, () =>
      assert.equal(formatDate(day, locale), expected));

  const terms: Array<[string, string, string]> = [
    ["2026-12-01", "2026-12-31", "December 31, 2026 (Net 30)"],
    ["2026-03-01", "2026-03-31", "March 31, 2026 (Net 30)"],
    ["2026-04-03", "2026-04-17", "April 17, 2026 (Net 14)"],
    ["2026-04-03", "2026-04-03", "April 3, 2026 (due on receipt)"],
  ];
  for (const [issued, due, expected] of terms)
    it(`words a due date ${due} issued ${issued} as ${expected}`, () => assert.equal(dueWords(issued, due), expected));

  const locales: Array<[string, string | undefined]> = [
    ["en-US", "en-US"],
    ["en-us", "en-US"],
    ["de-DE", "de-DE"],
    ["fr", "fr"],
    ["en_US", undefined],
    ["xx-nope-not-a-tag", undefined],
    ["", undefined],
  ];
  for (const [tag, expected] of locales)
    it(`takes ${JSON.stringify(tag)} as ${expected ?? "no locale"}`, () =>
      assert.equal(supportedLocale(tag), expected));

  const money: Array<[string, string, string | undefined, string]> = [
    ["13490.70", "USD", undefined, "$13,490.70"],
    ["-75.00", "USD", "en-US", "-$75.00"],
    ["1234.5", "EUR", "de-DE", "1.234,50 €"],
    // Past a double's 15–17 digits: formatted from the text, every digit kept.
    ["12345678901234567.89", "USD", undefined, "$12,345,678,901,234,567.89"],
  ];
  for (const [amount, currency, locale, expected] of money)
    it(`writes ${amount} ${currency} (${locale ?? "default"}) as ${expected}`, () =>
      assert.equal(documentMoney(amount, currency, locale).replace(/\u00a0/g, " "), expected));
});
