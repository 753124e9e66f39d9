// The tabular parts of the service's PDF documents, on pdf-layout.ts's pages: tables whose columns keep their
// figures whole (measured with the font; a smaller size when the page is not wide enough) and continue on the
// next page with their header, and the block of totals at the right of the page. No business rule: the cells'
// words come from the domain.
import { BOLD, REGULAR } from "./pdf-fonts.js";
import {
  bodyBottom,
  COLOR_ACCENT,
  COLOR_MUTED,
  COLOR_RULE,
  COLOR_TEXT,
  contentWidth,
  type Doc,
  ensureSpace,
  MARGIN_X,
  newPage,
} from "./pdf-layout.js";

const COLOR_HEADER_FILL = "#e9eef4";
const COLOR_STRIPE = "#f6f8fa";

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
