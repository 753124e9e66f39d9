import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonNumber } from "../../platform/exact-json.js";
import { readTierLines, tierLines, type TierLine } from "./tier-lines.js";

describe("readTierLines", () => {
  const read: Array<{ name: string; text: string; tiers?: TierLine[] }> = [
    {
      name: "reads a tier a line, the numbers as typed",
      text: "1000 0.10\n10000 0.08 5.00\n- 0.05",
      tiers: [
        { up_to: "1000", unit_amount: "0.10" },
        { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
        { up_to: null, unit_amount: "0.05" },
      ],
    },
    {
      name: "takes a lone number for the unbounded tier's unit amount",
      text: "0.0000001",
      tiers: [{ up_to: null, unit_amount: "0.0000001" }],
    },
    {
      name: "reads an unbounded tier with a flat amount",
      text: "- 0.05 1",
      tiers: [{ up_to: null, unit_amount: "0.05", flat_amount: "1" }],
    },
    {
      name: "skips blank lines and extra spaces, and reads Windows line ends",
      text: "\r\n  100   .5  \r\n\r\n- 0.25\r\n",
      tiers: [
        { up_to: "100", unit_amount: ".5" },
        { up_to: null, unit_amount: "0.25" },
      ],
    },
    {
      name: "keeps every digit",
      text: "999999999999999.999999999999 0.000000000001",
      tiers: [{ up_to: "999999999999999.999999999999", unit_amount: "0.000000000001" }],
    },
    { name: "gives no tiers for no lines", text: " \n \n" },
  ];
  for (const c of read) {
    it(c.name, () => assert.deepEqual(readTierLines(c.text), c.tiers ? { tiers: c.tiers } : {}));
  }

  const malformed: Array<[string, number]> = [
    ["1,000 0.10", 1],
    ["1000 0.10\nabc 0.05", 2],
    ["1000 0.10 5.00 1", 1],
    ["1000 $0.10", 1],
    ["1000 -", 1],
    ["1000 0.10\n\n- 0.05 x", 3],
    ["-1 0.10", 1],
    ["1e3 0.10", 1],
    ["1000 0.10 -", 1],
  ];
  for (const [text, line] of malformed) {
    it(`refuses ${JSON.stringify(text)} at line ${line}`, () => {
      const { tiers, error } = readTierLines(text);
      assert.equal(tiers, undefined);
      assert.match(error ?? "", new RegExp(`^line ${line}, .*up_to unit_amount \\[flat_amount\\]`));
    });
  }
});

describe("tierLines", () => {
  it("writes the lines readTierLines reads back", () => {
    const tiers = [
      { up_to: new JsonNumber("1000"), unit_amount: "0.10", flat_amount: null },
      { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
      { up_to: null, unit_amount: "0.05", flat_amount: null },
    ];
    const lines = tierLines(tiers);
    assert.deepEqual(lines, ["1000 0.10", "10000 0.08 5.00", "- 0.05"]);
    assert.deepEqual(readTierLines(lines.join("\n")).tiers, [
      { up_to: "1000", unit_amount: "0.10" },
      { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
      { up_to: null, unit_amount: "0.05" },
    ]);
  });
});
