import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../../kernel/money.js";
import { acceptWellFormed, parseUsageEvent } from "./parse.js";
import { usageEventInput } from "../usage-schemas.js";
import { JsonNumber } from "../../../platform/exact-json.js";

/** A parsed event in a comparable shape: decimals as strings, the keys that are present. */
function comparable(input: object | undefined): unknown {
  if (input === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(input)
      // A key present as undefined is no field (JSON has no undefined; the service reads fields with ??).
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v instanceof Big ? `Big(${v.toFixed()})` : v])
      .sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
}

/** The fast path must decide as the schema does, and give the same event. */
function assertSameAsSchema(raw: unknown, label: string): void {
  const schema = usageEventInput.safeParse(raw);
  const fast = acceptWellFormed(raw);
  assert.deepEqual(
    comparable(fast),
    schema.success ? comparable(schema.data) : undefined,
    `${label}: ${JSON.stringify(raw)}`,
  );
  const parsed = parseUsageEvent(raw);
  assert.equal(parsed.ok, schema.success, label);
}

const base = {
  external_contract_id: "acme-main",
  event_id: "evt-1",
  metric: "domestic_wire",
  quantity: 3,
  timestamp: "2026-11-22T10:00:00Z",
};

describe("parseUsageEvent", () => {
  const cases: Array<{ name: string; raw: unknown; accepted: boolean; message?: string }> = [
    { name: "a plain event", raw: base, accepted: true },
    {
      name: "every optional field",
      raw: {
        ...base,
        fee_amount: "1.25",
        applied_rate: 0.5,
        counterparty: " bank ",
        counterparty_side: "sender",
        pair: "EUR/USD",
      },
      accepted: true,
    },
    { name: "a decimal string quantity, trimmed", raw: { ...base, quantity: " 12.500 " }, accepted: true },
    { name: "quantity 0 and -0", raw: { ...base, quantity: -0 }, accepted: true },
    { name: "twelve fractional digits", raw: { ...base, quantity: "0.000000000001" }, accepted: true },
    { name: "just under 10^15", raw: { ...base, quantity: "999999999999999.999999999999" }, accepted: true },
    {
      name: "a time zone offset and fractional seconds",
      raw: { ...base, timestamp: "2028-02-29T23:59:59.123456+05:30" },
      accepted: true,
    },
    { name: "an id of 255 characters", raw: { ...base, event_id: "e".repeat(255) }, accepted: true },
    {
      name: "not an object",
      raw: "event",
      accepted: false,
      message: "Invalid input: expected object, received string",
    },
    { name: "null", raw: null, accepted: false },
    { name: "an array", raw: [base], accepted: false },
    { name: "an unknown field", raw: { ...base, quantiy: 1 }, accepted: false, message: "Unknown field: quantiy" },
    {
      name: "a missing quantity",
      raw: { ...base, quantity: undefined },
      accepted: false,
      message: "quantity is required",
    },
    { name: "a missing metric", raw: { ...base, metric: undefined }, accepted: false, message: "metric is required" },
    {
      name: "a negative quantity",
      raw: { ...base, quantity: -1 },
      accepted: false,
      message: "quantity must not be negative",
    },
    {
      name: "10^15",
      raw: { ...base, quantity: 1e15 },
      accepted: false,
      message: "quantity must be less than 10^15 (at most 15 digits before the decimal point)",
    },
    {
      name: "thirteen fractional digits",
      raw: { ...base, quantity: "0.0000000000001" },
      accepted: false,
      message: "quantity has more than 12 decimal places",
    },
    { name: "exponent notation in a string, as in a number", raw: { ...base, quantity: "1e3" }, accepted: true },
    {
      name: "a JSON number kept as text (16 digits)",
      raw: { ...base, quantity: new JsonNumber("99999999999999.99") },
      accepted: true,
    },
    {
      name: "a JSON number kept as text with 13 decimals",
      raw: { ...base, quantity: new JsonNumber("0.100000000000000000000000000001") },
      accepted: false,
      message: "quantity has more than 12 decimal places",
    },
    {
      name: "a quantity that is not a decimal",
      raw: { ...base, quantity: "1,5" },
      accepted: false,
      message: "quantity must be a decimal number such as 12.5 (a JSON number or a string)",
    },
    { name: "a decimal string of 41 characters", raw: { ...base, quantity: `${"0".repeat(39)}.1` }, accepted: false },
    { name: "a boolean quantity", raw: { ...base, quantity: true }, accepted: false },
    { name: "a null fee", raw: { ...base, fee_amount: null }, accepted: false },
    { name: "an empty event id", raw: { ...base, event_id: "" }, accepted: false },
    { name: "an id of 256 characters", raw: { ...base, event_id: "e".repeat(256) }, accepted: false },
    {
      name: "a control character in an id",
      raw: { ...base, external_contract_id: "a\tb" },
      accepted: false,
      message: "external_contract_id: must not contain control characters",
    },
    { name: "a metric of 101 characters", raw: { ...base, metric: "m".repeat(101) }, accepted: false },
    { name: "a timestamp without a time zone", raw: { ...base, timestamp: "2026-11-22T10:00:00" }, accepted: false },
    { name: "a timestamp without seconds", raw: { ...base, timestamp: "2026-11-22T10:00Z" }, accepted: false },
    { name: "February 29th of a common year", raw: { ...base, timestamp: "2026-02-29T10:00:00Z" }, accepted: false },
    { name: "hour 24", raw: { ...base, timestamp: "2026-11-22T24:00:00Z" }, accepted: false },
    { name: "a blank scope field", raw: { ...base, pair: "   " }, accepted: false },
    {
      name: "a scope field of 256 characters after trimming",
      raw: { ...base, counterparty: "c".repeat(256) },
      accepted: false,
    },
  ];
  for (const c of cases) {
    it(`${c.accepted ? "accepts" : "refuses"} ${c.name}, as the schema does`, () => {
      assertSameAsSchema(c.raw, c.name);
      const parsed = parseUsageEvent(c.raw);
      assert.equal(parsed.ok, c.accepted);
      if (c.message !== undefined) assert.equal(parsed.ok ? undefined : parsed.message, c.message);
    });
  }

  it("trims scope fields and reads decimals exactly as the schema", () => {
    const fast = acceptWellFormed({ ...base, quantity: "0.10", counterparty: "  bank  " })!;
    assert.equal(fast.quantity.toFixed(), "0.1");
    assert.equal(fast.counterparty, "bank");
  });

  it("decides as the schema on thousands of mutated events", () => {
    // A seeded generator (xorshift), so that a failure can be replayed.
    let state = 0x2545f491;
    const next = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 2 ** 32;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const values: unknown[] = [
      undefined,
      null,
      true,
      0,
      -0,
      1,
      -1,
      0.1,
      1e15,
      1e15 - 1,
      999999999999999.9,
      1e-12,
      1e-13,
      1e21,
      1.5e-7,
      2 ** 53 + 2,
      "",
      " ",
      "0",
      "-0",
      "00012",
      "1.",
      ".5",
      "1e3",
      " 7 ",
      "\t7\n",
      "0.000000000001",
      "0.0000000000001",
      "-1",
      "+1",
      "1,5",
      "9".repeat(40),
      "9".repeat(41),
      "abc",
      "a\u0000b",
      "a\u007fb",
      "a\u0080b",
      "é",
      "x".repeat(100),
      "x".repeat(101),
      "x".repeat(255),
      "x".repeat(256),
      ` ${"y".repeat(255)} `,
      "2026-11-22T10:00:00Z",
      "2026-11-22T10:00:00.5+01:00",
      "2026-11-22t10:00:00z",
      "2026-11-22T10:00:00+24:00",
      "2026-11-22T10:00:00-23:59",
      "2024-02-29T00:00:00Z",
      "2100-02-29T00:00:00Z",
      "2000-02-29T00:00:00Z",
      "0000-01-01T00:00:00Z",
      "2026-11-31T00:00:00Z",
      "2026-11-22 10:00:00Z",
      "2026-11-22T10:00:60Z",
      [],
      [1],
      {},
      { a: 1 },
    ];
    const fields = [
      "external_contract_id",
      "event_id",
      "metric",
      "quantity",
      "timestamp",
      "fee_amount",
      "applied_rate",
      "counterparty",
      "counterparty_side",
      "pair",
    ];
    let accepted = 0;
    for (let n = 0; n < 5000; n++) {
      const raw: Record<string, unknown> = { ...base };
      const changes = 1 + Math.floor(next() * 3);
      for (let c = 0; c < changes; c++) {
        const field = next() < 0.05 ? pick(["extra", "Quantity", "eventId"]) : pick(fields);
        const value = pick(values);
        if (value === undefined && next() < 0.5) delete raw[field];
        else raw[field] = value;
      }
      assertSameAsSchema(raw, `case ${n}`);
      if (usageEventInput.safeParse(raw).success) accepted += 1;
    }
    // Both sides of the decision were exercised.
    assert.ok(accepted > 200 && accepted < 4800, `accepted ${accepted} of 5000`);
  });
});
