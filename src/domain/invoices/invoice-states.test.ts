import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../kernel/money.js";
import {
  decide,
  INVOICE_ACTIONS,
  INVOICE_STATUSES,
  type InvoiceAction,
  type InvoiceStatus,
  isOwed,
  paidBy,
  refusalError,
  requireMay,
  statusesThat,
} from "./invoice-states.js";

describe("what an invoice may do in each state", () => {
  // Every action from every status, written out by hand: a status it moves to applies, "ok" is allowed in the
  // status it has, "=" answers unchanged (it happened already), "no" is refused with 409 invoice_is_<status>.
  const expected: Record<InvoiceAction, Record<InvoiceStatus, string>> = {
    change: { draft: "ok", issued: "no", paid: "no", void: "no" },
    finalize: { draft: "issued", issued: "=", paid: "=", void: "no" },
    pay: { draft: "no", issued: "paid", paid: "=", void: "no" },
    void: { draft: "no", issued: "void", paid: "no", void: "=" },
    record_payment: { draft: "no", issued: "ok", paid: "no", void: "no" },
    credit: { draft: "no", issued: "ok", paid: "ok", void: "no" },
    send: { draft: "no", issued: "ok", paid: "ok", void: "no" },
    remind: { draft: "no", issued: "ok", paid: "no", void: "no" },
    link: { draft: "no", issued: "ok", paid: "ok", void: "ok" },
  };

  it("has a verdict written here for every action the table knows", () => {
    assert.deepEqual(Object.keys(expected).sort(), [...INVOICE_ACTIONS].sort());
  });

  for (const action of INVOICE_ACTIONS) {
    for (const status of INVOICE_STATUSES) {
      const want = expected[action][status];
      it(`${action} on a ${status} invoice: ${want}`, () => {
        const verdict = decide(status, action);
        if (want === "ok") assert.deepEqual(verdict, { kind: "allowed" });
        else if (want === "=") assert.deepEqual(verdict, { kind: "unchanged" });
        else if (want === "no") {
          assert.equal(verdict.kind, "refused");
          assert.throws(
            () => requireMay(status, action),
            (error: Error & { code?: string }) =>
              error.code === `invoice_is_${status}` &&
              error.message.startsWith(`The invoice is ${status}: it cannot be`),
          );
        } else assert.deepEqual(verdict, { kind: "apply", to: want });
      });
    }
  }

  it("gives SQL the statuses in which an action does something", () => {
    assert.deepEqual(statusesThat("remind"), ["issued"]);
    assert.deepEqual(statusesThat("finalize"), ["draft"]);
    assert.deepEqual(statusesThat("link"), ["issued", "paid", "void"]);
    assert.deepEqual(statusesThat("change"), ["draft"]);
  });

  it("says why in the refusal", () => {
    assert.match(refusalError("void", "send", "A void invoice stays void.").message, /cannot be sent\. A void invoice/);
  });
});

describe("paid when nothing is due", () => {
  it("pays an issued invoice that had something due and now has nothing", () => {
    assert.equal(paidBy("issued", new Big("10.00"), new Big("0")), true);
  });
  it("does not pay one with something left, one that had nothing due, or one not issued", () => {
    assert.equal(paidBy("issued", new Big("10.00"), new Big("0.01")), false);
    assert.equal(paidBy("issued", new Big("0"), new Big("0")), false);
    assert.equal(paidBy("paid", new Big("10.00"), new Big("0")), false);
    assert.equal(paidBy("draft", new Big("10.00"), new Big("0")), false);
  });
});

describe("owed", () => {
  it("is an issued or paid invoice, never a draft or a void one", () => {
    assert.deepEqual(
      INVOICE_STATUSES.filter((s) => isOwed(s)),
      ["issued", "paid"],
    );
  });
});
