import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  agreementWords,
  KEY_TERM_LABELS,
  readAgreementDate,
  readAgreementTerm,
  readRuleType,
  RULE_COLUMNS,
  type AgreementPdfInput,
} from "./agreement-text.js";
import { RULE_TYPES } from "./pricing-rule.js";
import { agreementInput } from "../../../test/fixtures/agreement-input.js";

function input(startDate: string, endDate: string | null): AgreementPdfInput {
  return agreementInput({ contractId: "globex", startDate, endDate });
}

/** The Term key term as the agreement words it. */
function termWords(startDate: string, endDate: string | null): string {
  const term = agreementWords(input(startDate, endDate)).keyTerms.find(([label]) => label === KEY_TERM_LABELS.term);
  assert.ok(term !== undefined);
  return term[1];
}

describe("readAgreementDate", () => {
  const dates: Array<[string, string | undefined]> = [
    ["31 January 2025", "2025-01-31"],
    ["1 March 2026", "2026-03-01"],
    ["29 February 2024", "2024-02-29"],
    ["29 February 2000", "2000-02-29"],
    ["31 December 9999", "9999-12-31"],
    ["29 February 2025", undefined],
    ["29 February 1900", undefined],
    ["31 April 2026", undefined],
    ["0 May 2026", undefined],
    ["01 May 2026", undefined],
    ["32 May 2026", undefined],
    ["1 may 2026", undefined],
    ["1 Mai 2026", undefined],
    ["1 May 26", undefined],
    ["1  May 2026", undefined],
    ["2026-05-01", undefined],
    ["", undefined],
  ];
  for (const [words, date] of dates) {
    it(`reads ${JSON.stringify(words)} as ${date ?? "no date"}`, () => assert.equal(readAgreementDate(words), date));
  }

  it("reads back every day the agreement prints", () => {
    for (let day = Date.UTC(2023, 0, 1); day <= Date.UTC(2025, 0, 1); day += 86_400_000) {
      const date = new Date(day).toISOString().slice(0, 10);
      assert.deepEqual(readAgreementTerm(termWords(date, null)), { start_date: date, end_date: null });
    }
  });
});

describe("readAgreementTerm", () => {
  it("reads a term with an end and an open-ended one, wherever it wrapped", () => {
    assert.equal(termWords("2026-01-01", "2026-12-31"), "1 January 2026 – 31 December 2026");
    assert.deepEqual(readAgreementTerm("1 January 2026 – 31 December 2026"), {
      start_date: "2026-01-01",
      end_date: "2026-12-31",
    });
    assert.deepEqual(readAgreementTerm("30 September 2026 – 30 September\n2027"), {
      start_date: "2026-09-30",
      end_date: "2027-09-30",
    });
    assert.deepEqual(readAgreementTerm(termWords("2026-01-01", null)), { start_date: "2026-01-01", end_date: null });
  });

  it("reads no term from other words", () => {
    for (const words of [
      "1 January 2026",
      "1 January 2026 – ",
      "1 January 2026 - 31 December 2026",
      "1 January 2026 – open",
      "31 June 2026 – open-ended",
      "1 January 2026 – 2 January 2026 – 3 January 2026",
    ]) {
      assert.equal(readAgreementTerm(words), undefined, words);
    }
  });
});

describe("readRuleType", () => {
  it("reads back each rule type's cell in the pricing table", () => {
    const typeColumn = RULE_COLUMNS.find((column) => column.field === "type");
    assert.ok(typeColumn !== undefined);
    for (const type of RULE_TYPES) {
      const cell = typeColumn.cell({ id: "r", name: null, type, model: "flat" }, input("2026-01-01", null));
      assert.equal(readRuleType(cell), type);
    }
    assert.equal(readRuleType("One time"), "one_time");
  });

  it("reads no type from other words", () => {
    for (const words of ["one_time", "usage", "One-time", "Percentage", ""])
      assert.equal(readRuleType(words), undefined, words);
  });
});
