// The contract's "Usage-based services agreement" as a PDF: the layout of the words agreement-text.ts
// writes (parties, term, pricing table, minimum, footer), drawn with pdfkit in DejaVu Sans (embedded, subset;
// platform/pdf-fonts.ts) so accented, Greek, Cyrillic and other names DejaVu covers print as written;
// characters it lacks (CJK) are drawn as U+FFFD instead of failing, and the document metadata (Title,
// Author, Subject) keeps the exact text. The output is a pure function of the input: metadata dates come
// from `generatedAt`, nothing reads the clock.
import PDFDocument from "pdfkit";
import { BOLD, drawableText, loadPdfFonts, REGULAR } from "../../platform/pdf-fonts.js";
import { agreementWords, mapAgreementText, RULE_COLUMNS, type AgreementPdfInput, type AgreementWords, type RuleColumn } from "./agreement-text.js";

export type { AgreementPdfInput } from "./agreement-text.js";

type Doc = PDFKit.PDFDocument;

/** At most this many characters of one value: one absurd value cannot outgrow a page (rows never split). */
const MAX_FIELD_CHARS = 200;

// Layout constants (points; A4 is 595.28 x 841.89).

const MARGIN_X = 54;
const MARGIN_TOP = 42;
const FOOTER_HEIGHT = 40; // reserved above the bottom margin for the footer
const MARGIN_BOTTOM = 36;

const COLOR_TEXT = "#1b1f24";
const COLOR_MUTED = "#5b6570";
const COLOR_ACCENT = "#1f3a5f";
const COLOR_RULE = "#c9d1da";
const COLOR_HEADER_FILL = "#e9eef4";
const COLOR_STRIPE = "#f6f8fa";
const COLOR_SAMPLE = "#b42318";
const COLOR_SAMPLE_FILL = "#fdecea";

// Drawing helpers.

interface Column extends RuleColumn {
  width: number;
  align?: "left" | "right";
}

function contentWidth(doc: Doc): number {
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
function ensureSpace(doc: Doc, needed: number): void {
  if (doc.y + needed > bodyBottom(doc)) newPage(doc);
}

function sectionHeading(doc: Doc, text: string): void {
  ensureSpace(doc, 48);
  const y = doc.y + 8;
  doc.font(BOLD).fontSize(11).fillColor(COLOR_ACCENT).text(text.toUpperCase(), MARGIN_X, y, {
    characterSpacing: 0.6,
    lineBreak: false,
  });
  const lineY = y + 15;
  doc.moveTo(MARGIN_X, lineY).lineTo(MARGIN_X + contentWidth(doc), lineY).lineWidth(0.6).strokeColor(COLOR_RULE).stroke();
  doc.x = MARGIN_X;
  doc.y = lineY + 8;
}

function paragraph(doc: Doc, text: string, options: { size?: number; gap?: number } = {}): void {
  const size = options.size ?? 9.5;
  doc.font(REGULAR).fontSize(size);
  const width = contentWidth(doc);
  const height = doc.heightOfString(text, { width, lineGap: 2 });
  ensureSpace(doc, Math.min(height, 60));
  doc.fillColor(COLOR_TEXT).text(text, MARGIN_X, doc.y, { width, lineGap: 2, align: "left" });
  doc.y += options.gap ?? 6;
}

function drawSampleBanner(doc: Doc, text: string): void {
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

function drawTitle(doc: Doc, words: AgreementWords): void {
  const width = contentWidth(doc);
  doc.font(BOLD).fontSize(21).fillColor(COLOR_ACCENT).text(words.title, MARGIN_X, doc.y, { width });
  doc.moveDown(0.15);
  doc.font(REGULAR).fontSize(10).fillColor(COLOR_MUTED);
  doc.text(words.subtitle, MARGIN_X, doc.y, { width });
  doc.y += 10;
}

function drawParties(doc: Doc, parties: AgreementWords["parties"]): void {
  const gutter = 16;
  const boxWidth = (contentWidth(doc) - gutter) / 2;
  const pad = 10;
  doc.font(BOLD).fontSize(12);
  const nameHeights = parties.map((p) => doc.heightOfString(p.name, { width: boxWidth - pad * 2 }));
  doc.font(REGULAR).fontSize(8.5);
  const roleHeights = parties.map((p) => doc.heightOfString(p.role, { width: boxWidth - pad * 2 }));
  const inner = Math.max(...parties.map((_, i) => (nameHeights[i] ?? 0) + (roleHeights[i] ?? 0)));
  const boxHeight = pad + 12 + inner + 4 + pad;
  ensureSpace(doc, boxHeight + 10);
  const top = doc.y;
  parties.forEach((party, i) => {
    const x = MARGIN_X + i * (boxWidth + gutter);
    doc.save();
    doc.roundedRect(x, top, boxWidth, boxHeight, 4).lineWidth(0.7).strokeColor(COLOR_RULE).stroke();
    doc.restore();
    doc.font(BOLD).fontSize(7.5).fillColor(COLOR_MUTED);
    doc.text(party.label.toUpperCase(), x + pad, top + pad, { characterSpacing: 0.4, lineBreak: false });
    doc.font(BOLD).fontSize(12).fillColor(COLOR_TEXT);
    doc.text(party.name, x + pad, top + pad + 12, { width: boxWidth - pad * 2 });
    doc.font(REGULAR).fontSize(8.5).fillColor(COLOR_MUTED);
    doc.text(party.role, x + pad, doc.y + 2, { width: boxWidth - pad * 2 });
  });
  doc.x = MARGIN_X;
  doc.y = top + boxHeight + 12;
}

/** Label/value pairs in two columns, filled row by row. */
function drawKeyValues(doc: Doc, pairs: Array<[string, string]>): void {
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
      doc.font(REGULAR).fontSize(size).fillColor(COLOR_MUTED).text(label, column.x, y, { width: column.label - 6 });
      doc.fillColor(COLOR_TEXT).text(value, column.x + column.label, y, { width: column.value });
    });
    doc.y = y + height;
  }
  doc.x = MARGIN_X;
  doc.y += 4;
}

const TABLE_FONT_SIZE = 8.5;
const CELL_PAD_X = 5;
const CELL_PAD_Y = 4.5;

/**
 * Points per column; the first column (the rule's name) takes what the others leave. Price fits "2.9% of
 * the event's value" and "1,234.56 USD per unit" on one line.
 */
const COLUMN_WIDTHS: Record<string, number> = { Type: 64, Metric: 88, Price: 111, "Monthly cap": 75, Counterparty: 74 };

function ruleColumns(totalWidth: number): Column[] {
  const used = RULE_COLUMNS.reduce((sum, c) => sum + (COLUMN_WIDTHS[c.header] ?? 0), 0);
  return RULE_COLUMNS.map((c, i) => ({ ...c, width: COLUMN_WIDTHS[c.header] ?? (i === 0 ? totalWidth - used : 0) }));
}

function rowHeight(doc: Doc, cells: string[], columns: Column[], font: string): number {
  doc.font(font).fontSize(TABLE_FONT_SIZE);
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
  columns: Column[],
  options: { y: number; height: number; font: string; color: string; fill?: string },
): void {
  const totalWidth = columns.reduce((sum, c) => sum + c.width, 0);
  if (options.fill !== undefined) {
    doc.save();
    doc.rect(MARGIN_X, options.y, totalWidth, options.height).fill(options.fill);
    doc.restore();
  }
  let x = MARGIN_X;
  doc.font(options.font).fontSize(TABLE_FONT_SIZE).fillColor(options.color);
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

function drawRulesTable(doc: Doc, input: AgreementPdfInput, words: AgreementWords): void {
  const columns = ruleColumns(contentWidth(doc));
  const headers = columns.map((c) => c.header);
  const headerHeight = rowHeight(doc, headers, columns, BOLD);

  const drawHeader = (): void => {
    const y = doc.y;
    drawRow(doc, headers, columns, { y, height: headerHeight, font: BOLD, color: COLOR_ACCENT, fill: COLOR_HEADER_FILL });
    doc.y = y + headerHeight;
  };

  if (input.rules.length === 0) {
    paragraph(doc, words.noRules);
    return;
  }

  const rows = input.rules.map((rule) => columns.map((c) => c.cell(rule, input)));
  const firstHeight = rowHeight(doc, rows[0] ?? [], columns, REGULAR);
  ensureSpace(doc, headerHeight + firstHeight);
  drawHeader();
  rows.forEach((cells, index) => {
    const height = rowHeight(doc, cells, columns, REGULAR);
    if (doc.y + height > bodyBottom(doc)) {
      newPage(doc);
      doc.font(REGULAR).fontSize(8.5).fillColor(COLOR_MUTED);
      doc.text(words.pricingContinued, MARGIN_X, doc.y, { lineBreak: false });
      doc.y += 16;
      drawHeader();
    }
    const y = doc.y;
    const options = { y, height, font: REGULAR, color: COLOR_TEXT };
    drawRow(doc, cells, columns, index % 2 === 1 ? { ...options, fill: COLOR_STRIPE } : options);
    doc.y = y + height;
  });
  doc.x = MARGIN_X;
  doc.y += 10;
}

function drawSignatures(doc: Doc, signatures: AgreementWords["signatures"]): void {
  const gutter = 28;
  const width = (contentWidth(doc) - gutter) / 2;
  doc.font(BOLD).fontSize(9.5);
  const nameHeight = Math.max(...signatures.map((s) => doc.heightOfString(s.party, { width })));
  const blockHeight = 24 + 5 + nameHeight + 13;
  ensureSpace(doc, blockHeight + 4);
  const top = doc.y + 4;
  signatures.forEach((signature, i) => {
    const x = MARGIN_X + i * (width + gutter);
    const lineY = top + 24;
    doc.moveTo(x, lineY).lineTo(x + width, lineY).lineWidth(0.6).strokeColor(COLOR_TEXT).stroke();
    doc.font(BOLD).fontSize(9.5).fillColor(COLOR_TEXT).text(signature.party, x, lineY + 5, { width });
    doc.font(REGULAR).fontSize(8.5).fillColor(COLOR_MUTED).text(signature.line, x, doc.y + 1, { width });
  });
  doc.x = MARGIN_X;
  doc.y = top + blockHeight;
}

/** Watermark and footer on every page, drawn once the page count is known. */
function drawPageDecorations(doc: Doc, words: AgreementWords): void {
  const range = doc.bufferedPageRange();
  const { footer, watermark } = words;
  for (let i = 0; i < range.count; i += 1) {
    doc.switchToPage(range.start + i);
    if (watermark !== null) drawWatermark(doc, watermark);
    const { width, height } = doc.page;
    // Writing below the bottom margin would make pdfkit start a new page; the footer is placed by hand.
    const savedBottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const lineY = height - MARGIN_BOTTOM - FOOTER_HEIGHT + 14;
    doc.moveTo(MARGIN_X, lineY).lineTo(width - MARGIN_X, lineY).lineWidth(0.5).strokeColor(COLOR_RULE).stroke();
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

function draw(doc: Doc, input: AgreementPdfInput): void {
  const words = agreementWords(input);
  doc.x = MARGIN_X;
  doc.y = MARGIN_TOP;
  if (input.sample) drawSampleBanner(doc, words.sampleBanner);
  drawTitle(doc, words);

  drawParties(doc, words.parties);
  paragraph(doc, words.intro, { gap: 8 });

  sectionHeading(doc, words.keyTermsHeading);
  drawKeyValues(doc, words.keyTerms);

  sectionHeading(doc, words.pricingHeading);
  drawRulesTable(doc, input, words);

  sectionHeading(doc, words.termsHeading);
  for (const clause of words.clauses) paragraph(doc, clause, { size: 9, gap: 4 });
  doc.y += 8;

  drawSignatures(doc, words.signatures);
  drawPageDecorations(doc, words);
}

/** Renders the agreement as a PDF. The same input gives the same bytes. */
export async function renderAgreementPdf(input: AgreementPdfInput): Promise<Buffer> {
  if (!(input.generatedAt instanceof Date) || Number.isNaN(input.generatedAt.getTime())) {
    throw new TypeError("renderAgreementPdf: generatedAt must be a valid Date");
  }
  const fonts = loadPdfFonts();
  const drawable = mapAgreementText(input, (text) => drawableText(text, fonts, MAX_FIELD_CHARS));
  const { metadata } = agreementWords(input);
  const doc = new PDFDocument({
    size: "A4",
    // The bottom margin includes the footer band, so text that flows onto a new page stays clear of it.
    margins: { top: MARGIN_TOP, bottom: MARGIN_BOTTOM + FOOTER_HEIGHT, left: MARGIN_X, right: MARGIN_X },
    bufferPages: true,
    lang: "en",
    displayTitle: true,
    info: {
      Title: metadata.title,
      Author: input.companyName,
      Subject: metadata.subject,
      Keywords: metadata.keywords,
      Creator: "billing-service",
      Producer: "billing-service (PDFKit)",
      CreationDate: input.generatedAt,
      ModDate: input.generatedAt,
    },
  });
  const chunks: Buffer[] = [];
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.registerFont(REGULAR, fonts.regular);
  doc.registerFont(BOLD, fonts.bold);
  doc.font(REGULAR);
  draw(doc, drawable);
  doc.end();
  return finished;
}
