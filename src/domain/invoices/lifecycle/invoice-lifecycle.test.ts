import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ValidationError } from "../../kernel/errors.js";
import { dueDateOf, lastDuePeriodEnd, paidDateOf } from "./invoice-lifecycle.js";

describe("dates", () => {
  it("makes an invoice due its payment terms' days after it is issued, across a year's end", () => {
    assert.equal(dueDateOf("2026-04-06", 15), "2026-04-21");
    assert.equal(dueDateOf("2026-04-06", 0), "2026-04-06");
    assert.equal(dueDateOf("2026-12-20", 30), "2027-01-19");
  });

  it("takes the paid date given or today, never before the issue date nor after today", () => {
    assert.equal(paidDateOf(undefined, "2026-04-01", "2026-04-06"), "2026-04-06");
    assert.equal(paidDateOf("2026-04-01", "2026-04-01", "2026-04-06"), "2026-04-01");
    assert.equal(paidDateOf("2026-04-06", "2026-04-01", "2026-04-06"), "2026-04-06");
    assert.throws(
      () => paidDateOf("2026-03-31", "2026-04-01", "2026-04-06"),
      (e: Error) => e instanceof ValidationError && e.code === "paid_date_before_issue",
    );
    assert.throws(
      () => paidDateOf("2026-04-07", "2026-04-01", "2026-04-06"),
      (e: Error) => e instanceof ValidationError && e.code === "paid_date_in_future",
    );
  });

  // A month ending on day D is due at D+1 00:00 UTC plus the grace: the latest due month end for each instant.
  const due: Array<[string, number, string]> = [
    ["2026-04-04T00:00:00.000Z", 3 * 86_400_000, "2026-03-31"],
    ["2026-04-03T23:59:59.999Z", 3 * 86_400_000, "2026-03-30"],
    ["2026-04-01T00:00:00.000Z", 0, "2026-03-31"],
    ["2026-03-31T23:59:59.999Z", 0, "2026-03-30"],
    ["2026-04-01T11:59:59.999Z", 12 * 3_600_000, "2026-03-30"],
    ["2026-04-01T12:00:00.000Z", 12 * 3_600_000, "2026-03-31"],
    ["2027-01-03T00:00:00.000Z", 2 * 86_400_000, "2026-12-31"],
    ["2028-03-01T00:00:00.000Z", 0, "2028-02-29"],
  ];
  for (const [now, grace, expected] of due) {
    it(`at ${now} with ${grace / 3_600_000} h of grace, months ending on or before ${expected} are due`, () => {
      assert.equal(lastDuePeriodEnd(new Date(now), grace), expected);
    });
  }
});
