// The contract's "Usage-based services agreement" as a PDF: the layout of the words agreement-text.ts
// writes (parties, term, pricing table, minimum, footer), drawn with pdfkit in DejaVu Sans (embedded, subset;
// platform/pdf-fonts.ts) so accented, Greek, Cyrillic and other names DejaVu covers print as written;
// characters it lacks (CJK) are drawn as U+FFFD instead of failing, and the document metadata (Title,
// Author, Subject) keeps the exact text. The output is a pure function of the input: metadata dates come
// from `generatedAt`, nothing reads the clock.
import { BOLD, drawableText, loadPdfFonts, REGULAR } from "../../platform/pdf-fonts.js";
import {
  COLOR_ACCENT,
  COLOR_MUTED,
  COLOR_RULE,
  COLOR_TEXT,
  contentWidth,
  drawBanner,
  drawKeyValues,
  ensureSpace,
  MARGIN_X,
  paragraph,
  renderPdf,
  sectionHeading,
  type Doc,
} from "../../platform/pdf-layout.js";
import { drawTable, type TableColumn } from "../../platform/pdf-tables.js";
import {
  agreementWords,
  mapAgreementText,
  RULE_COLUMNS,
  type AgreementPdfInput,
  type AgreementWords,
  type RuleColumn,
} from "./agreement-text.js";

export type { AgreementPdfInput } from "./agreement-text.js";

/** At most this many characters of one value: one absurd value cannot outgrow a page (rows never split). */
const MAX_FIELD_CHARS = 200;

interface Column extends RuleColumn, TableColumn {}

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

/**
 * Points per column; the first column (the rule's name) takes what the others leave. Price fits "2.9% of
 * the event's value" and "1,234.56 USD per unit" on one line.
 */
const COLUMN_WIDTHS: Record<string, number> = { Type: 64, Metric: 88, Price: 111, "Monthly cap": 75, Counterparty: 74 };

/**
 * What the table keeps whole (TableColumn["keep"]): a cap is an amount, on one line; a price is words
 * around an amount, which breaks between the words only. Their columns widen for a long amount. A type is
 * one word, never broken, so that a row's first line holds a cell of every column it fills.
 */
const COLUMN_KEEPS: Record<string, TableColumn["keep"]> = { Type: "words", Price: "words", "Monthly cap": "line" };

function ruleColumns(totalWidth: number): Column[] {
  const used = RULE_COLUMNS.reduce((sum, c) => sum + (COLUMN_WIDTHS[c.header] ?? 0), 0);
  return RULE_COLUMNS.map((c, i) => {
    const keep = COLUMN_KEEPS[c.header];
    return { ...c, width: COLUMN_WIDTHS[c.header] ?? (i === 0 ? totalWidth - used : 0), ...(keep ? { keep } : {}) };
  });
}

function drawRulesTable(doc: Doc, input: AgreementPdfInput, words: AgreementWords): void {
  if (input.rules.length === 0) {
    paragraph(doc, words.noRules);
    return;
  }
  const columns = ruleColumns(contentWidth(doc));
  drawTable(
    doc,
    columns,
    input.rules.map((rule) => columns.map((c) => c.cell(rule, input))),
    words.pricingContinued,
  );
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
    doc
      .moveTo(x, lineY)
      .lineTo(x + width, lineY)
      .lineWidth(0.6)
      .strokeColor(COLOR_TEXT)
      .stroke();
    doc
      .font(BOLD)
      .fontSize(9.5)
      .fillColor(COLOR_TEXT)
      .text(signature.party, x, lineY + 5, { width });
    doc
      .font(REGULAR)
      .fontSize(8.5)
      .fillColor(COLOR_MUTED)
      .text(signature.line, x, doc.y + 1, { width });
  });
  doc.x = MARGIN_X;
  doc.y = top + blockHeight;
}

function draw(doc: Doc, input: AgreementPdfInput, words: AgreementWords): void {
  if (input.sample) drawBanner(doc, words.sampleBanner);
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
}

/** Renders the agreement as a PDF. The same input gives the same bytes. */
export async function renderAgreementPdf(input: AgreementPdfInput): Promise<Buffer> {
  if (!(input.generatedAt instanceof Date) || Number.isNaN(input.generatedAt.getTime())) {
    throw new TypeError("renderAgreementPdf: generatedAt must be a valid Date");
  }
  const fonts = loadPdfFonts();
  const drawable = mapAgreementText(input, (text) => drawableText(text, fonts, MAX_FIELD_CHARS));
  const { metadata } = agreementWords(input);
  const words = agreementWords(drawable);
  return renderPdf(
    {
      title: metadata.title,
      author: input.companyName,
      subject: metadata.subject,
      keywords: metadata.keywords,
      at: input.generatedAt,
    },
    { watermark: words.watermark, footer: words.footer },
    (doc) => draw(doc, drawable, words),
  );
}
