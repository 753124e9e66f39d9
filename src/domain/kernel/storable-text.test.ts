import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  mayHoldUnstorableText,
  NUL_MESSAGE,
  SURROGATE_MESSAGE,
  unstorableReason,
  unstorableText,
} from "./storable-text.js";

describe("storable text", () => {
  const reasons: [string, string, string | undefined][] = [
    ["plain text", "Acme", undefined],
    ["a paired surrogate (an emoji)", "\ud83d\ude00", undefined],
    ["bidi and zero-width marks", "\u202e\u200b\ufeff", undefined],
    ["U+FFFD itself", "\ufffd", undefined],
    ["a NUL", "a\u0000b", NUL_MESSAGE],
    ["a lone high surrogate", "a\ud800", SURROGATE_MESSAGE],
    ["a lone low surrogate", "\udc00a", SURROGATE_MESSAGE],
    ["halves in the wrong order", "\ude00\ud83d", SURROGATE_MESSAGE],
  ];
  for (const [what, text, reason] of reasons) {
    it(`${what}: ${reason ?? "storable"}`, () => assert.equal(unstorableReason(text), reason));
  }

  it("names every place, keys included, in document order", () => {
    assert.deepEqual(unstorableText({ a: "ok", b: ["x", "\ud800"], "c\u0000": 1, d: { e: "\u0000" } }), [
      { path: "b.1", message: SURROGATE_MESSAGE },
      { path: "c\u0000", message: NUL_MESSAGE },
      { path: "d.e", message: NUL_MESSAGE },
    ]);
    assert.deepEqual(unstorableText("\ud800"), [{ path: "", message: SURROGATE_MESSAGE }]);
    assert.deepEqual(unstorableText({ a: [1, true, null, "fine"] }), []);
  });

  it("walks values nested deeper than the call stack", () => {
    let value: unknown = "\u0000";
    for (let i = 0; i < 200_000; i++) value = [value];
    assert.equal(unstorableText(value).length, 1);
  });

  it("spots the escapes that may produce them in JSON text", () => {
    for (const text of ['"\\u0000"', '"\\ud800"', '"\\uDBFF"', '"\\udc00"', '"\\uDFFF"'])
      assert.ok(mayHoldUnstorableText(text), text);
    for (const text of ['"\\u00e9"', '"\\u202e"', '"a"']) assert.ok(!mayHoldUnstorableText(text), text);
  });
});
