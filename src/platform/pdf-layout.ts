// Page layout for the service's PDF documents (the contract agreement, the invoice, the credit note), drawn with
// pdfkit in DejaVu Sans (pdf-fonts.ts): A4 or Letter pages, section headings, paragraphs, label/value pairs, a
// banner, an image, a watermark and a footer on every page; tables and totals are pdf-tables.ts. No business
// rule: the documents' words come from the domain. The output is a pure function of the input.
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
const COLOR_SAMPLE = "#b42318";
const COLOR_SAMPLE_FILL = "#fdecea";

export function contentWidth(doc: Doc): number {
  return doc.page.width - MARGIN_X * 2;
}

/** The lowest y that body content may reach on the current page (the footer sits below it). */
export function bodyBottom(doc: Doc): number {
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

/** Continues on a new page, at the top margin. */
export function newPage(doc: Doc): void {
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
