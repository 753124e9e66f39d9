import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConflictError, ValidationError } from "../../kernel/errors.js";
import {
  dueDateOf,
  INVOICE_STATUSES,
  lastDuePeriodEnd,
  paidDateOf,
  transition,
  type InvoiceAction,
  type InvoiceStatus,
} from "./invoice-lifecycle.js";

describe("transition", () => {
  // Every action from every status: "issued" etc. applies, "=" answers unchanged, a code refuses.
  const table: Record<InvoiceAction, Record<InvoiceStatus, string>> = {
    finalize: { draft: "issued", issued: "=", paid: "=", void: "invoice_is_void" },
    pay: { draft: "invoice_is_draft", issued: "paid", paid: "=", void: "invoice_is_void" },
    void: { draft: "invoice_is_draft", issued: "void", paid: "invoice_is_paid", void: "=" },
  };
  for (const [action, row] of Object.entries(table) as [InvoiceAction, Record<InvoiceStatus, string>][]) {
    for (const status of INVOICE_STATUSES) {
      const expected = row[status];
      it(`${action} on a ${status} invoice: ${expected === "=" ? "unchanged" : expected}`, () => {
        const verdict = transition(status, action);
        if (expected === "=") assert.deepEqual(verdict, { kind: "unchanged" });
        else if (expected.startsWith("invoice_is_")) {
          assert.equal(verdict.kind, "refused");
          if (verdict.kind !== "refused") return;
          assert.ok(verdict.error instanceof ConflictError);
          assert.equal(verdict.error.code, expected);
          assert.match(verdict.error.message, new RegExp(`^The invoice is ${status}: it cannot be`));
        } else assert.deepEqual(verdict, { kind: "apply", to: expected });
      });
    }
  }
});

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
