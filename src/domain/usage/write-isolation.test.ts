import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { nothingRefused, refusesData, writeIsolating, type WrittenDuplicates } from "./write-isolation.js";

/** A database stand-in for the combinator alone: refuses, with `code`, any write holding a poisoned item. */
function writer(poisoned: ReadonlySet<string>, code = "22008") {
  const calls: string[][] = [];
  const stored: string[] = [];
  const write = async (part: readonly string[]): Promise<WrittenDuplicates> => {
    calls.push([...part]);
    const bad = part.find((id) => poisoned.has(id));
    if (bad) throw Object.assign(new Error(`value out of range: ${bad}`), { code });
    stored.push(...part);
    return nothingRefused();
  };
  return { calls, stored, write };
}

describe("writeIsolating", () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);

  it("writes a clean batch in one call", async () => {
    const w = writer(new Set());
    const report = await writeIsolating(ids(8), (id) => id, w.write);
    assert.equal(w.calls.length, 1);
    assert.equal(report.unstorable.size, 0);
  });

  const cases: Array<{ name: string; n: number; poisoned: string[] }> = [
    { name: "one refused item among eight", n: 8, poisoned: ["e5"] },
    { name: "the first item", n: 7, poisoned: ["e0"] },
    { name: "the last item", n: 100, poisoned: ["e99"] },
    { name: "two items in different halves", n: 10, poisoned: ["e1", "e8"] },
    { name: "every item", n: 3, poisoned: ["e0", "e1", "e2"] },
    { name: "a batch of one", n: 1, poisoned: ["e0"] },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} alone, stores the rest once each, in batch order`, async () => {
      const w = writer(new Set(c.poisoned));
      const parts: string[] = [];
      const report = await writeIsolating(
        ids(c.n),
        (id) => id,
        w.write,
        (stored) => parts.push(...stored),
      );
      assert.deepEqual([...report.unstorable.keys()].sort(), [...c.poisoned].sort());
      for (const why of report.unstorable.values())
        assert.match(why, /^The database cannot store this event: value out of range/);
      const expected = ids(c.n).filter((id) => !c.poisoned.includes(id));
      assert.deepEqual(w.stored, expected, "every other item stored exactly once, in order");
      assert.ok(w.calls.length <= 1 + 2 * c.poisoned.length * Math.ceil(Math.log2(c.n) + 1), `${w.calls.length} calls`);
    });
  }

  it("fails the whole on a failure that is not the data's, telling which parts were stored before it", async () => {
    const w = writer(new Set(["e6"]), "08006");
    await assert.rejects(
      writeIsolating(ids(8), (id) => id, w.write),
      /value out of range/,
    );
    assert.equal(w.calls.length, 1, "a lost connection is not bisected");
  });
});

describe("refusesData", () => {
  const cases: Array<[unknown, boolean]> = [
    [{ code: "22009" }, true],
    [{ code: "22008" }, true],
    [{ code: "22003" }, true],
    [{ code: "23505" }, false],
    [{ code: "40001" }, false],
    [{ code: "08006" }, false],
    [new Error("not a date"), false],
    [null, false],
  ];
  for (const [error, expected] of cases) {
    it(`${JSON.stringify(error)} is ${expected ? "" : "not "}the data's fault`, () =>
      assert.equal(refusesData(error), expected));
  }
});
