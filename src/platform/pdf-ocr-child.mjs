// The child process that reads the pages of a PDF that have no text layer (pdf-ocr.ts starts it): each page is
// drawn by pdfjs-dist onto an @napi-rs/canvas bitmap at 300 dpi and read by tesseract.js (Tesseract's LSTM
// engine compiled to WebAssembly) with the English model from the @tesseract.js-data/eng package. Nothing is
// fetched: the engine and its model are files in node_modules, and the model is read, never cached to disk.
// First { kind: "open", bytes }; then, for each { kind: "page", page }, one answer: { kind: "page", page, items },
// or { kind: "failed", page, reason }. The parent asks for a page at a time (each under a budget of its own) and
// ends the process when it is done, or when the file passes its turn to another company's. Plain JavaScript, like
// the text child.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createCanvas } from "@napi-rs/canvas";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import { createWorker, OEM } from "tesseract.js";

const require = createRequire(import.meta.url);
/** The English model, integer-quantised "best" LSTM weights: as accurate as "best", faster to run. */
const LANG_PATH = join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int");
const DPI = 300;
/** The longest side a page is drawn at: a page of a square metre must not become a gigapixel bitmap. */
const MAX_SIDE = 4200;
/** The most of a page that may be ink for it to be read as text (a printed page is 3–15 % ink). */
const MAX_INK = 0.35;

/**
 * The words of one OCR result as runs of text in PDF points: each word where it stands, on its line's baseline,
 * the line's height as its size. A scan is seldom square on the glass: the page's slant, measured from the
 * baselines of its long lines, is taken out, so that a table's cells stand on one line again.
 */
function wordsOf(result, page, scale, heightPt) {
  const lines = [];
  for (const block of result.data.blocks ?? []) {
    for (const paragraph of block.paragraphs) lines.push(...paragraph.lines);
  }
  const slopes = lines
    .filter((line) => line.baseline && line.baseline.x1 - line.baseline.x0 > 300)
    .map((line) => (line.baseline.y1 - line.baseline.y0) / (line.baseline.x1 - line.baseline.x0))
    .sort((a, b) => a - b);
  const slope = slopes.length === 0 ? 0 : slopes[Math.floor(slopes.length / 2)];
  const angle = Math.atan(slope);
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  // Rotating by −angle about the origin: where each point would be on a square page.
  const straight = (x, y) => ({ x: x * cos + y * sin, y: -x * sin + y * cos });
  const items = [];
  for (const line of lines) {
    // A short "word" the engine doubts is a smudge it tried to read: "ae", "©.", "Lo" at a line's end.
    const words = line.words.filter(
      (word) =>
        word.text.trim() !== "" && !(word.confidence < 40 && /^[^\p{L}\d]*\p{L}{0,2}[^\p{L}\d]*$/u.test(word.text)),
    );
    if (words.length === 0) continue;
    const base = line.baseline ?? { x0: line.bbox.x0, y0: line.bbox.y1, x1: line.bbox.x1, y1: line.bbox.y1 };
    const baselineY = straight((base.x0 + base.x1) / 2, (base.y0 + base.y1) / 2).y;
    const height = (line.bbox.y1 - line.bbox.y0) / scale;
    for (const word of words) {
      const left = straight(word.bbox.x0, (word.bbox.y0 + word.bbox.y1) / 2).x;
      items.push({
        page,
        x: left / scale,
        y: heightPt - baselineY / scale,
        width: (word.bbox.x1 - word.bbox.x0) / scale,
        height,
        text: word.text,
        confidence: Math.round(word.confidence) / 100,
      });
    }
  }
  return items;
}

/**
 * A scan as black ink on white paper: each pixel to black or white at a threshold between the page's paper and
 * its ink (Otsu's, from the histogram), then every black pixel with at most one black neighbour made white.
 * A copier's grain and a scanner's dust are specks of a pixel or two; no stroke of a letter at 300 dpi is.
 * Answers the share of the page that is ink.
 * @param {{ data: Uint8ClampedArray, width: number, height: number }} image
 */
function cleanScan(image) {
  const { data, width, height } = image;
  const gray = new Uint8Array(width * height);
  const histogram = new Array(256).fill(0);
  for (let i = 0, p = 0; p < gray.length; i += 4, p++) {
    const value = (data[i] * 77 + data[i + 1] * 150 + data[i + 2] * 29) >> 8;
    gray[p] = value;
    histogram[value]++;
  }
  let [sum, sumBelow, weightBelow, best, threshold] = [0, 0, 0, 0, 128];
  for (let v = 0; v < 256; v++) sum += v * histogram[v];
  for (let v = 0; v < 256; v++) {
    weightBelow += histogram[v];
    const weightAbove = gray.length - weightBelow;
    if (weightBelow === 0 || weightAbove === 0) continue;
    sumBelow += v * histogram[v];
    const between = weightBelow * weightAbove * (sumBelow / weightBelow - (sum - sumBelow) / weightAbove) ** 2;
    if (between > best) [best, threshold] = [between, v];
  }
  const ink = new Uint8Array(gray.length);
  let inked = 0;
  for (let p = 0; p < gray.length; p++) {
    ink[p] = gray[p] <= threshold ? 1 : 0;
    inked += ink[p];
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      let value = ink[p];
      if (value === 1) {
        let neighbours = 0;
        for (let dy = -1; dy <= 1; dy++) {
          for (let dx = -1; dx <= 1; dx++) {
            const [nx, ny] = [x + dx, y + dy];
            if ((dx || dy) && nx >= 0 && ny >= 0 && nx < width && ny < height) neighbours += ink[ny * width + nx];
          }
        }
        if (neighbours <= 1) value = 0;
      }
      const shade = value === 1 ? 0 : 255;
      const i = p * 4;
      data[i] = data[i + 1] = data[i + 2] = shade;
      data[i + 3] = 255;
    }
  }
  return inked / gray.length;
}

/**
 * Opens the document and the engine once, then reads the pages it is asked for, one message each: the parent
 * gives the next page when it is this file's turn, and ends the process when it is not.
 * @param {Uint8Array} bytes
 */
async function open(bytes) {
  const task = getDocument({
    data: new Uint8Array(bytes),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  const worker = await createWorker("eng", OEM.LSTM_ONLY, {
    langPath: LANG_PATH,
    cacheMethod: "none",
    gzip: true,
    logger: () => {},
    errorHandler: () => {},
  });
  const doc = await task.promise;
  /** @param {number} number */
  return async (number) => {
    const page = await doc.getPage(number);
    const unit = page.getViewport({ scale: 1 });
    const scale = Math.min(DPI / 72, MAX_SIDE / Math.max(unit.width, unit.height));
    const viewport = page.getViewport({ scale });
    const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    const context = canvas.getContext("2d");
    context.fillStyle = "white";
    context.fillRect(0, 0, canvas.width, canvas.height);
    await page.render({ canvasContext: context, viewport, canvas }).promise;
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height);
    // A page of text is mostly paper: one over a third ink is a photo or noise, with no lines to read.
    if (cleanScan(pixels) > MAX_INK) {
      page.cleanup();
      return [];
    }
    context.putImageData(pixels, 0, 0);
    const image = canvas.toBuffer("image/png");
    page.cleanup();
    const result = await worker.recognize(image, {}, { blocks: true, text: false });
    return wordsOf(result, number, scale, unit.height);
  };
}

/** @type {Promise<(page: number) => Promise<unknown[]>> | undefined} */
let reader;
// Pages are read one after another, in the order asked.
let queue = Promise.resolve();

process.on("message", (/** @type {{ kind: "open", bytes: Uint8Array } | { kind: "page", page: number }} */ request) => {
  if (request.kind === "open") {
    reader = open(request.bytes);
    return;
  }
  const number = request.page;
  queue = queue.then(async () => {
    try {
      const read = await /** @type {NonNullable<typeof reader>} */ (reader);
      process.send?.({ kind: "page", page: number, items: await read(number) });
    } catch (error) {
      process.send?.({ kind: "failed", page: number, reason: String(error) });
    }
  });
});
// The parent gone, nothing is left to do.
process.on("disconnect", () => process.exit(0));
