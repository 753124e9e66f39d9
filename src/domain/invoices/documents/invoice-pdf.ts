// An invoice as a PDF (docs/api.md, "Invoices", the PDF): the seller (name, address, tax id, logo), the customer
// (name, address, country, email, tax id), the memo or PO number, number, period, dates, lines worded by their
// rule (a cap, a rate, a pass-through fee), totals, payment instructions and the seller's footer, on Letter or
// A4; money per currency (formatMoney); a draft carries a DRAFT watermark, a void invoice VOID and "Nothing is
// due". How each line reads is invoice-pdf-lines.ts. Laid out with the agreement's PDF stack
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
import { formatMoney } from "../../kernel/money-format.js";
import { lineRows, type PdfLine } from "./invoice-pdf-lines.js";

/** Who bills: the account's profile, as the document shows it (frozen on an issued invoice). */
export interface PdfSeller {
  name: string;
  address: string | null;
  taxId: string | null;
  /** PNG or JPEG, drawn at the top right. */
  logo: { contentType: "image/png" | "image/jpeg"; bytes: Uint8Array } | null;
  paymentInstructions: string | null;
  footer: string | null;
}

/** Who is billed. */
export interface PdfCustomer {
  name: string;
  address: string | null;
  country: string | null;
  email: string | null;
  taxId: string | null;
}

export type PdfPaperSize = "letter" | "a4";

export interface InvoicePdfInput {
  seller: PdfSeller;
  customer: PdfCustomer;
  /** The customer's memo or PO number, printed as the invoice's reference. */
  memo: string | null;
  paperSize: PdfPaperSize;
  invoice: {
    number: string;
    status: string;
    currency: string;
    period: { start: string; end: string };
    issuedDate: string;
    dueDate: string;
    paidDate: string | null;
    contract: string;
    /** Decimals as text, as the invoice gives them. */
    lines: PdfLine[];
    subtotal: string;
    tax: string;
    total: string;
  };
  /** The document's date (the metadata's, the footer's): an issued invoice's issue time, a draft's last change. */
  generatedAt: Date;
}

/** At most this many characters of one value, so that one absurd value cannot outgrow a page. */
const MAX_FIELD_CHARS = 200;
/** Payment instructions and a footer are paragraphs: more room, still bounded. */
const MAX_PARAGRAPH_CHARS = 2000;

const WATERMARKS: Record<string, string> = { draft: "DRAFT", void: "VOID", paid: "PAID" };
const BANNERS: Record<string, string> = {
  draft: "DRAFT: not final, not yet due",
  void: "VOID: cancelled. Nothing is due.",
};

/** A multi-line text field (an address, a memo) as its lines, blank ones dropped. */
const textLines = (text: string | null): string[] =>
  text === null
    ? []
    : text
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l !== "");

/** The seller's block at the top left: name, address lines, tax id. */
export function sellerLines(seller: PdfSeller): string[] {
  return [seller.name, ...textLines(seller.address), ...(seller.taxId ? [`Tax ID: ${seller.taxId}`] : [])];
}

/** The customer's block: name, address lines, country, email, tax id. */
export function customerLines(customer: PdfCustomer): string[] {
  return [
    customer.name,
    ...textLines(customer.address),
    ...(customer.country ? [customer.country] : []),
    ...(customer.email ? [customer.email] : []),
    ...(customer.taxId ? [`Tax ID: ${customer.taxId}`] : []),
  ];
}

/** What the invoice says, in order: pure, so that its text is tested without a PDF. */
export function invoiceWords(input: InvoicePdfInput) {
  const { invoice, customer } = input;
  const money = (amount: string) => formatMoney(amount, invoice.currency);
  const statusLine: Record<string, string> = {
    draft: "Draft: this invoice may still change and is not yet due.",
    issued: `Due ${invoice.dueDate}.`,
    paid: `Paid ${invoice.paidDate ?? ""}. Thank you.`,
    void: "Void: this invoice has been cancelled. Nothing is due.",
  };
  const totalRows: Record<string, Array<[string, string]>> = {
    paid: [
      ["Total", money(invoice.total)],
      [`Paid ${invoice.paidDate ?? ""}`.trim(), money(invoice.total)],
    ],
    void: [
      ["Total (void)", money(invoice.total)],
      ["Nothing is due", money("0")],
    ],
  };
  const payable = invoice.status === "draft" || invoice.status === "issued";
  return {
    seller: sellerLines(input.seller),
    title: `Invoice ${invoice.number}`,
    subtitle: `Billing period ${invoice.period.start} to ${invoice.period.end}`,
    status: statusLine[invoice.status] ?? invoice.status,
    parties: [
      { label: "Bill to", lines: customerLines(customer) },
      ...(input.memo !== null && input.memo.trim() !== ""
        ? [{ label: "Reference (PO / memo)", lines: textLines(input.memo) }]
        : []),
    ],
    facts: [
      ["Invoice number", invoice.number],
      ["Contract", invoice.contract],
      ["Issue date", invoice.issuedDate],
      ["Due date", invoice.dueDate],
      ["Billing period", `${invoice.period.start} to ${invoice.period.end}`],
      ["Currency", invoice.currency],
    ] as Array<[string, string]>,
    lineHeaders: ["Description", "Quantity", "Unit price", "Amount"],
    lines: invoice.lines.flatMap((l) => lineRows(l, invoice.currency)),
    noLines: "No charges in this period.",
    totals: [
      ["Subtotal", money(invoice.subtotal)],
      ["Tax", money(invoice.tax)],
      ...(totalRows[invoice.status] ?? [["Total due", money(invoice.total)]]),
    ] as Array<[string, string]>,
    paymentInstructions: payable && input.seller.paymentInstructions ? input.seller.paymentInstructions : null,
    footerNote: input.seller.footer,
    watermark: WATERMARKS[invoice.status] ?? null,
    banner: BANNERS[invoice.status] ?? null,
    footer: {
      generated: `${input.seller.name} · ${input.generatedAt.toISOString().slice(0, 10)}`,
      reference: `${invoice.number} · ${invoice.status}`,
      page: (page: number, pages: number) => `Page ${page} of ${pages}`,
    },
  };
}

type InvoiceWords = ReturnType<typeof invoiceWords>;

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
      documentKey: `invoice ${input.invoice.number} ${input.invoice.status} ${input.generatedAt.toISOString()}`,
    },
    { watermark: words.watermark, footer: words.footer },
    (doc) => draw(doc, drawable, input.seller.logo),
  );
}
