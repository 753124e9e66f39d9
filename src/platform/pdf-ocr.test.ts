import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { noisePage, proseAgreement, scanPdf, storedScan } from "../../test/support/agreement-files.js";
import { ocrLoad, ocrPages } from "./pdf-ocr.js";

describe("OCR of pages without text", () => {
  it("reads a skewed, grainy scan's words where they stand on the page, each with a confidence", async () => {
    const scan = storedScan("prose-150dpi-skewed");
    const reading = await ocrPages(scan, [1], { queueKey: "a" });
    assert.equal(reading.unread, undefined);
    assert.deepEqual(reading.failedPages, []);
    const text = reading.items.map((item) => item.text).join(" ");
    assert.match(text, /MSA-2026-0142/);
    assert.match(text, /Harbor Freight Logistics/);
    const title = reading.items.find((item) => item.text === "MASTER");
    // The title is centred near the top of an A4 page (595 × 842 points).
    assert.ok(title !== undefined && title.y > 700 && title.x > 100 && title.x < 300, JSON.stringify(title));
    // Tesseract scores some clearly read words 0: every confidence is a share from 0 to 1.
    for (const item of reading.items) assert.ok(item.confidence >= 0 && item.confidence <= 1, JSON.stringify(item));
    // The page's slant is taken out: the words of the title's line stand on one baseline.
    const line = reading.items.filter((item) => Math.abs(item.y - title!.y) < 3).map((item) => item.text);
    assert.deepEqual(line.slice(0, 3), ["MASTER", "SERVICES", "AGREEMENT"]);
  });

  it("finds no words on a page of noise", async () => {
    const reading = await ocrPages(await noisePage(), [1], { queueKey: "a" });
    assert.deepEqual(reading, { items: [], failedPages: [] });
  });

  it("reads two files at once, one per company; past its own bound a company's file is unread, and so is one whose wait ran out", async () => {
    const scan = await scanPdf(await proseAgreement(), { dpi: 150, seed: 5 });
    const first = ocrPages(scan, [1], { queueKey: "company-a" });
    const second = ocrPages(scan, [1], { queueKey: "company-b" });
    // A's second file waits for A's first (one running per company); its third is one more than A may queue.
    const again = ocrPages(scan, [1], { queueKey: "company-a" });
    const overBound = ocrPages(scan, [1], { queueKey: "company-a" });
    const impatient = ocrPages(scan, [1], { queueKey: "company-c", waitMs: 1 });
    assert.deepEqual(ocrLoad(), { running: 2, waiting: 2 });
    const refused = await overBound;
    assert.deepEqual([refused.items, refused.unread?.pages, refused.unread?.bound], [[], [1], "key"]);
    assert.ok(refused.unread!.retryAfterSeconds >= 10 && refused.unread!.retryAfterSeconds <= 120);
    const gaveUp = await impatient;
    assert.deepEqual([gaveUp.unread?.pages, gaveUp.unread?.bound], [[1], "wait"]);
    assert.deepEqual(ocrLoad(), { running: 2, waiting: 1 }, "the file that gave up no longer waits");
    for (const reading of await Promise.all([first, second, again])) {
      assert.equal(reading.unread, undefined);
      assert.match(reading.items.map((item) => item.text).join(" "), /MSA-2026-0142/);
    }
    assert.deepEqual(ocrLoad(), { running: 0, waiting: 0 });
  });

  it("passes its turn between pages: a company's next page waits for another company's waiting file, and is still read", async () => {
    const [long, short] = [await noisePage(7, 3), await noisePage(8)];
    // A's and B's three pages take both slots; C and D wait. Whichever of A and B reads a page first passes its
    // turn to C, the other to D; their next pages wait for C's and D's, and every page is read.
    const order: string[] = [];
    const read = (key: string, pdf: Buffer, pages: number[]) =>
      ocrPages(pdf, pages, { queueKey: key }).then((reading) => {
        order.push(key);
        return reading;
      });
    const readings = [
      read("A", long, [1, 2, 3]),
      read("B", long, [1, 2, 3]),
      read("C", short, [1]),
      read("D", short, [1]),
    ];
    assert.deepEqual(ocrLoad(), { running: 2, waiting: 2 });
    for (const reading of await Promise.all(readings)) assert.deepEqual(reading, { items: [], failedPages: [] });
    assert.deepEqual(order.slice(0, 2).sort(), ["C", "D"], `C and D wait one page, not three: ${order.join(", ")}`);
    assert.deepEqual(ocrLoad(), { running: 0, waiting: 0 });
  });
});
