import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isExactDouble, JsonNumber, parseJsonExact, stringifyJson, unmarkNumbers } from "./exact-json.js";

describe("isExactDouble", () => {
  const cases: Array<{ text: string; exact: boolean }> = [
    { text: "0", exact: true },
    { text: "-0", exact: true },
    { text: "0.1", exact: true },
    { text: "1.10", exact: true },
    { text: "20", exact: true },
    { text: "1e2", exact: true },
    { text: "1.5E-3", exact: true },
    { text: "123456789012345", exact: true }, // 15 digits
    { text: "999999999999999.9", exact: true }, // 16 digits that a double does print back
    { text: "0.30000000000000004", exact: true }, // 0.1 + 0.2: the shortest text of a double
    { text: "99999999999999.99", exact: false }, // 16: …98
    { text: "12345.123456789012", exact: false }, // 17: …011
    { text: "9999.999999999999", exact: false }, // …998
    { text: "0.100000000000000000000000000001", exact: false },
    { text: "9007199254740993", exact: false }, // 2^53 + 1
    { text: "9007199254740992", exact: true }, // 2^53
    { text: "1e308", exact: true },
    { text: "1e400", exact: false }, // Infinity
    { text: "1e-400", exact: false }, // 0
    { text: "5e-324", exact: true },
  ];
  for (const c of cases) {
    it(`${c.exact ? "keeps" : "does not keep"} ${c.text} as a double`, () => {
      assert.equal(isExactDouble(c.text), c.exact);
    });
  }
});

describe("parseJsonExact", () => {
  it("gives plain numbers where a double holds the text, and JsonNumbers where it does not", () => {
    const value = parseJsonExact(
      '{"a": 1.5, "b": 99999999999999.99, "c": [12345.123456789012, 3], "d": "99999999999999.99"}',
    ) as Record<string, unknown>;
    assert.equal(value.a, 1.5);
    assert.deepEqual(value.b, new JsonNumber("99999999999999.99"));
    assert.deepEqual(value.c, [new JsonNumber("12345.123456789012"), 3]);
    assert.equal(value.d, "99999999999999.99");
  });

  it("leaves digits inside strings alone, even after a colon, and escaped quotes do not end a string", () => {
    const text = '{"id": "a:12345678901234567890", "q": "say \\"x\\": 1.00000000000000000001", "n": 1e400}';
    const value = parseJsonExact(text) as Record<string, unknown>;
    assert.equal(value.id, "a:12345678901234567890");
    assert.equal(value.q, 'say "x": 1.00000000000000000001');
    assert.deepEqual(value.n, new JsonNumber("1e400"));
  });

  it("keeps a top-level number's text", () => {
    assert.deepEqual(parseJsonExact("0.1000000000000000000001"), new JsonNumber("0.1000000000000000000001"));
  });

  it("refuses what JSON.parse refuses, including a number where a key belongs", () => {
    for (const text of [
      '{"a": 01}',
      "{1.00000000000000000001: 2}",
      "[1.000000000000000000001 2]",
      '{"a": -}',
      '{"a": 1.}',
      "",
      "{",
    ]) {
      assert.throws(() => parseJsonExact(text), SyntaxError, text);
    }
  });

  it("uses the caller's parser, so its checks (prototype poisoning) still run on the slow path", () => {
    const strict = (text: string) => {
      if (text.includes('"__proto__"')) throw new SyntaxError("forbidden key");
      return JSON.parse(text) as unknown;
    };
    assert.throws(
      () => parseJsonExact('{"__proto__": {"x": 1}, "n": 1.00000000000000000001}', strict),
      /forbidden key/,
    );
  });

  it("a string a client sends cannot pass for a kept number", () => {
    const value = parseJsonExact('{"a": "\\u0000x:0", "b": 1.00000000000000000001}') as Record<string, unknown>;
    assert.equal(value.a, "\u0000x:0");
  });
});

describe("stringifyJson", () => {
  it("writes JsonNumbers as bare numbers with their own digits, and everything else as JSON.stringify does", () => {
    const value = {
      total: new JsonNumber("1000.00"),
      rate: new JsonNumber("0.000000000001"),
      name: "x",
      n: 2,
      list: [new JsonNumber("-3.5")],
    };
    assert.equal(stringifyJson(value), '{"total":1000.00,"rate":0.000000000001,"name":"x","n":2,"list":[-3.5]}');
    assert.equal(stringifyJson({ a: new JsonNumber("1") }, 2), '{\n  "a": 1\n}');
  });

  it("round-trips: what it writes, parseJsonExact reads back digit for digit", () => {
    const texts = ["99999999999999.99", "12345.123456789012", "0.1", "13156.833333320176"];
    const written = stringifyJson({ values: texts.map((t) => new JsonNumber(t)) });
    const read = parseJsonExact(written) as { values: unknown[] };
    assert.deepEqual(read.values.map(String), texts);
  });

  it("unmarkNumbers finishes text that a plain JSON.stringify wrote (a library's own serializer)", () => {
    assert.equal(
      unmarkNumbers(JSON.stringify({ result: { amount: new JsonNumber("12.50") } })),
      '{"result":{"amount":12.50}}',
    );
  });

  it("refuses to make a JsonNumber of text that is not a JSON number", () => {
    for (const text of ["NaN", "1,5", "", "0x1", "1.", ".5", "1e", "--1"])
      assert.throws(() => new JsonNumber(text), TypeError, text);
  });
});
