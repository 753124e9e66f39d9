// A credit note as a PDF (docs/api.md, "Credit notes"): the seller and the customer as on the invoice it
// credits, its number, the invoice's number, the date, the reason, the lines credited and how the amount was
// used (taken off the invoice's amount due, left on the customer's credit balance). The invoice's look
// (invoice-pdf.ts, platform/pdf-layout.ts). A pure function of its input, as renderInvoicePdf: the same input
// gives the same bytes.
import {
  COLOR_ACCENT,
  COLOR_MUTED,
  contentWidth,
  drawKeyValues,
  MARGIN_X,
  paragraph,
  renderPdf,
  sectionHeading,
  type Doc,
} from "../../../platform/pdf-layout.js";
import { drawSummary, drawTable, type TableColumn } from "../../../platform/pdf-tables.js";
import { BOLD, REGULAR } from "../../../platform/pdf-fonts.js";
import { DEFAULT_LOCALE, documentMoney, formatDate } from "../../kernel/document-format.js";
import { drawableParts, drawableWith, drawParties, drawSellerHead } from "./invoice-pdf.js";
import { customerLines, sellerLines, type PdfCustomer, type PdfPaperSize, type PdfSeller } from "./invoice-words.js";

export interface CreditNotePdfInput {
  seller: PdfSeller;
  customer: PdfCustomer;
  creditNote: {
    /** CN-000001 */
    number: string;
    /** The invoice it credits. */
    invoiceNumber: string;
    issuedDate: string;
    currency: string;
    reason: string;
    /** Decimals as text: what each credited line gives back. */
    lines: { description: string; amount: string }[];
    amount: string;
    /** What it took off the invoice's amount due. */
    appliedToDue: string;
    /** What it left on the customer's credit balance. */
    toBalance: string;
  };
  paperSize: PdfPaperSize;
  /** How dates and money are written (BCP 47): the invoice's; en-US when unset. */
  locale?: string;
  /** The metadata's date: the credit note's issue time, so that every download is the same file. */
  generatedAt: Date;
}

/** What the credit note says, in order: pure, so that its text is tested without a PDF. */
export function creditNoteWords(input: CreditNotePdfInput) {
  const note = input.creditNote;
  const locale = input.locale ?? DEFAULT_LOCALE;
  const money = (amount: string) => documentMoney(amount, note.currency, locale);
  const issued = formatDate(note.issuedDate, locale);
  return {
    seller: sellerLines(input.seller),
    title: `Credit note ${note.number}`,
    subtitle: `Credits invoice ${note.invoiceNumber}`,
    parties: [{ label: "Credited to", lines: customerLines(input.customer) }],
    facts: [
      ["Credit note", note.number],
      ["Invoice", note.invoiceNumber],
      ["Issue date", issued],
      ["Currency", note.currency],
    ] as Array<[string, string]>,
    reason: `Reason: ${note.reason}`,
    lineHeaders: ["Description", "Amount"],
    lines: note.lines.map((l) => [l.description, money(l.amount)]),
    totals: [
      ["Taken off the invoice's amount due", money(note.appliedToDue)],
      ["Added to your credit balance", money(note.toBalance)],
      ["Total credited", money(note.amount)],
    ] as Array<[string, string]>,
    footerNote: input.seller.footer,
    footer: {
      generated: `${input.seller.name} · ${issued}`,
      reference: `${note.number} · credits ${note.invoiceNumber}`,
      page: (page: number, pages: number) => `Page ${page} of ${pages}`,
    },
  };
}

type CreditNoteWords = ReturnType<typeof creditNoteWords>;

function draw(doc: Doc, words: CreditNoteWords, logo: PdfSeller["logo"]): void {
  const width = contentWidth(doc);
  drawSellerHead(doc, words.seller, logo);
  doc.font(BOLD).fontSize(21).fillColor(COLOR_ACCENT).text(words.title, MARGIN_X, doc.y, { width });
  doc
    .font(REGULAR)
    .fontSize(10)
    .fillColor(COLOR_MUTED)
    .text(words.subtitle, MARGIN_X, doc.y + 2, { width });
  doc.y += 12;
  drawParties(doc, words.parties);
  drawKeyValues(doc, words.facts);
  paragraph(doc, words.reason);
  sectionHeading(doc, "Credited");
  const columns: TableColumn[] = [
    { header: words.lineHeaders[0]!, width: width - 140 },
    { header: words.lineHeaders[1]!, width: 140, align: "right", keep: "line" },
  ];
  drawTable(doc, columns, words.lines, `Lines of ${words.title}, continued`);
  drawSummary(doc, words.totals);
  if (words.footerNote) {
    doc.y += 8;
    paragraph(doc, words.footerNote, { size: 8 });
  }
}

/** Renders a credit note as a PDF on the seller's paper size. The same input gives the same bytes. */
export async function renderCreditNotePdf(input: CreditNotePdfInput): Promise<Buffer> {
  const text = drawableWith();
  const long = drawableWith(2000);
  const words = creditNoteWords(input);
  const drawable: CreditNoteWords = {
    ...words,
    ...drawableParts(words, text, long),
    reason: long(words.reason),
  };
  return renderPdf(
    {
      title: words.title,
      author: input.seller.name,
      subject: `${words.title} for ${input.customer.name}`,
      keywords: "credit note",
      at: input.generatedAt,
      size: input.paperSize,
      documentKey: `credit note ${input.creditNote.number} ${input.generatedAt.toISOString()}`,
    },
    { watermark: null, footer: words.footer },
    (doc) => draw(doc, drawable, input.seller.logo),
  );
}
