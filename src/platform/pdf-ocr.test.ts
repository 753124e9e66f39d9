import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { noisePage, proseAgreement, scanPdf } from "../../test/support/agreement-files.js";
import { ocrLoad, ocrPages } from "./pdf-ocr.js";

describe("OCR of pages without text", () => {
  it("reads a skewed, grainy scan's words where they stand on the page, each with a confidence", async () => {
    const scan = await scanPdf(await proseAgreement(), { dpi: 150, skewDegrees: -1.2, seed: 3 });
    const reading = await ocrPages(scan, [1], { queueKey: "a" });
    assert.equal(reading.kind, "read");
    if (reading.kind !== "read") return;
    assert.deepEqual(reading.failedPages, []);
    const text = reading.items.map((item) => item.text).join(" ");
    assert.match(text, /MSA-2026-0142/);
    assert.match(text, /Harbor Freight Logistics/);
    const title = reading.items.find((item) => item.text === "MASTER");
    // The title is centred near the top of an A4 page (595 × 842 points).
    assert.ok(title !== undefined && title.y > 700 && title.x > 100 && title.x < 300, JSON.stringify(title));
    for (const item of reading.items) assert.ok(item.confidence > 0 && item.confidence <= 1);
    // The page's slant is taken out: the words of the title's line stand on one baseline.
    const line = reading.items.filter((item) => Math.abs(item.y - title!.y) < 3).map((item) => item.text);
    assert.deepEqual(line.slice(0, 3), ["MASTER", "SERVICES", "AGREEMENT"]);
  });

  it("finds no words on a page of noise", async () => {
    const reading = await ocrPages(await noisePage(), [1], { queueKey: "a" });
    assert.equal(reading.kind, "read");
    assert.deepEqual(reading, { kind: "read", items: [], failedPages: [] });
  });

  it("reads one file at a time for the whole service; a file that cannot get its turn in time gives up", async () => {
    const scan = await scanPdf(await proseAgreement(), { dpi: 150, seed: 5 });
    const first = ocrPages(scan, [1], { queueKey: "company-a" });
    const second = ocrPages(scan, [1], { queueKey: "company-b" });
    const third = ocrPages(scan, [1], { queueKey: "company-c", waitMs: 1 });
    assert.deepEqual(ocrLoad(), { running: 1, waiting: 2 });
    assert.deepEqual(await third, { kind: "busy" });
    assert.equal((await first).kind, "read");
    assert.equal((await second).kind, "read");
    assert.deepEqual(ocrLoad(), { running: 0, waiting: 0 });
  });
});
