/**
 * The money an invoice shows is derived in one place, billInvoice (src/domain/invoices/invoice-figures.ts), from
 * the exact sums every writer stores. One table of cases drives it directly and against the BigInt reference
 * (test/support/rating-reference.ts), and then through the service on both engines, on the batch path and the
 * locking path and after projection: the figures a client reads are the function's (docs/decisions.md,
 * "Money" and "Invoices").
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { billInvoice } from "../../src/domain/invoices/invoice-figures.js";
import type { Line } from "../../src/domain/invoices/invoice-lines.js";
import { Big } from "../../src/domain/kernel/money.js";
import { JsonNumber, parseJsonExact } from "../../src/platform/exact-json.js";
import {
  INVOICES,
  USAGE,
  addRule,
  anotherContract,
  companyWithContract,
  getPricing,
  invoiceFor,
  newEventId,
  project,
  updateRule,
  type Contract,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { feeUnitPrice, fromUnits, roundHalfEven, toUnits } from "../support/rating-reference.js";

/** Half-even rounding of a charge total to a currency's minor unit: ties go to the even digit. */
const ROUNDING: Array<{ value: string; places: number; currency: string; expected: string }> = [
  { value: "0.125", places: 2, currency: "USD", expected: "0.12" },
  { value: "0.135", places: 2, currency: "USD", expected: "0.14" },
  { value: "0.1250000000001", places: 2, currency: "USD", expected: "0.13" },
  { value: "2.5", places: 0, currency: "JPY", expected: "2" },
  { value: "3.5", places: 0, currency: "JPY", expected: "4" },
  { value: "1.0005", places: 3, currency: "KWD", expected: "1" },
  { value: "1.0015", places: 3, currency: "KWD", expected: "1.002" },
  { value: "99999999999999.995", places: 2, currency: "USD", expected: "100000000000000" },
  { value: "99999999999999.985", places: 2, currency: "USD", expected: "99999999999999.98" },
  { value: "0.000000000001", places: 2, currency: "USD", expected: "0" },
  { value: "0", places: 2, currency: "USD", expected: "0" },
];

/** A fee line's unit price: its amount (in minor units) / quantity, rounded once half-even to 12 places. */
const FEE_UNIT_PRICES: Array<{ amount: string; quantity: string; expected: string }> = [
  { amount: "0.01", quantity: "6666666666.667", expected: "0.000000000001" }, // 1.49999…e-12: rounding twice gave 2e-12
  { amount: "100000", quantity: "0.000703", expected: "142247510.668563300142" },
  { amount: "1.00", quantity: "3", expected: "0.333333333333" },
  { amount: "2.00", quantity: "3", expected: "0.666666666667" },
  { amount: "0.05", quantity: "0.4", expected: "0.125" },
  { amount: "0.01", quantity: "20000000000", expected: "0" }, // 5e-13: a tie, to the even 0
  { amount: "0.03", quantity: "20000000000", expected: "0.000000000002" }, // 1.5e-12: a tie, to the even 2
  { amount: "99999999999999.99", quantity: "0.000000000001", expected: "99999999999999990000000000" },
  { amount: "12.34", quantity: "0", expected: "0" },
];

/** The "Monthly minimum" true-up: the rounded minimum less the rounded lines, when positive. */
const TRUE_UPS: Array<{
  minimum: string;
  charges: string[];
  currency: string;
  places: number;
  expected: string | null;
}> = [
  { minimum: "1000.00", charges: ["400.004", "400.004"], currency: "USD", places: 2, expected: "200" }, // lines 400.00 each
  { minimum: "1000.00", charges: ["500.005", "500.005"], currency: "USD", places: 2, expected: "0" }, // 500.00 + 500.00 = the minimum
  { minimum: "1000.00", charges: ["999.995"], currency: "USD", places: 2, expected: "0" }, // 1000.00 after half-even: none
  { minimum: "1000.005", charges: ["0.004"], currency: "USD", places: 2, expected: "1000" }, // the minimum rounds too
  { minimum: "250", charges: ["0.5", "1.5"], currency: "JPY", places: 0, expected: "248" }, // lines 0 and 2
  { minimum: "10.0005", charges: [], currency: "KWD", places: 3, expected: "10" },
  { minimum: "5.00", charges: ["7.00"], currency: "USD", places: 2, expected: "0" },
];

const feeLine = (key: string, chargeTotal: string, quantity: string): Line => ({
  key,
  kind: "fee",
  ruleId: "rule",
  metric: key,
  description: `${key} fees`,
  quantity: new Big(quantity),
  rate: null,
  chargeTotal: new Big(chargeTotal),
  cappedTotal: new Big(0),
  tiers: null,
});

describe("money derivations in billInvoice, case by case, against the BigInt reference", () => {
  for (const c of ROUNDING) {
    it(`rounds ${c.value} half-even to ${c.places} places (${c.currency}): ${c.expected}`, () => {
      const billed = billInvoice([feeLine("fx", c.value, "1")], null, c.currency);
      assert.equal(billed.lines[0]!.amount.toFixed(), c.expected, "code");
      assert.equal(billed.total.toFixed(), c.expected, "total");
      assert.equal(fromUnits(roundHalfEven(toUnits(c.value, 13), 13, c.places), c.places), c.expected, "reference");
    });
  }

  for (const c of FEE_UNIT_PRICES) {
    it(`prices a fee line of ${c.amount} over ${c.quantity} units at ${c.expected}`, () => {
      const billed = billInvoice([feeLine("fx", c.amount, c.quantity)], null, "USD");
      assert.equal(billed.lines[0]!.unitPrice.toFixed(), c.expected, "code");
      assert.equal(fromUnits(feeUnitPrice(toUnits(c.amount, 12), 12, toUnits(c.quantity))), c.expected, "reference");
    });
  }

  for (const c of TRUE_UPS) {
    it(`trues up a minimum of ${c.minimum} ${c.currency} over lines of ${c.charges.join(", ") || "nothing"}: ${c.expected ?? "none"}`, () => {
      const billed = billInvoice(
        c.charges.map((charge, i) => feeLine(`m${i}`, charge, "1")),
        new Big(c.minimum),
        c.currency,
      );
      const trueUp = billed.lines.find((l) => l.kind === "minimum");
      const expected = c.expected === "0" ? null : c.expected;
      assert.equal(trueUp?.amount.toFixed() ?? null, expected, "code");
      const lines = c.charges.reduce((sum, charge) => sum + roundHalfEven(toUnits(charge), 12, c.places), 0n);
      const shortfall = roundHalfEven(toUnits(c.minimum), 12, c.places) - lines;
      assert.equal(shortfall > 0n ? fromUnits(shortfall, c.places) : null, expected, "reference");
      const reaches = fromUnits(lines + (shortfall > 0n ? shortfall : 0n), c.places);
      assert.equal(billed.total.toFixed(), reaches, "the total is the lines plus the true-up");
    });
  }
});

/** The March invoice of a contract, read with its numbers exact. */
async function exactInvoice(t: TestApp, key: string, contract: Contract) {
  const { number } = await invoiceFor(t, key, contract.id);
  const res = await t.call({ method: "GET", url: `${INVOICES}/${number}`, key });
  expectStatus(res, 200);
  const text = (v: unknown) => (v instanceof JsonNumber ? v.text : new Big(v as number).toFixed());
  const body = parseJsonExact(res.body) as {
    total: unknown;
    line_items: Array<{ kind: string; metric: string | null; amount: unknown; unit_price: unknown }>;
  };
  return {
    total: text(body.total),
    lines: body.line_items.map((l) => ({
      kind: l.kind,
      metric: l.metric,
      amount: text(l.amount),
      unitPrice: text(l.unit_price),
    })),
  };
}

describeEachEngine(
  "money derivations through the service: the batch path, the locking path and projection agree",
  (t) => {
    // What an event can carry: USD contracts, fee amounts of at most 12 decimals.
    const usd = ROUNDING.filter((c) => c.currency === "USD" && (c.value.split(".")[1] ?? "").length <= 12);
    const fees = FEE_UNIT_PRICES.filter(
      (c) => !new Big(c.quantity).eq(0) && new Big(c.amount).eq(new Big(c.amount).round(2, Big.roundHalfEven)),
    );

    it("rounds each USD charge and prices each fee line as billInvoice does, on both paths, with the minimum trued up", async () => {
      const { key, contract: batch } = await companyWithContract(t());
      const locking = await anotherContract(t(), key);
      // A capped rule in every batch for this contract sends it down the locking path.
      await addRule(t(), key, locking.id, { type: "usage", metric: "card", rate: "0.1", monthly_cap: "5.00" });
      const events = (on: Contract) =>
        [
          ...usd.map((c, i) => ({ metric: `r${i}`, quantity: "1", fee_amount: c.value })),
          ...fees.map((c, i) => ({ metric: `f${i}`, quantity: c.quantity, fee_amount: c.amount })),
        ].map((e) => ({
          ...e,
          external_contract_id: on.id,
          event_id: newEventId(e.metric),
          timestamp: "2026-03-20T10:00:00.000Z",
        }));
      for (const on of [batch, locking]) {
        // Fees need a rule for their metric: one usage rule per metric.
        for (const e of events(on)) await addRule(t(), key, on.id, { type: "usage", metric: e.metric, rate: "1" });
      }
      for (const on of [batch, locking]) {
        const body =
          on === locking
            ? [
                ...events(on),
                {
                  external_contract_id: on.id,
                  event_id: newEventId("card"),
                  metric: "card",
                  quantity: "1",
                  timestamp: "2026-03-20T10:00:00.000Z",
                },
              ]
            : events(on);
        const res = await t().call({ method: "POST", url: USAGE, key, payload: { events: body } });
        expectStatus(res, 200);
        assert.ok(
          (res.json() as { events: { status: string }[] }).events.every((e) => e.status === "accepted"),
          res.body,
        );
      }
      for (const on of [batch, locking]) {
        const minimum = (await getPricing(t(), key, on.id)).rules.find((r) => r.type === "minimum")!;
        await updateRule(t(), key, on.id, minimum.id, { amount: "500000000000000.005" });
        await project(t(), key, on.id);
        const invoice = await exactInvoice(t(), key, on);
        const label = on === batch ? "batch path" : "locking path";
        usd.forEach((c, i) => {
          const line = invoice.lines.find((l) => l.metric === `r${i}`)!;
          assert.equal(line.amount, c.expected, `${label}: ${c.value} rounds to ${c.expected}`);
        });
        fees.forEach((c, i) => {
          const line = invoice.lines.find((l) => l.metric === `f${i}`)!;
          assert.equal(line.unitPrice, c.expected, `${label}: ${c.amount} over ${c.quantity}`);
        });
        const lines = invoice.lines.filter((l) => l.kind !== "minimum").reduce((s, l) => s.plus(l.amount), new Big(0));
        const trueUp = invoice.lines.find((l) => l.kind === "minimum")!;
        assert.equal(
          trueUp.amount,
          new Big("500000000000000").minus(lines).toFixed(),
          `${label}: the true-up fills the rounded minimum`,
        );
        assert.equal(invoice.total, "500000000000000", `${label}: the total is the rounded minimum`);
      }
    });
  },
);
