// An invoice as a PDF (docs/api.md, "Invoices", the PDF): the seller (name, address, tax id, logo), the customer
// (name, address, country, email, tax id), the memo or PO number, number, period, dates, lines worded by their
// rule (a cap, a rate, a pass-through fee), totals, payments and credit notes, the amount due, payment
// instructions and the seller's footer, on Letter or A4; a draft carries a DRAFT watermark, a void invoice VOID
// and "Nothing is due". What it says is invoice-words.ts (shared with the hosted page and the email); how each
// line reads is invoice-pdf-lines.ts. Laid out with the agreement's PDF stack
// (platform/pdf-layout.ts and pdf-tables.ts, DejaVu Sans). A pure function of its input: the dates in the
// metadata come from `generatedAt`, the file identifier from the invoice.
import { BOLD, drawableText, loadPdfFonts, REGULAR } from "../../../platform/pdf-fonts.js";
import {
  COLOR_ACCENT,
  COLOR_MUTED,
  COLOR_TEXT,
  contentWidth,
  drawBanner,
  drawImage,
  drawKeyValues,
  MARGIN_X,
  paragraph,
  renderPdf,
  sectionHeading,
  type Doc,
} from "../../../platform/pdf-layout.js";
import { drawSummary, drawTable, type TableColumn } from "../../../platform/pdf-tables.js";
import { LOGO_BOX } from "../../account/logo-image.js";
import { type InvoicePdfInput, type InvoiceWords, invoiceWords, type PdfSeller } from "./invoice-words.js";

/** At most this many characters of one value, so that one absurd value cannot outgrow a page. */
const MAX_FIELD_CHARS = 200;
/** Payment instructions and a footer are paragraphs: more room, still bounded. */
const MAX_PARAGRAPH_CHARS = 2000;

/**
 * The seller at the top left (name in bold, address lines, tax id) and the logo, when set, at the top right.
 * A logo pdfkit cannot read is left out rather than failing the document (the account checked it whole).
 */
export function drawSellerHead(doc: Doc, lines: string[], logo: PdfSeller["logo"]): void {
  const width = contentWidth(doc);
  const top = doc.y;
  let bottom = top;
  if (logo !== null) {
    try {
      drawImage(doc, logo.bytes, { x: MARGIN_X + width - LOGO_BOX.width, y: top, ...LOGO_BOX });
      bottom = top + LOGO_BOX.height;
    } catch {
      // Not drawable: the invoice without it.
    }
  }
  const textWidth = logo === null ? width : width - LOGO_BOX.width - 16;
  doc.y = top;
  lines.forEach((line, n) => {
    doc
      .font(n === 0 ? BOLD : REGULAR)
      .fontSize(n === 0 ? 12 : 9)
      .fillColor(n === 0 ? COLOR_TEXT : COLOR_MUTED)
      .text(line, MARGIN_X, doc.y + (n === 0 ? 0 : 1), { width: textWidth });
  });
  doc.x = MARGIN_X;
  doc.y = Math.max(bottom, doc.y) + 14;
}

function drawHeader(doc: Doc, words: InvoiceWords): void {
  const width = contentWidth(doc);
  if (words.banner !== null) drawBanner(doc, words.banner);
  doc.font(BOLD).fontSize(21).fillColor(COLOR_ACCENT).text(words.title, MARGIN_X, doc.y, { width });
  doc
    .font(REGULAR)
    .fontSize(10)
    .fillColor(COLOR_MUTED)
    .text(words.subtitle, MARGIN_X, doc.y + 2, { width });
  doc
    .font(BOLD)
    .fontSize(10)
    .fillColor(COLOR_TEXT)
    .text(words.status, MARGIN_X, doc.y + 4, { width });
  doc.y += 12;
}

/** Labelled blocks side by side (the customer billed, the reference): a label, then lines, the first in bold. */
export function drawParties(doc: Doc, parties: { label: string; lines: string[] }[]): void {
  const gutter = 16;
  const width = (contentWidth(doc) - gutter) / 2;
  const top = doc.y;
  let bottom = top;
  parties.forEach((party, i) => {
    const x = MARGIN_X + i * (width + gutter);
    doc
      .font(BOLD)
      .fontSize(7.5)
      .fillColor(COLOR_MUTED)
      .text(party.label.toUpperCase(), x, top, { width, characterSpacing: 0.4 });
    party.lines.forEach((line, n) => {
      doc
        .font(n === 0 ? BOLD : REGULAR)
        .fontSize(n === 0 ? 11 : 9.5)
        .fillColor(COLOR_TEXT)
        .text(line, x, doc.y + 2, { width });
    });
    bottom = Math.max(bottom, doc.y);
  });
  doc.x = MARGIN_X;
  doc.y = bottom + 14;
}

function draw(doc: Doc, words: InvoiceWords, logo: PdfSeller["logo"]): void {
  drawSellerHead(doc, words.seller, logo);
  drawHeader(doc, words);
  drawParties(doc, words.parties);
  drawKeyValues(doc, words.facts);
  sectionHeading(doc, "Charges");
  if (words.lines.length === 0) paragraph(doc, words.noLines);
  else {
    const width = contentWidth(doc);
    const columns: TableColumn[] = [
      { header: words.lineHeaders[0]!, width: width - 86 - 120 - 100 },
      { header: words.lineHeaders[1]!, width: 86, align: "right", keep: "line" },
      { header: words.lineHeaders[2]!, width: 120, align: "right", keep: "line" },
      { header: words.lineHeaders[3]!, width: 100, align: "right", keep: "line" },
    ];
    drawTable(doc, columns, words.lines, `Charges of ${words.title}, continued`);
  }
  drawSummary(doc, words.totals);
  if (words.paymentInstructions !== null) {
    sectionHeading(doc, "How to pay");
    paragraph(doc, words.paymentInstructions);
  }
  if (words.footerNote) {
    doc.y += 8;
    paragraph(doc, words.footerNote, { size: 8 });
  }
}

/** Text as it can be drawn, bounded (drawableText with the document's fonts). */
export function drawableWith(maxChars = MAX_FIELD_CHARS): (value: string) => string {
  const fonts = loadPdfFonts();
  return (value) => drawableText(value, fonts, maxChars);
}

/**
 * What an invoice and a credit note both print from their words, made drawable: the seller's lines, the parties'
 * lines and the line cells (bounded as a field), the footer note (as a paragraph).
 */
export function drawableParts<P extends { lines: string[] }>(
  words: { seller: string[]; parties: P[]; lines: string[][]; footerNote: string | null },
  text: (value: string) => string,
  long: (value: string) => string,
) {
  return {
    seller: words.seller.map(text),
    parties: words.parties.map((p) => ({ ...p, lines: p.lines.map(text) })),
    lines: words.lines.map((cells) => cells.map(text)),
    footerNote: words.footerNote === null ? null : long(words.footerNote),
  };
}

/** The balance's part of the file identifier: nothing while nothing was paid or credited (the bytes stay as before). */
function balanceKey({ balance }: InvoicePdfInput): string {
  if (!balance || (balance.payments.length === 0 && balance.creditNotes.length === 0)) return "";
  return ` ${balance.payments.length} ${balance.creditNotes.length} ${balance.amountDue}`;
}

/**
 * Renders the invoice as a PDF on the seller's paper size. The same input gives the same bytes: the metadata's
 * dates are `generatedAt`, and the file identifier derives from the invoice's number, status and that date.
 */
export async function renderInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  const text = drawableWith();
  const long = drawableWith(MAX_PARAGRAPH_CHARS);
  const words = invoiceWords(input);
  const drawable: InvoiceWords = {
    ...words,
    ...drawableParts(words, text, long),
    paymentInstructions: words.paymentInstructions === null ? null : long(words.paymentInstructions),
  };
  return renderPdf(
    {
      title: words.title,
      author: input.seller.name,
      subject: `${words.title} for ${input.customer.name}`,
      keywords: "invoice",
      at: input.generatedAt,
      size: input.paperSize,
      // What was paid and credited changes the document (its balance), so it changes the file's identifier too.
      documentKey: `invoice ${input.invoice.number} ${input.invoice.status} ${input.generatedAt.toISOString()}${balanceKey(input)}`,
    },
    { watermark: words.watermark, footer: words.footer },
    (doc) => draw(doc, drawable, input.seller.logo),
  );
}
