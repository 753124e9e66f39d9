// The contract's "Usage-based services agreement" as a PDF: parties, term, pricing table, minimum, footer.
// Rendered with pdfkit and the DejaVu Sans font (embedded, subset) so accented, Greek, Cyrillic and other
// names DejaVu covers print as written; characters it lacks (CJK) are drawn as U+FFFD instead of failing,
// and the document metadata (Title, Author, Subject) keeps the exact text.
// The output is a pure function of the input: metadata dates come from `generatedAt`, nothing reads the clock.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { inflateSync } from "node:zlib";
import * as fontkit from "fontkit";
import PDFDocument from "pdfkit";
import { Big, fractionDigits, minorUnitExponent, parseDecimal } from "../kernel/money.js";

export interface AgreementPdfInput {
  companyName: string; // the seller (the account holder)
  customerName: string; // the buyer
  contractId: string; // external id, e.g. "acme-corp-test"
  contractNumber: string; // e.g. "CN-000001"
  startDate: string; // YYYY-MM-DD
  endDate: string | null; // YYYY-MM-DD or null (open-ended)
  currency: string; // ISO 4217, e.g. "USD"
  billingCadence: string; // "monthly"
  sample: boolean;
  programVersion: number;
  rules: Array<{
    id: string;
    name: string | null;
    type: string;
    model: string;
    amount?: string | null;
    rate?: string | null;
    metric?: string | null;
    frequency?: string | null;
    monthly_cap?: string | null;
    currency?: string | null;
    counterparty?: string | null;
  }>;
  minimumAmount: string | null; // monthly minimum, e.g. "1000.00", or null
  generatedAt: Date;
}

type Rule = AgreementPdfInput["rules"][number];
type Doc = PDFKit.PDFDocument;

const TITLE = "Usage-based services agreement";
const SAMPLE_MARK = "SAMPLE — for testing";

// ---------------------------------------------------------------------------------------------------------
// Fonts: the @fontsource package ships the full DejaVu Sans glyph set as WOFF, which fontkit reads.

const FONT_FILES = {
  regular: "@fontsource/dejavu-sans/files/dejavu-sans-latin-400-normal.woff",
  bold: "@fontsource/dejavu-sans/files/dejavu-sans-latin-700-normal.woff",
} as const;

interface LoadedFonts {
  regular: Buffer;
  bold: Buffer;
  /** Whether both faces have a glyph for the code point. */
  covers(codePoint: number): boolean;
}

let fontCache: LoadedFonts | undefined;

/**
 * A WOFF 1.0 font as the TrueType/OpenType file it wraps: each table is inflated once with node's zlib.
 * fontkit can read WOFF itself, but it inflates tables with a pure-JavaScript inflater on every access,
 * which makes laying out and subsetting DejaVu take seconds per document; from the sfnt it takes milliseconds.
 */
function woffToSfnt(woff: Buffer): Buffer {
  if (woff.toString("latin1", 0, 4) !== "wOFF") throw new Error("not a WOFF 1.0 font");
  const flavor = woff.readUInt32BE(4);
  const numTables = woff.readUInt16BE(12);
  const tables: Array<{ tag: number; checksum: number; data: Buffer }> = [];
  for (let i = 0; i < numTables; i++) {
    const entry = 44 + i * 20;
    const offset = woff.readUInt32BE(entry + 4);
    const compLength = woff.readUInt32BE(entry + 8);
    const origLength = woff.readUInt32BE(entry + 12);
    const stored = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? inflateSync(stored) : Buffer.from(stored);
    if (data.length !== origLength) throw new Error("WOFF table has the wrong length");
    tables.push({ tag: woff.readUInt32BE(entry), checksum: woff.readUInt32BE(entry + 16), data });
  }
  tables.sort((a, b) => a.tag - b.tag);
  const pad4 = (n: number): number => (n + 3) & ~3;
  const headerLength = 12 + 16 * numTables;
  const out = Buffer.alloc(tables.reduce((sum, t) => sum + pad4(t.data.length), headerLength));
  let pow2 = 1;
  let log2 = 0;
  while (pow2 * 2 <= numTables) {
    pow2 *= 2;
    log2 += 1;
  }
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(numTables, 4);
  out.writeUInt16BE(pow2 * 16, 6);
  out.writeUInt16BE(log2, 8);
  out.writeUInt16BE(numTables * 16 - pow2 * 16, 10);
  let offset = headerLength;
  tables.forEach((table, i) => {
    const entry = 12 + i * 16;
    out.writeUInt32BE(table.tag, entry);
    out.writeUInt32BE(table.checksum, entry + 4);
    out.writeUInt32BE(offset, entry + 8);
    out.writeUInt32BE(table.data.length, entry + 12);
    table.data.copy(out, offset);
    offset += pad4(table.data.length);
  });
  return out;
}

function openFont(data: Buffer, file: string): fontkit.Font {
  const font = fontkit.create(data);
  if (!("hasGlyphForCodePoint" in font)) throw new Error(`${file} is a font collection, expected a single font`);
  return font;
}

function loadFonts(): LoadedFonts {
  if (fontCache === undefined) {
    const require = createRequire(import.meta.url);
    const regular = woffToSfnt(readFileSync(require.resolve(FONT_FILES.regular)));
    const bold = woffToSfnt(readFileSync(require.resolve(FONT_FILES.bold)));
    const faces = [openFont(regular, FONT_FILES.regular), openFont(bold, FONT_FILES.bold)];
    const known = new Map<number, boolean>();
    fontCache = {
      regular,
      bold,
      covers(codePoint) {
        let covered = known.get(codePoint);
        if (covered === undefined) {
          covered = faces.every((face) => face.hasGlyphForCodePoint(codePoint));
          known.set(codePoint, covered);
        }
        return covered;
      },
    };
  }
  return fontCache;
}

const MAX_FIELD_CHARS = 200;

/** Shown in place of a character DejaVu Sans has no glyph for (CJK, for one). */
const REPLACEMENT = "\uFFFD";

/**
 * Text as it can be drawn: characters the font lacks become U+FFFD and control characters become spaces.
 * (pdfkit would draw a missing character with the font's .notdef glyph, but it declares that glyph's width
 * unscaled for fonts whose units per em are not 1000, as DejaVu's 2048 are, so the line overflows.)
 */
function drawable(text: string, fonts: LoadedFonts): string {
  let out = "";
  let count = 0;
  for (const ch of text) {
    // Bounded so one absurd value cannot outgrow a page (a table row is never split across pages).
    if (++count > MAX_FIELD_CHARS) return `${out}…`;
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) out += " ";
    else if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0xfe0f || fonts.covers(cp)) out += ch;
    else out += REPLACEMENT;
  }
  return out;
}

function drawableInput(input: AgreementPdfInput, fonts: LoadedFonts): AgreementPdfInput {
  const d = (text: string): string => drawable(text, fonts);
  const dn = (text: string | null | undefined): string | null | undefined =>
    text === null || text === undefined ? text : d(text);
  return {
    ...input,
    companyName: input.companyName.trim() === "" ? "Provider" : d(input.companyName),
    customerName: input.customerName.trim() === "" ? "Customer" : d(input.customerName),
    contractId: d(input.contractId),
    contractNumber: d(input.contractNumber),
    startDate: d(input.startDate),
    endDate: input.endDate === null ? null : d(input.endDate),
    currency: d(input.currency),
    billingCadence: d(input.billingCadence),
    minimumAmount: input.minimumAmount === null ? null : d(input.minimumAmount),
    rules: input.rules.map((rule) => ({
      ...rule,
      id: d(rule.id),
      name: rule.name === null ? null : d(rule.name),
      type: d(rule.type),
      model: d(rule.model),
      amount: dn(rule.amount),
      rate: dn(rule.rate),
      metric: dn(rule.metric),
      frequency: dn(rule.frequency),
      monthly_cap: dn(rule.monthly_cap),
      currency: dn(rule.currency),
      counterparty: dn(rule.counterparty),
    })),
  };
}

const REGULAR = "DejaVuSans";
const BOLD = "DejaVuSans-Bold";

// ---------------------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------------------
// Formatting (pure, locale-independent so the document is stable).

const MONTHS = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];

/** "2025-01-31" → "31 January 2025"; anything else is shown as given. */
function formatDate(date: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (m === null) return date;
  const month = MONTHS[Number(m[2]) - 1];
  if (month === undefined) return date;
  return `${Number(m[3])} ${month} ${m[1]}`;
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** UTC timestamp "2025-01-31 14:05 UTC". */
function formatTimestamp(at: Date): string {
  return (
    `${at.getUTCFullYear()}-${pad2(at.getUTCMonth() + 1)}-${pad2(at.getUTCDate())} ` +
    `${pad2(at.getUTCHours())}:${pad2(at.getUTCMinutes())} UTC`
  );
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * "1000" in USD → "USD 1,000.00". At least the currency's minor-unit digits; more when the amount has
 * them (a per-unit price of 0.0025 keeps all its digits). Unparseable text is shown as given.
 */
function formatMoney(amount: string, currency: string): string {
  const value = parseDecimal(amount.trim());
  if (value === undefined) return `${currency} ${amount}`.trim();
  const digits = Math.max(minorUnitExponent(currency), fractionDigits(value));
  const fixed = value.abs().toFixed(digits);
  const [whole = "0", frac] = fixed.split(".");
  const sign = value.lt(0) ? "-" : "";
  return `${currency} ${sign}${groupThousands(whole)}${frac === undefined ? "" : `.${frac}`}`;
}

/** A fraction as a percentage: "0.05" → "5%", "0.0125" → "1.25%". Unparseable text is shown as given. */
function formatPercent(rate: string): string {
  const value = parseDecimal(rate.trim());
  if (value === undefined) return rate;
  return `${new Big(value).times(100).toFixed()}%`;
}

function humanize(word: string): string {
  const text = word.replace(/[_-]+/g, " ").trim();
  return text.length === 0 ? text : text.charAt(0).toUpperCase() + text.slice(1);
}

function frequencySuffix(frequency: string | null | undefined): string {
  switch ((frequency ?? "monthly").toLowerCase()) {
    case "monthly":
      return " / month";
    case "quarterly":
      return " / quarter";
    case "yearly":
    case "annual":
    case "annually":
      return " / year";
    case "weekly":
      return " / week";
    case "daily":
      return " / day";
    default:
      return ` (${frequency})`;
  }
}

/** The price cell of a rule: flat amounts as money, percentage rules as a percent. */
function describePrice(rule: Rule, contractCurrency: string): string {
  const currency = rule.currency ?? contractCurrency;
  const amount = rule.amount ?? null;
  const rate = rule.rate ?? null;
  if (rule.model === "percentage") {
    if (rate !== null) return formatPercent(rate);
    return amount !== null ? formatMoney(amount, currency) : "—";
  }
  if (amount !== null) {
    const money = formatMoney(amount, currency);
    switch (rule.type) {
      case "subscription":
      case "minimum":
        return money + frequencySuffix(rule.frequency);
      case "usage":
        return `${money} / unit`;
      case "one_time":
      case "one-time":
        return `${money} one-time`;
      default:
        return money;
    }
  }
  return rate !== null ? formatPercent(rate) : "—";
}

// ---------------------------------------------------------------------------------------------------------
// Drawing helpers.

interface Column {
  header: string;
  width: number;
  align?: "left" | "right";
  cell(rule: Rule, input: AgreementPdfInput): string;
}

function contentWidth(doc: Doc): number {
  return doc.page.width - MARGIN_X * 2;
}

/** The lowest y that body content may reach on the current page (the footer sits below it). */
function bodyBottom(doc: Doc): number {
  return doc.page.maxY();
}

function drawWatermark(doc: Doc): void {
  const { width, height } = doc.page;
  doc.save();
  doc.rotate(-35, { origin: [width / 2, height / 2] });
  doc.font(BOLD).fontSize(96).fillColor(COLOR_SAMPLE).fillOpacity(0.06);
  const text = "SAMPLE";
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

function drawSampleBanner(doc: Doc): void {
  const width = contentWidth(doc);
  const y = doc.y;
  const height = 22;
  doc.save();
  doc.roundedRect(MARGIN_X, y, width, height, 3).lineWidth(0.8).fillAndStroke(COLOR_SAMPLE_FILL, COLOR_SAMPLE);
  doc.restore();
  doc.font(BOLD).fontSize(9.5).fillColor(COLOR_SAMPLE);
  doc.text(`${SAMPLE_MARK} · not a binding agreement`, MARGIN_X, y + 6, { width, align: "center", lineBreak: false });
  doc.y = y + height + 12;
}

function drawTitle(doc: Doc, input: AgreementPdfInput): void {
  const width = contentWidth(doc);
  doc.font(BOLD).fontSize(21).fillColor(COLOR_ACCENT).text(TITLE, MARGIN_X, doc.y, { width });
  doc.moveDown(0.15);
  doc.font(REGULAR).fontSize(10).fillColor(COLOR_MUTED);
  doc.text(`Contract ${input.contractNumber}  ·  ID ${input.contractId}`, MARGIN_X, doc.y, { width });
  doc.y += 10;
}

function drawParties(doc: Doc, input: AgreementPdfInput): void {
  const gutter = 16;
  const boxWidth = (contentWidth(doc) - gutter) / 2;
  const pad = 10;
  const parties: Array<{ label: string; name: string; role: string }> = [
    { label: "Provider", name: input.companyName, role: "supplies the metered services (“Provider”)" },
    { label: "Customer", name: input.customerName, role: "receives and pays for them (“Customer”)" },
  ];
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

function ruleColumns(totalWidth: number): Column[] {
  const fixed: Column[] = [
    { header: "Type", width: 64, cell: (r) => humanize(r.type) },
    { header: "Metric", width: 88, cell: (r) => r.metric ?? "—" },
    { header: "Price", width: 98, cell: (r, input) => describePrice(r, input.currency) },
    {
      header: "Monthly cap",
      width: 78,
      cell: (r, input) => (r.monthly_cap == null ? "—" : formatMoney(r.monthly_cap, r.currency ?? input.currency)),
    },
    { header: "Counterparty", width: 74, cell: (r) => r.counterparty ?? "—" },
  ];
  const used = fixed.reduce((sum, c) => sum + c.width, 0);
  return [{ header: "Name", width: totalWidth - used, cell: (r) => r.name ?? r.id }, ...fixed];
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

function drawRulesTable(doc: Doc, input: AgreementPdfInput): void {
  const columns = ruleColumns(contentWidth(doc));
  const headers = columns.map((c) => c.header);
  const headerHeight = rowHeight(doc, headers, columns, BOLD);

  const drawHeader = (): void => {
    const y = doc.y;
    drawRow(doc, headers, columns, { y, height: headerHeight, font: BOLD, color: COLOR_ACCENT, fill: COLOR_HEADER_FILL });
    doc.y = y + headerHeight;
  };

  if (input.rules.length === 0) {
    paragraph(doc, "This agreement has no pricing rules yet.");
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
      doc.text("Pricing (continued)", MARGIN_X, doc.y, { lineBreak: false });
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

function drawSignatures(doc: Doc, input: AgreementPdfInput): void {
  const gutter = 28;
  const width = (contentWidth(doc) - gutter) / 2;
  doc.font(BOLD).fontSize(9.5);
  const nameHeight = Math.max(
    doc.heightOfString(`For ${input.companyName}`, { width }),
    doc.heightOfString(`For ${input.customerName}`, { width }),
  );
  const blockHeight = 24 + 5 + nameHeight + 13;
  ensureSpace(doc, blockHeight + 4);
  const top = doc.y + 4;
  const parties = [input.companyName, input.customerName];
  parties.forEach((name, i) => {
    const x = MARGIN_X + i * (width + gutter);
    const lineY = top + 24;
    doc.moveTo(x, lineY).lineTo(x + width, lineY).lineWidth(0.6).strokeColor(COLOR_TEXT).stroke();
    doc.font(BOLD).fontSize(9.5).fillColor(COLOR_TEXT).text(`For ${name}`, x, lineY + 5, { width });
    doc.font(REGULAR).fontSize(8.5).fillColor(COLOR_MUTED).text("Name, title and date", x, doc.y + 1, { width });
  });
  doc.x = MARGIN_X;
  doc.y = top + blockHeight;
}

/** Watermark and footer on every page, drawn once the page count is known. */
function drawPageDecorations(doc: Doc, input: AgreementPdfInput): void {
  const range = doc.bufferedPageRange();
  const generated = `Generated ${formatTimestamp(input.generatedAt)}  ·  Pricing program version ${input.programVersion}`;
  for (let i = 0; i < range.count; i += 1) {
    doc.switchToPage(range.start + i);
    if (input.sample) drawWatermark(doc);
    const { width, height } = doc.page;
    // Writing below the bottom margin would make pdfkit start a new page; the footer is placed by hand.
    const savedBottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const lineY = height - MARGIN_BOTTOM - FOOTER_HEIGHT + 14;
    doc.moveTo(MARGIN_X, lineY).lineTo(width - MARGIN_X, lineY).lineWidth(0.5).strokeColor(COLOR_RULE).stroke();
    const textY = lineY + 8;
    const innerWidth = width - MARGIN_X * 2;
    doc.font(REGULAR).fontSize(7.5).fillColor(COLOR_MUTED);
    doc.text(generated, MARGIN_X, textY, { width: innerWidth, align: "left", lineBreak: false });
    doc.text(`Page ${i + 1} of ${range.count}`, MARGIN_X, textY, { width: innerWidth, align: "right", lineBreak: false });
    const second = `${input.contractNumber} · ${input.contractId}${input.sample ? `  ·  ${SAMPLE_MARK}` : ""}`;
    doc.fillColor(input.sample ? COLOR_SAMPLE : COLOR_MUTED);
    doc.text(second, MARGIN_X, textY + 11, { width: innerWidth, align: "left", lineBreak: false });
    doc.page.margins.bottom = savedBottom;
  }
}

function draw(doc: Doc, input: AgreementPdfInput): void {
  doc.x = MARGIN_X;
  doc.y = MARGIN_TOP;
  if (input.sample) drawSampleBanner(doc);
  drawTitle(doc, input);

  drawParties(doc, input);
  paragraph(
    doc,
    `This agreement sets out the prices at which ${input.companyName} provides usage-based services to ` +
      `${input.customerName} under contract ${input.contractNumber}. Usage is reported against the contract ID ` +
      `${input.contractId}, rated when it is received, and billed on the terms below.`,
    { gap: 8 },
  );

  sectionHeading(doc, "Key terms");
  const term =
    input.endDate === null
      ? `${formatDate(input.startDate)} – open-ended`
      : `${formatDate(input.startDate)} – ${formatDate(input.endDate)}`;
  drawKeyValues(doc, [
    ["Contract ID", input.contractId],
    ["Currency", input.currency],
    ["Contract number", input.contractNumber],
    ["Billing cadence", humanize(input.billingCadence)],
    ["Term", term],
    ["Monthly minimum", input.minimumAmount === null ? "None" : formatMoney(input.minimumAmount, input.currency)],
    ["Pricing program", `Version ${input.programVersion}`],
  ]);

  sectionHeading(doc, "Pricing");
  drawRulesTable(doc, input);

  sectionHeading(doc, "Terms");
  const cadence = input.billingCadence.toLowerCase();
  const clauses = [
    `1. Charges. Flat usage prices apply to each unit of the named metric; percentage prices apply their rate ` +
      `to the reported quantity. Subscription prices recur for each billing period. Where a monthly cap is ` +
      `shown, that rule's charges in a calendar month do not exceed it. A rule scoped to a counterparty ` +
      `applies only to usage with that counterparty.`,
    input.minimumAmount === null
      ? `2. Minimum. No monthly minimum commitment applies.`
      : `2. Minimum. Customer commits to a minimum of ${formatMoney(input.minimumAmount, input.currency)} per ` +
        `month. When a month's charges are lower, the difference is invoiced as a minimum charge.`,
    `3. Invoicing. Invoices are issued ${cadence === "monthly" ? "monthly" : `on a ${cadence} cadence`} in ` +
      `${input.currency} and list subscription fees, usage charges and any minimum charge.`,
    input.endDate === null
      ? `4. Term. This agreement starts on ${formatDate(input.startDate)} and continues until terminated.`
      : `4. Term. This agreement starts on ${formatDate(input.startDate)} and ends on ${formatDate(input.endDate)}.`,
  ];
  for (const clause of clauses) paragraph(doc, clause, { size: 9, gap: 4 });
  doc.y += 8;

  drawSignatures(doc, input);
  drawPageDecorations(doc, input);
}

/** Renders the agreement as a PDF. The same input gives the same bytes. */
export async function renderAgreementPdf(input: AgreementPdfInput): Promise<Buffer> {
  if (!(input.generatedAt instanceof Date) || Number.isNaN(input.generatedAt.getTime())) {
    throw new TypeError("renderAgreementPdf: generatedAt must be a valid Date");
  }
  const fonts = loadFonts();
  const doc = new PDFDocument({
    size: "A4",
    // The bottom margin includes the footer band, so text that flows onto a new page stays clear of it.
    margins: { top: MARGIN_TOP, bottom: MARGIN_BOTTOM + FOOTER_HEIGHT, left: MARGIN_X, right: MARGIN_X },
    bufferPages: true,
    lang: "en",
    displayTitle: true,
    info: {
      Title: `${TITLE} ${input.contractNumber}${input.sample ? " (SAMPLE)" : ""}`,
      Author: input.companyName,
      Subject: `Contract ${input.contractNumber} (${input.contractId}) between ${input.companyName} and ${input.customerName}`,
      Keywords: [input.contractId, input.contractNumber, ...(input.sample ? ["sample"] : [])].join(", "),
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
  draw(doc, drawableInput(input, fonts));
  doc.end();
  return finished;
}
