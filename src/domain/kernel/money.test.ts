import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Big,
  CHARGE_DP,
  fractionDigits,
  minorUnitExponent,
  parseDecimal,
  roundCharge,
  roundToMinorUnit,
  SUPPORTED_CURRENCIES,
  toDecimalString,
  readDecimal,
  toJsonDecimal,
  toMoneyString,
} from "./money.js";
import { isExactDouble, JsonNumber, stringifyJson } from "../../platform/exact-json.js";
import { DECIMAL_CASES } from "../../../test/fixtures/decimal-cases.js";

describe("minorUnitExponent", () => {
  const cases: Array<{ currency: string; exponent: number }> = [
    { currency: "USD", exponent: 2 },
    { currency: "EUR", exponent: 2 },
    { currency: "JPY", exponent: 0 },
    { currency: "KRW", exponent: 0 },
    { currency: "KWD", exponent: 3 },
    { currency: "BHD", exponent: 3 },
    { currency: "CLF", exponent: 4 },
  ];
  for (const c of cases) {
    it(`gives ${c.currency} ${c.exponent} minor-unit digits`, () => {
      assert.equal(minorUnitExponent(c.currency), c.exponent);
    });
  }

  it("accepts every currency with an exponent exception as a supported currency", () => {
    for (const code of ["JPY", "KWD", "CLF", "USD", "EUR"]) assert.ok(SUPPORTED_CURRENCIES.has(code), code);
  });
});

describe("roundToMinorUnit", () => {
  const cases: Array<{ name: string; amount: string; currency: string; rounded: string }> = [
    { name: "rounds a half cent down to the even cent", amount: "0.125", currency: "USD", rounded: "0.12" },
    { name: "rounds a half cent up to the even cent", amount: "0.135", currency: "USD", rounded: "0.14" },
    { name: "rounds 0.145 down to the even cent 0.14", amount: "0.145", currency: "USD", rounded: "0.14" },
    { name: "rounds 0.015 up to the even cent 0.02", amount: "0.015", currency: "USD", rounded: "0.02" },
    { name: "rounds 0.005 down to zero, the even cent", amount: "0.005", currency: "USD", rounded: "0" },
    { name: "rounds anything above the half up", amount: "0.1250000000001", currency: "USD", rounded: "0.13" },
    { name: "rounds anything below the half down", amount: "0.1349999999999", currency: "USD", rounded: "0.13" },
    { name: "leaves an amount already in cents as it is", amount: "1234.56", currency: "USD", rounded: "1234.56" },
    {
      name: "rounds a negative half cent towards the even cent, like a positive one",
      amount: "-0.125",
      currency: "USD",
      rounded: "-0.12",
    },
    { name: "rounds a negative 0.135 to -0.14", amount: "-0.135", currency: "USD", rounded: "-0.14" },
    { name: "rounds a half yen down to the even yen 2", amount: "2.5", currency: "JPY", rounded: "2" },
    { name: "rounds a half yen up to the even yen 4", amount: "3.5", currency: "JPY", rounded: "4" },
    { name: "rounds half a yen to zero", amount: "0.5", currency: "JPY", rounded: "0" },
    { name: "rounds a negative half yen to the even yen", amount: "-2.5", currency: "JPY", rounded: "-2" },
    { name: "rounds dinars to three digits, half to even downwards", amount: "1.0005", currency: "KWD", rounded: "1" },
    {
      name: "rounds dinars to three digits, half to even upwards",
      amount: "1.0015",
      currency: "KWD",
      rounded: "1.002",
    },
    { name: "rounds dinars above the half up", amount: "1.00051", currency: "KWD", rounded: "1.001" },
    {
      name: "keeps large amounts exact",
      amount: "123456789012345.675",
      currency: "USD",
      rounded: "123456789012345.68",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(roundToMinorUnit(new Big(c.amount), c.currency).toFixed(), c.rounded);
    });
  }

  it("does not change the amount it is given", () => {
    const amount = new Big("0.125");
    roundToMinorUnit(amount, "USD");
    assert.equal(amount.toFixed(), "0.125");
  });
});

describe("roundCharge", () => {
  const cases: Array<{ name: string; amount: string; rounded: string }> = [
    { name: "keeps twelve fractional digits", amount: "0.123456789012", rounded: "0.123456789012" },
    { name: "rounds a thirteenth-digit half down to the even digit", amount: "0.0000000000005", rounded: "0" },
    {
      name: "rounds a thirteenth-digit half up to the even digit",
      amount: "0.0000000000015",
      rounded: "0.000000000002",
    },
    {
      name: "rounds beyond the twelfth digit above the half up",
      amount: "1.0000000000005001",
      rounded: "1.000000000001",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(roundCharge(new Big(c.amount)).toFixed(), c.rounded);
      assert.ok(fractionDigits(roundCharge(new Big(c.amount))) <= CHARGE_DP);
    });
  }
});

describe("toMoneyString", () => {
  const cases: Array<{ name: string; amount: string; currency: string; text: string }> = [
    { name: "pads dollars to two digits", amount: "1000", currency: "USD", text: "1000.00" },
    { name: "pads one digit to two", amount: "12.5", currency: "USD", text: "12.50" },
    { name: "prints yen without a decimal point", amount: "15", currency: "JPY", text: "15" },
    { name: "pads dinars to three digits", amount: "1.25", currency: "KWD", text: "1.250" },
    { name: "rounds half-even to the minor unit, down", amount: "0.125", currency: "USD", text: "0.12" },
    { name: "rounds half-even to the minor unit, up", amount: "0.135", currency: "USD", text: "0.14" },
    { name: "rounds half a yen to the even yen", amount: "2.5", currency: "JPY", text: "2" },
    { name: "keeps the sign of a negative amount", amount: "-0.135", currency: "USD", text: "-0.14" },
    { name: "prints zero as zero", amount: "0", currency: "USD", text: "0.00" },
    {
      name: "never prints a negative zero for a negative amount that rounds to nothing",
      amount: "-0.001",
      currency: "USD",
      text: "0.00",
    },
    { name: "never prints a negative zero for a negative half yen", amount: "-0.5", currency: "JPY", text: "0" },
    { name: "never prints a negative zero for minus zero", amount: "-0", currency: "USD", text: "0.00" },
    {
      name: "never uses exponent notation for large amounts",
      amount: "1e21",
      currency: "USD",
      text: "1000000000000000000000.00",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(toMoneyString(new Big(c.amount), c.currency), c.text);
    });
  }
});

describe("toDecimalString", () => {
  const cases: Array<{ name: string; amount: string; text: string }> = [
    { name: "prints a small number without an exponent", amount: "1e-7", text: "0.0000001" },
    { name: "prints a large number without an exponent", amount: "1e21", text: "1000000000000000000000" },
    { name: "drops trailing zeros", amount: "-3.250", text: "-3.25" },
    { name: "prints zero as 0", amount: "0.000", text: "0" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(toDecimalString(new Big(c.amount)), c.text);
    });
  }

  it("adds decimals exactly where binary floats would not", () => {
    assert.equal(toDecimalString(new Big("0.1").plus("0.2")), "0.3");
  });
});

describe("parseDecimal", () => {
  const accepted: Array<{ text: string; value: string }> = [
    { text: "0", value: "0" },
    { text: "12.5", value: "12.5" },
    { text: "-3.25", value: "-3.25" },
    { text: "20.00", value: "20" },
    { text: "0.000000000001", value: "0.000000000001" },
    { text: "007", value: "7" },
  ];
  for (const c of accepted) {
    it(`reads "${c.text}" as ${c.value}`, () => {
      assert.equal(parseDecimal(c.text)?.toFixed(), c.value);
    });
  }

  const rejected: Array<{ name: string; text: string }> = [
    { name: "refuses the empty string", text: "" },
    { name: "refuses a lone space", text: " " },
    { name: "refuses a leading space", text: " 1" },
    { name: "refuses a trailing space", text: "1 " },
    { name: "refuses a space inside", text: "1 000" },
    { name: "refuses a lower-case exponent", text: "1e5" },
    { name: "refuses an upper-case exponent", text: "1E5" },
    { name: "refuses a negative exponent", text: "5e-3" },
    { name: "refuses an explicit plus sign", text: "+1" },
    { name: "refuses a trailing decimal point", text: "1." },
    { name: "refuses a leading decimal point", text: ".5" },
    { name: "refuses a decimal comma", text: "1,5" },
    { name: "refuses a double minus", text: "--1" },
    { name: "refuses words", text: "abc" },
    { name: "refuses Infinity", text: "Infinity" },
    { name: "refuses NaN", text: "NaN" },
    { name: "refuses hexadecimal", text: "0x10" },
    { name: "refuses full-width digits", text: "１２" },
  ];
  for (const c of rejected) {
    it(c.name, () => {
      assert.equal(parseDecimal(c.text), undefined);
    });
  }
});

describe("fractionDigits", () => {
  const cases: Array<{ value: string; digits: number }> = [
    { value: "0", digits: 0 },
    { value: "100", digits: 0 },
    { value: "1e21", digits: 0 },
    { value: "1.50", digits: 1 },
    { value: "0.000", digits: 0 },
    { value: "0.015", digits: 3 },
    { value: "-3.25", digits: 2 },
    { value: "1e-7", digits: 7 },
    { value: "123.000000000001", digits: 12 },
  ];
  for (const c of cases) {
    it(`counts ${c.digits} significant fractional digits in ${c.value}`, () => {
      assert.equal(fractionDigits(new Big(c.value)), c.digits);
    });
  }
});

describe("readDecimal: a client's decimal taken exactly or refused", () => {
  // What the body parser hands over: a plain number when a double holds the text exactly, else a JsonNumber.
  const asParsed = (text: string): number | JsonNumber => (isExactDouble(text) ? Number(text) : new JsonNumber(text));
  for (const c of DECIMAL_CASES) {
    for (const form of ["number", "string"] as const) {
      const value = form === "number" ? asParsed(c.text) : c.text;
      it(`${c.stored !== undefined ? "takes" : "refuses"} ${c.text} sent as a ${form}`, () => {
        const read = readDecimal(value, "quantity");
        if (c.stored !== undefined) {
          assert.ok(read instanceof Big, JSON.stringify(read));
          assert.equal(read.toFixed(), c.stored);
        } else {
          assert.ok(!(read instanceof Big), `took ${String(read)}`);
          assert.match(read.message, /^quantity /);
          assert.match(read.message, c.refused!);
        }
      });
    }
  }

  const refused: Array<{ value: unknown; why: RegExp }> = [
    { value: "12,5", why: /must be a decimal number/ },
    { value: "0x10", why: /must be a decimal number/ },
    { value: "NaN", why: /must be a decimal number/ },
    { value: "Infinity", why: /must be a decimal number/ },
    { value: "", why: /must be a decimal number/ },
    { value: ".5", why: /must be a decimal number/ },
    { value: "1.", why: /must be a decimal number/ },
    { value: true, why: /must be a decimal number/ },
    { value: null, why: /must be a decimal number/ },
    { value: { amount: 1 }, why: /must be a decimal number/ },
    { value: Number.POSITIVE_INFINITY, why: /must be a decimal number/ },
    { value: "1".repeat(41), why: /too many digits/ },
  ];
  for (const c of refused) {
    it(`refuses ${JSON.stringify(c.value) ?? String(c.value)} with a reason`, () => {
      const read = readDecimal(c.value, "fee_amount");
      assert.ok(!(read instanceof Big));
      assert.match(read.message, c.why);
    });
  }

  it("trims a string but not the digits in it", () => {
    const read = readDecimal("  12.50 ", "amount");
    assert.ok(read instanceof Big);
    assert.equal(read.toFixed(), "12.5");
  });

  it("allows fewer decimals where the caller says so (a cap in a currency's minor unit)", () => {
    const read = readDecimal("1.005", "monthly_cap", 2);
    assert.ok(!(read instanceof Big));
    assert.match(read.message, /more than 2 decimal places/);
  });
});

describe("toJsonDecimal", () => {
  const cases = ["13156.833333320176", "1000.00", "0.000000000001", "-3.25", "0", "99999999999999.99"];
  for (const text of cases) {
    it(`writes ${text} as a bare JSON number with exactly those digits`, () => {
      assert.equal(stringifyJson({ amount: toJsonDecimal(text) }), `{"amount":${text}}`);
    });
  }
  it("writes a Big without exponent notation", () => {
    assert.equal(
      stringifyJson([toJsonDecimal(new Big("1e-7")), toJsonDecimal(new Big("1e21"))]),
      "[0.0000001,1000000000000000000000]",
    );
  });
});
