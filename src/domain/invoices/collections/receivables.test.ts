import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { storedFilter } from "../list-invoices.js";
import { agingBucketOf, daysPastDue } from "./receivables.js";

describe("receivables aging", () => {
  it("counts whole UTC days from the due date, across months and years", () => {
    assert.equal(daysPastDue("2026-03-15", "2026-03-15"), 0);
    assert.equal(daysPastDue("2026-03-16", "2026-03-15"), -1);
    assert.equal(daysPastDue("2026-02-28", "2026-03-01"), 1);
    assert.equal(daysPastDue("2025-12-31", "2026-03-31"), 90);
    assert.equal(daysPastDue("2026-03-15", "2026-06-23"), 100);
    // Across a DST change in most zones: UTC days have no 23- or 25-hour days.
    assert.equal(daysPastDue("2026-03-28", "2026-03-30"), 2);
  });

  it("puts an invoice in its bucket at each edge", () => {
    const cases: [number, string][] = [
      [-400, "current"],
      [-1, "current"],
      [0, "current"],
      [1, "1_30"],
      [30, "1_30"],
      [31, "31_60"],
      [60, "31_60"],
      [61, "61_90"],
      [90, "61_90"],
      [91, "over_90"],
      [3650, "over_90"],
    ];
    for (const [days, bucket] of cases) assert.equal(agingBucketOf(days), bucket, `${days} days`);
  });
});

describe("invoice list status filter", () => {
  const today = "2026-03-15";
  it("reads open as issued, overdue as issued and due before today, a status as itself", () => {
    assert.deepEqual(storedFilter({ status: "open" }, today), { statuses: ["issued"] });
    assert.deepEqual(storedFilter({ status: "overdue", contractId: "c" }, today), {
      contractId: "c",
      statuses: ["issued"],
      dueBefore: today,
    });
    for (const status of ["draft", "issued", "paid", "void"] as const)
      assert.deepEqual(storedFilter({ status }, today), { statuses: [status] });
    assert.deepEqual(storedFilter({ from: "2026-01-01" }, today), { from: "2026-01-01" });
  });
});
