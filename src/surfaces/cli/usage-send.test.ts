import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonNumber } from "../../platform/exact-json.js";
import { eventsOf, UsageFileError } from "./usage-send.js";

describe("the events of a usage file", () => {
  const a = { event_id: "a", quantity: 1 };
  const b = { event_id: "b", quantity: 2 };
  for (const [what, text, expected] of [
    ["JSON Lines, blank lines skipped", '{"event_id":"a","quantity":1}\n\n{"event_id":"b","quantity":2}\n', [a, b]],
    ["a JSON array", '[{"event_id":"a","quantity":1},\n {"event_id":"b","quantity":2}]', [a, b]],
    ["a submit body", '{"events":[{"event_id":"a","quantity":1}]}', [a]],
    ["one event on one line", '{"event_id":"a","quantity":1}', [a]],
    ["nothing", " \n", []],
  ] as const) {
    it(`reads ${what}`, () => assert.deepEqual(eventsOf(text), expected));
  }

  it("keeps a decimal's every digit", () => {
    const [event] = eventsOf('{"event_id":"x","quantity":123456789.000000000001}') as [{ quantity: JsonNumber }];
    assert.ok(event.quantity instanceof JsonNumber);
    assert.equal(event.quantity.text, "123456789.000000000001");
  });

  it("names the line that is not JSON", () => {
    assert.throws(
      () => eventsOf('{"event_id":"a"}\n{oops}\n'),
      (error: unknown) => error instanceof UsageFileError && /line 2/.test(error.message),
    );
  });
});
