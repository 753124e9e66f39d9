/**
 * The money derivations that exist both in SQL (migrations/functions/, used by the ingest function) and in
 * TypeScript (money.ts, used by the locking path and projection), driven with one table of cases through
 * the database on both engines and through the code, against the BigInt reference: the copies may not
 * drift (docs/decisions.md, "Money" and "Invoices").
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { Big, divideToChargePrecision, roundToMinorUnit } from "../../src/domain/kernel/money.js";
import { describeEachEngine } from "../support/harness.js";
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

/** A fee line's unit price: amount (already in minor units) / quantity, rounded once half-even to 12 places. */
const FEE_UNIT_PRICES: Array<{ amount: string; quantity: string; expected: string }> = [
  { amount: "0.01", quantity: "6666666666.667", expected: "0.000000000001" }, // 1.49999…e-12: rounding twice gave 2e-12
  { amount: "100000", quantity: "0.000703", expected: "142247510.668563300142" },
  { amount: "1.00", quantity: "3", expected: "0.333333333333" },
  { amount: "2.00", quantity: "3", expected: "0.666666666667" },
  { amount: "0.05", quantity: "0.4", expected: "0.125" },
  { amount: "0.000000000005", quantity: "10", expected: "0" }, // 5e-13: a tie, to the even 0
  { amount: "0.000000000015", quantity: "10", expected: "0.000000000002" }, // 1.5e-12: a tie, to the even 2
  { amount: "99999999999999.99", quantity: "0.000000000001", expected: "99999999999999990000000000" },
  { amount: "12.34", quantity: "0", expected: "0" },
];

describeEachEngine("money derivations: SQL and code agree, case by case", (t) => {
  for (const c of ROUNDING) {
    it(`rounds ${c.value} half-even to ${c.places} places (${c.currency}): ${c.expected}`, async () => {
      const { rows } = await t().app.db.query<{ rounded: string }>("SELECT billing_round_half_even($1::numeric, $2)::text AS rounded", [c.value, c.places]);
      assert.ok(new Big(rows[0]!.rounded).eq(c.expected), `SQL: ${rows[0]!.rounded}`);
      assert.equal(roundToMinorUnit(new Big(c.value), c.currency).toFixed(), c.expected, "code");
      assert.equal(fromUnits(roundHalfEven(toUnits(c.value, 13), 13, c.places), c.places), c.expected, "reference");
    });
  }

  for (const c of FEE_UNIT_PRICES) {
    it(`prices a fee line of ${c.amount} over ${c.quantity} units at ${c.expected}`, async () => {
      const { rows } = await t().app.db.query<{ price: string }>("SELECT billing_fee_unit_price($1::numeric, $2::numeric)::text AS price", [c.amount, c.quantity]);
      assert.ok(new Big(rows[0]!.price).eq(c.expected), `SQL: ${rows[0]!.price}`);
      const quantity = new Big(c.quantity);
      assert.equal(quantity.eq(0) ? "0" : divideToChargePrecision(new Big(c.amount), quantity).toFixed(), c.expected, "code");
      assert.equal(fromUnits(feeUnitPrice(toUnits(c.amount, 12), 12, toUnits(c.quantity))), c.expected, "reference");
    });
  }
});
