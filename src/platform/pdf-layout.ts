// Page layout for the service's PDF documents (the contract agreement, the invoice), drawn with pdfkit in
// DejaVu Sans (pdf-fonts.ts): A4 or Letter pages, section headings, paragraphs, label/value pairs, tables that
// continue on the next page with their header, a watermark and a footer on every page. No business rule:
// the documents' words come from the domain. The output is a pure function of the input.
import { createHash } from "node:crypto";
import PDFDocument from "pdfkit";
import { BOLD, loadPdfFonts, REGULAR, type PdfFonts } from "./pdf-fonts.js";

export type Doc = PDFKit.PDFDocument;

// Layout constants (points; A4 is 595.28 x 841.89).

export const MARGIN_X = 54;
const MARGIN_TOP = 42;
const FOOTER_HEIGHT = 40; // reserved above the bottom margin for the footer
const MARGIN_BOTTOM = 36;

export const COLOR_TEXT = "#1b1f24";
export const COLOR_MUTED = "#5b6570";
export const COLOR_ACCENT = "#1f3a5f";
export const COLOR_RULE = "#c9d1da";
const COLOR_HEADER_FILL = "#e9eef4";
const COLOR_STRIPE = "#f6f8fa";
const COLOR_SAMPLE = "#b42318";
const COLOR_SAMPLE_FILL = "#fdecea";

export interface TableColumn {
  header: string;
  /** Points. A wish: a column that needs more for its `keep` gets it from the others (fitTable). */
  width: number;
  align?: "left" | "right";
  /**
   * What its cells must keep whole. "line": each cell on one line (an amount: a figure split over two
   * lines reads as two figures). "words": lines break between words only, never inside one (a price in
   * words, whose number is a word). Unset: a word longer than the column is broken (names, descriptions).
   */
  keep?: "line" | "words";
}

export function contentWidth(doc: Doc): number {
  return doc.page.width - MARGIN_X * 2;
}

/** The lowest y that body content may reach on the current page (the footer sits below it). */
function bodyBottom(doc: Doc): number {
  return doc.page.maxY();
}

function drawWatermark(doc: Doc, text: string): void {
  const { width, height } = doc.page;
  doc.save();
  doc.rotate(-35, { origin: [width / 2, height / 2] });
  doc.font(BOLD).fontSize(96).fillColor(COLOR_SAMPLE).fillOpacity(0.06);
  const textWidth = doc.widthOfString(text);
  doc.text(text, width / 2 - textWidth / 2, height / 2 - 48, { lineBreak: false });
  doc.restore();
  // restore() resets the graphics state; keep pdfkit's own idea of the fill opacity in step.
  doc.fillOpacity(1);
}

function newPage(doc: Doc): void {
  doc.addPage();
  doc.x = MARGIN_X;
  doc.y = MARGIN_TOP;
}

/** Moves to a new page when fewer than `needed` points are left. */
export function ensureSpace(doc: Doc, needed: number): void {
  if (doc.y + needed > bodyBottom(doc)) newPage(doc);
}

export function sectionHeading(doc: Doc, text: string): void {
  ensureSpace(doc, 48);
  const y = doc.y + 8;
  doc.font(BOLD).fontSize(11).fillColor(COLOR_ACCENT).text(text.toUpperCase(), MARGIN_X, y, {
    characterSpacing: 0.6,
    lineBreak: false,
  });
  const lineY = y + 15;
  doc
    .moveTo(MARGIN_X, lineY)
    .lineTo(MARGIN_X + contentWidth(doc), lineY)
    .lineWidth(0.6)
    .strokeColor(COLOR_RULE)
    .stroke();
  doc.x = MARGIN_X;
  doc.y = lineY + 8;
}

export function paragraph(doc: Doc, text: string, options: { size?: number; gap?: number } = {}): void {
  const size = options.size ?? 9.5;
  doc.font(REGULAR).fontSize(size);
  const width = contentWidth(doc);
  const height = doc.heightOfString(text, { width, lineGap: 2 });
  ensureSpace(doc, Math.min(height, 60));
  doc.fillColor(COLOR_TEXT).text(text, MARGIN_X, doc.y, { width, lineGap: 2, align: "left" });
  doc.y += options.gap ?? 6;
}

/** Label/value pairs in two columns, filled row by row. */
export function drawKeyValues(doc: Doc, pairs: Array<[string, string]>): void {
  const gutter = 18;
  const total = contentWidth(doc) - gutter;
  const columns = [
    { x: MARGIN_X, label: 96, value: Math.round(total * 0.6) - 96 },
    { x: MARGIN_X + Math.round(total * 0.6) + gutter, label: 98, value: total - Math.round(total * 0.6) - 98 },
  ];
  const size = 9.5;
  for (let i = 0; i < pairs.length; i += 2) {
    const row = pairs.slice(i, i + 2);
    doc.font(REGULAR).fontSize(size);
    const height =
      Math.max(...row.map(([, value], c) => doc.heightOfString(value, { width: columns[c]?.value ?? 100 })), 12) + 5;
    ensureSpace(doc, height);
    const y = doc.y;
    row.forEach(([label, value], c) => {
      const column = columns[c];
      if (column === undefined) return;
      doc
        .font(REGULAR)
        .fontSize(size)
        .fillColor(COLOR_MUTED)
        .text(label, column.x, y, { width: column.label - 6 });
      doc.fillColor(COLOR_TEXT).text(value, column.x + column.label, y, { width: column.value });
    });
    doc.y = y + height;
  }
  doc.x = MARGIN_X;
  doc.y += 4;
}

const TABLE_FONT_SIZE = 8.5;
/** The smallest size a table shrinks to so that its kept cells fit the page's width. */
const TABLE_MIN_FONT_SIZE = 5;
const CELL_PAD_X = 5;
const CELL_PAD_Y = 4.5;
/** A column that may break its words keeps at least this much room for its text (or its wished width, if less). */
const FREE_COLUMN_MIN = 48;
/** pdfkit wraps text exactly as wide as its box when rounding tips it over: measured widths get this much more. */
const MEASURE_SLACK = 1;

interface FittedTable {
  columns: TableColumn[];
  size: number;
}

const widest = (doc: Doc, texts: string[]): number =>
  texts.reduce((max, text) => Math.max(max, doc.widthOfString(text)), 0);
// pdfkit breaks lines at spaces, never at a no-break space (which formatMoney puts after a currency code):
// "CHF 1,234.50" is one word to it.
const wordsOf = (text: string): string[] => text.split(/[ \t\r\n]+/).filter((w) => w.length > 0);

/** The least width column `index` can take at `size`: its `keep` measured on the header and the cells. */
function neededWidth(doc: Doc, size: number, column: TableColumn, index: number, rows: string[][]): number {
  const header = widest(doc.font(BOLD).fontSize(size), wordsOf(column.header));
  doc.font(REGULAR).fontSize(size);
  // A header's words stay whole in every column (a reader finds the columns by them).
  if (column.keep === undefined)
    return Math.max(Math.min(column.width, FREE_COLUMN_MIN + CELL_PAD_X * 2), Math.ceil(header) + CELL_PAD_X * 2);
  const cells = rows.map((cells) => cells[index] ?? "");
  const body = column.keep === "line" ? widest(doc, cells) : widest(doc, cells.flatMap(wordsOf));
  return Math.ceil(Math.max(header, body) + MEASURE_SLACK) + CELL_PAD_X * 2;
}

/**
 * The columns' widths and the font size that keep every cell as its column asks (`keep`) within the width
 * the columns wish for together: a kept column grows to its longest cell or word, taking the room from the
 * columns that have some to spare (the free ones first, in order); when that is not enough, the whole table
 * takes a smaller size, down to TABLE_MIN_FONT_SIZE. Measured with the font, on the cells actually drawn.
 */
function fitTable(doc: Doc, columns: TableColumn[], rows: string[][]): FittedTable {
  const total = columns.reduce((sum, c) => sum + c.width, 0);
  let fitted: FittedTable = { columns, size: TABLE_FONT_SIZE };
  for (let size = TABLE_FONT_SIZE; size >= TABLE_MIN_FONT_SIZE; size -= 0.5) {
    const needs = columns.map((column, i) => neededWidth(doc, size, column, i, rows));
    const widths = columns.map((column, i) => Math.max(column.width, needs[i]!));
    let excess = widths.reduce((sum, w) => sum + w, 0) - total;
    const givers = [...columns.keys()].sort(
      (a, b) => Number(columns[a]!.keep !== undefined) - Number(columns[b]!.keep !== undefined),
    );
    for (const i of givers) {
      if (excess <= 0) break;
      const spare = Math.min(widths[i]! - needs[i]!, excess);
      widths[i] = widths[i]! - spare;
      excess -= spare;
    }
    fitted = { columns: columns.map((column, i) => ({ ...column, width: widths[i]! })), size };
    if (excess <= 0) return fitted;
  }
  // Not even the smallest size holds every kept cell (no amount the service stores gets here): the
  // smallest size, and the cells wrap where they must.
  return fitted;
}

function rowHeight(doc: Doc, cells: string[], columns: TableColumn[], font: string, size: number): number {
  doc.font(font).fontSize(size);
  let max = 0;
  cells.forEach((text, i) => {
    const width = (columns[i]?.width ?? 0) - CELL_PAD_X * 2;
    max = Math.max(max, doc.heightOfString(text, { width }));
  });
  return max + CELL_PAD_Y * 2;
}

function drawRow(
  doc: Doc,
  cells: string[],
  columns: TableColumn[],
  options: { y: number; height: number; font: string; size: number; color: string; fill?: string },
): void {
  const totalWidth = columns.reduce((sum, c) => sum + c.width, 0);
  if (options.fill !== undefined) {
    doc.save();
    doc.rect(MARGIN_X, options.y, totalWidth, options.height).fill(options.fill);
    doc.restore();
  }
  let x = MARGIN_X;
  doc.font(options.font).fontSize(options.size).fillColor(options.color);
  cells.forEach((text, i) => {
    const column = columns[i];
    if (column === undefined) return;
    doc.text(text, x + CELL_PAD_X, options.y + CELL_PAD_Y, {
      width: column.width - CELL_PAD_X * 2,
      align: column.align ?? "left",
    });
    x += column.width;
  });
  doc
    .moveTo(MARGIN_X, options.y + options.height)
    .lineTo(MARGIN_X + totalWidth, options.y + options.height)
    .lineWidth(0.5)
    .strokeColor(COLOR_RULE)
    .stroke();
}

/** Sizes of a summary's rows (a subtotal, a tax, a total): the last one stands out. */
const SUMMARY_SIZE = 9.5;
const SUMMARY_LAST_SIZE = 11;
const SUMMARY_MIN_WIDTH = 220;
const SUMMARY_GAP = 24;

/**
 * Label/value rows at the right of the page, the last in bold and larger (an invoice's totals). Every value
 * stays on one line and every row on its own: the block is as wide as its longest label and value, measured
 * with the font, and takes a smaller size when the page's width is not enough.
 */
export function drawSummary(doc: Doc, rows: Array<[string, string]>): void {
  const available = contentWidth(doc);
  const fontOf = (i: number) => (i === rows.length - 1 ? BOLD : REGULAR);
  const baseSize = (i: number) => (i === rows.length - 1 ? SUMMARY_LAST_SIZE : SUMMARY_SIZE);
  const measure = (scale: number, column: 0 | 1) =>
    rows.reduce(
      (max, row, i) =>
        Math.max(
          max,
          doc
            .font(fontOf(i))
            .fontSize(baseSize(i) * scale)
            .widthOfString(row[column]),
        ),
      0,
    );
  let scale = 1;
  const widthAt = (s: number) => Math.ceil(measure(s, 0) + SUMMARY_GAP + measure(s, 1) + MEASURE_SLACK);
  while (widthAt(scale) > available && baseSize(0) * scale > TABLE_MIN_FONT_SIZE) scale -= 0.05;
  const labelWidth = Math.ceil(measure(scale, 0) + MEASURE_SLACK);
  const width = Math.min(available, Math.max(SUMMARY_MIN_WIDTH, widthAt(scale)));
  const x = MARGIN_X + available - width;
  const heights = rows.map(
    (_, i) =>
      doc
        .font(fontOf(i))
        .fontSize(baseSize(i) * scale)
        .currentLineHeight(true) + (i === rows.length - 1 ? 5 : 3),
  );
  // The rows stay together on one page.
  ensureSpace(
    doc,
    heights.reduce((sum, h) => sum + h, 0),
  );
  rows.forEach(([label, value], i) => {
    doc
      .font(fontOf(i))
      .fontSize(baseSize(i) * scale)
      .fillColor(COLOR_TEXT);
    const y = doc.y;
    doc.text(label, x, y, { width: labelWidth, lineBreak: false });
    doc.text(value, x + labelWidth, y, { width: width - labelWidth, align: "right", lineBreak: false });
    doc.y = y + heights[i]!;
  });
  doc.x = MARGIN_X;
}

/** A red band across the page with `text` in it: a sample agreement, a draft or void invoice. */
export function drawBanner(doc: Doc, text: string): void {
  const width = contentWidth(doc);
  const y = doc.y;
  const height = 22;
  doc.save();
  doc.roundedRect(MARGIN_X, y, width, height, 3).lineWidth(0.8).fillAndStroke(COLOR_SAMPLE_FILL, COLOR_SAMPLE);
  doc.restore();
  doc.font(BOLD).fontSize(9.5).fillColor(COLOR_SAMPLE);
  doc.text(text, MARGIN_X, y + 6, { width, align: "center", lineBreak: false });
  doc.y = y + height + 12;
}

/**
 * A table of text cells: a header row, striped rows, and on a page break the `continued` line and the header
 * again (rows never split).
 */
export function drawTable(doc: Doc, wished: TableColumn[], rows: string[][], continued: string): void {
  const { columns, size } = fitTable(doc, wished, rows);
  const headers = columns.map((c) => c.header);
  const headerHeight = rowHeight(doc, headers, columns, BOLD, size);
  const drawHeader = (): void => {
    const y = doc.y;
    drawRow(doc, headers, columns, {
      y,
      height: headerHeight,
      font: BOLD,
      size,
      color: COLOR_ACCENT,
      fill: COLOR_HEADER_FILL,
    });
    doc.y = y + headerHeight;
  };
  const firstHeight = rowHeight(doc, rows[0] ?? [], columns, REGULAR, size);
  ensureSpace(doc, headerHeight + firstHeight);
  drawHeader();
  rows.forEach((cells, index) => {
    const height = rowHeight(doc, cells, columns, REGULAR, size);
    if (doc.y + height > bodyBottom(doc)) {
      newPage(doc);
      doc.font(REGULAR).fontSize(8.5).fillColor(COLOR_MUTED);
      doc.text(continued, MARGIN_X, doc.y, { lineBreak: false });
      doc.y += 16;
      drawHeader();
    }
    const y = doc.y;
    const options = { y, height, font: REGULAR, size, color: COLOR_TEXT };
    drawRow(doc, cells, columns, index % 2 === 1 ? { ...options, fill: COLOR_STRIPE } : options);
    doc.y = y + height;
  });
  doc.x = MARGIN_X;
  doc.y += 10;
}

export interface PageDecorations {
  /** Drawn across every page, faintly (a sample's SAMPLE, a draft's DRAFT); null: none. */
  watermark: string | null;
  footer: { generated: string; reference: string; page: (page: number, pages: number) => string };
}

/** Watermark and footer on every page, drawn once the page count is known. */
function drawPageDecorations(doc: Doc, { footer, watermark }: PageDecorations): void {
  const range = doc.bufferedPageRange();
  for (let i = 0; i < range.count; i += 1) {
    doc.switchToPage(range.start + i);
    if (watermark !== null) drawWatermark(doc, watermark);
    const { width, height } = doc.page;
    // Writing below the bottom margin would make pdfkit start a new page; the footer is placed by hand.
    const savedBottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const lineY = height - MARGIN_BOTTOM - FOOTER_HEIGHT + 14;
    doc
      .moveTo(MARGIN_X, lineY)
      .lineTo(width - MARGIN_X, lineY)
      .lineWidth(0.5)
      .strokeColor(COLOR_RULE)
      .stroke();
    const textY = lineY + 8;
    const innerWidth = width - MARGIN_X * 2;
    doc.font(REGULAR).fontSize(7.5).fillColor(COLOR_MUTED);
    doc.text(footer.generated, MARGIN_X, textY, { width: innerWidth, align: "left", lineBreak: false });
    doc.text(footer.page(i + 1, range.count), MARGIN_X, textY, { width: innerWidth, align: "right", lineBreak: false });
    doc.fillColor(watermark !== null ? COLOR_SAMPLE : COLOR_MUTED);
    doc.text(footer.reference, MARGIN_X, textY + 11, { width: innerWidth, align: "left", lineBreak: false });
    doc.page.margins.bottom = savedBottom;
  }
}

export interface PdfInfo {
  title: string;
  author: string;
  subject: string;
  keywords: string;
  /** The metadata dates: nothing reads the clock, so the same input gives the same bytes. */
  at: Date;
  /** The page size: A4 unless given (an invoice's is the seller's choice). */
  size?: "letter" | "a4";
  /**
   * What the file identifier (the trailer's /ID) is derived from, e.g. the document's number and version: the
   * same document keeps the same identifier. Unset: pdfkit's, a hash of the metadata (which holds `at`).
   */
  documentKey?: string;
}

/** Page sizes in points: Letter 612 × 792, A4 595.28 × 841.89. */
const PAGE_SIZES = { letter: "LETTER", a4: "A4" } as const;

/** An image drawn in a box of `width` × `height` points, at its proportions (a seller's logo). */
export function drawImage(
  doc: Doc,
  bytes: Uint8Array,
  at: { x: number; y: number; width: number; height: number },
): void {
  doc.image(Buffer.from(bytes), at.x, at.y, { fit: [at.width, at.height], align: "right" });
}

/**
 * Renders one document: A4 (or `info.size`), fonts registered, `draw` lays out the body from the top margin, then every page
 * gets its decorations. `draw` receives the fonts, to make its text drawable (drawableText).
 */
export async function renderPdf(
  info: PdfInfo,
  decorations: PageDecorations,
  draw: (doc: Doc) => void,
): Promise<Buffer> {
  if (!(info.at instanceof Date) || Number.isNaN(info.at.getTime()))
    throw new TypeError("renderPdf: the date must be a valid Date");
  const fonts: PdfFonts = loadPdfFonts();
  const doc = new PDFDocument({
    size: PAGE_SIZES[info.size ?? "a4"],
    // The bottom margin includes the footer band, so text that flows onto a new page stays clear of it.
    margins: { top: MARGIN_TOP, bottom: MARGIN_BOTTOM + FOOTER_HEIGHT, left: MARGIN_X, right: MARGIN_X },
    bufferPages: true,
    lang: "en",
    displayTitle: true,
    info: {
      Title: info.title,
      Author: info.author,
      Subject: info.subject,
      Keywords: info.keywords,
      Creator: "billing-service",
      Producer: "billing-service (PDFKit)",
      CreationDate: info.at,
      ModDate: info.at,
    },
  });
  if (info.documentKey !== undefined) {
    // pdfkit takes its file identifier from the metadata when the document is created and writes it in the
    // trailer at the end; derived from the document's own key instead, it names the document, not the moment.
    const id = createHash("sha256").update(info.documentKey).digest().subarray(0, 16);
    (doc as unknown as { _id: Uint8Array })._id = new Uint8Array(id);
  }
  const chunks: Buffer[] = [];
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.registerFont(REGULAR, fonts.regular);
  doc.registerFont(BOLD, fonts.bold);
  doc.font(REGULAR);
  doc.x = MARGIN_X;
  doc.y = MARGIN_TOP;
  draw(doc);
  drawPageDecorations(doc, decorations);
  doc.end();
  return finished;
}
