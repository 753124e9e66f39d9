import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decimal, doneFlash, money, type Flash } from "./layout.js";

// The API gives amounts as JSON numbers or decimal strings; String() of a number writes 3e-7 and 1e+21.
const CASES: { value: number | string; money: string; decimal: string }[] = [
  { value: 3e-7, money: "$0.0000003", decimal: "0.0000003" },
  { value: 1e-7, money: "$0.0000001", decimal: "0.0000001" },
  { value: 1e21, money: "$1,000,000,000,000,000,000,000.00", decimal: "1,000,000,000,000,000,000,000" },
  { value: -1234.5, money: "-$1,234.50", decimal: "-1,234.5" },
  { value: "0.10", money: "$0.10", decimal: "0.1" },
  { value: 0, money: "$0.00", decimal: "0" },
  { value: 20, money: "$20.00", decimal: "20" },
  { value: "1000000.123456789012", money: "$1,000,000.123456789012", decimal: "1,000,000.123456789012" },
];

describe("money and decimal", () => {
  for (const c of CASES) {
    it(`formats ${typeof c.value === "string" ? `"${c.value}"` : String(c.value)} in plain notation, every digit kept`, () => {
      assert.equal(money(c.value, "USD"), c.money);
      assert.equal(decimal(c.value), c.decimal);
    });
  }

  it("shows a dash for a missing value and for an unknown currency, never a guessed one", () => {
    assert.equal(money(null, "USD"), "—");
    assert.equal(money(undefined, "USD"), "—");
    assert.equal(money(12.5, undefined), "12.50 —");
    assert.equal(decimal(null), "—");
  });
});

describe("doneFlash", () => {
  const table: Record<string, Flash> = { created: { kind: "ok", message: "Created." } };

  it("finds the table's own keys only, not what every object inherits", () => {
    assert.deepEqual(doneFlash(table, "created"), table.created);
    for (const key of ["constructor", "__proto__", "toString", "hasOwnProperty", "", undefined, ["created"]]) {
      assert.equal(doneFlash(table, key), undefined, String(key));
    }
  });
});
