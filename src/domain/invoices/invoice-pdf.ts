// An invoice as a PDF (docs/api.md, "Invoices", the PDF): seller, customer, number, period, dates, lines, totals,
// money per currency (formatMoney); a draft carries a DRAFT watermark, a void invoice VOID. Laid out with the
// agreement's PDF stack (platform/pdf-layout.ts, DejaVu Sans). A pure function of its input: the dates in
// the metadata come from `generatedAt`.
import { BOLD, drawableText, loadPdfFonts, REGULAR } from "../../platform/pdf-fonts.js";
import {
  COLOR_ACCENT,
  COLOR_MUTED,
  COLOR_TEXT,
  contentWidth,
  drawBanner,
  drawKeyValues,
  drawSummary,
  drawTable,
  MARGIN_X,
  paragraph,
  renderPdf,
  sectionHeading,
  type Doc,
  type TableColumn,
} from "../../platform/pdf-layout.js";
import { formatMoney } from "../kernel/money-format.js";
import { decimalWords } from "../contracts/rule-price-wording.js";

export interface InvoicePdfInput {
  sellerName: string;
  customer: { name: string; address: string | null; email: string | null };
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
    lines: {
      description: string;
      quantity: string;
      unitPrice: string;
      amount: string;
      /** A graduated or volume rule's line: each tier reached, its amount exact (invoice-figures.ts). */
      tiers?: { upTo: string | null; unitPrice: string; flat: string | null; quantity: string; amount: string }[];
      /** With tiers, when a monthly cap cut the line: charge total − Σ tier amounts, exact. */
      capAdjustment?: string;
    }[];
    subtotal: string;
    tax: string;
    total: string;
  };
  generatedAt: Date;
}

/** At most this many characters of one value, so that one absurd value cannot outgrow a page. */
const MAX_FIELD_CHARS = 200;
const UNIT_PRICE_DECIMALS = 12;

const WATERMARKS: Record<string, string> = { draft: "DRAFT", void: "VOID" };
const BANNERS: Record<string, string> = {
  draft: "DRAFT: not final, not yet due",
  void: "VOID: cancelled, not owed",
};

/** What the invoice says, in order: pure, so that its text is tested without a PDF. */
export function invoiceWords(input: InvoicePdfInput) {
  const { invoice, customer } = input;
  const money = (amount: string) => formatMoney(amount, invoice.currency);
  const statusLine: Record<string, string> = {
    draft: "Draft: this invoice may still change and is not yet due.",
    issued: `Due ${invoice.dueDate}.`,
    paid: `Paid ${invoice.paidDate ?? ""}. Thank you.`,
    void: "Void: this invoice has been cancelled and is not owed.",
  };
  return {
    title: `Invoice ${invoice.number}`,
    subtitle: `Billing period ${invoice.period.start} to ${invoice.period.end}`,
    status: statusLine[invoice.status] ?? invoice.status,
    parties: [
      { label: "From", lines: [input.sellerName] },
      {
        label: "Bill to",
        lines: [
          customer.name,
          ...(customer.address ? customer.address.split(/\r?\n/) : []),
          ...(customer.email ? [customer.email] : []),
        ],
      },
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
    lines: invoice.lines.flatMap((l) => [
      [
        l.description,
        decimalWords(l.quantity),
        formatMoney(l.unitPrice, invoice.currency, UNIT_PRICE_DECIMALS),
        money(l.amount),
      ],
      ...tierRows(l, invoice.currency),
    ]),
    noLines: "No charges in this period.",
    totals: [
      ["Subtotal", money(invoice.subtotal)],
      ["Tax", money(invoice.tax)],
      ["Total due", money(invoice.total)],
    ] as Array<[string, string]>,
    watermark: WATERMARKS[invoice.status] ?? null,
    banner: BANNERS[invoice.status] ?? null,
    footer: {
      generated: `Generated ${input.generatedAt.toISOString().slice(0, 10)} by ${input.sellerName}`,
      reference: `${invoice.number} · ${invoice.status}`,
      page: (page: number, pages: number) => `Page ${page} of ${pages}`,
    },
  };
}

/**
 * The sub-rows of a graduated or volume line: one per tier (its bounds, quantity, unit price, exact amount), then
 * the cap adjustment when a monthly cap cut the line. Tier amounts are exact, as the API gives them.
 */
function tierRows(line: InvoicePdfInput["invoice"]["lines"][number], currency: string): string[][] {
  const exact = (amount: string) => formatMoney(amount, currency, UNIT_PRICE_DECIMALS);
  const rows: string[][] = [];
  let lower: string | null = null;
  for (const tier of line.tiers ?? []) {
    const bounds =
      tier.upTo !== null
        ? `up to ${decimalWords(tier.upTo)}`
        : lower !== null
          ? `above ${decimalWords(lower)}`
          : "all units";
    const flat = tier.flat === null ? "" : ` (+ ${exact(tier.flat)} flat)`;
    rows.push([`    Tier ${bounds}${flat}`, decimalWords(tier.quantity), exact(tier.unitPrice), exact(tier.amount)]);
    if (tier.upTo !== null) lower = tier.upTo;
  }
  if (line.capAdjustment !== undefined) rows.push(["    Monthly cap", "", "", exact(line.capAdjustment)]);
  return rows;
}

type InvoiceWords = ReturnType<typeof invoiceWords>;

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

function drawParties(doc: Doc, parties: InvoiceWords["parties"]): void {
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

function draw(doc: Doc, words: InvoiceWords): void {
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
}

/** Renders the invoice as a PDF. The same input gives the same bytes. */
export async function renderInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  const fonts = loadPdfFonts();
  const text = (value: string) => drawableText(value, fonts, MAX_FIELD_CHARS);
  const words = invoiceWords(input);
  const drawable: InvoiceWords = {
    ...words,
    parties: words.parties.map((p) => ({ ...p, lines: p.lines.map(text) })),
    lines: words.lines.map((cells) => cells.map(text)),
  };
  return renderPdf(
    {
      title: words.title,
      author: input.sellerName,
      subject: `${words.title} for ${input.customer.name}`,
      keywords: "invoice",
      at: input.generatedAt,
    },
    { watermark: words.watermark, footer: words.footer },
    (doc) => draw(doc, drawable),
  );
}
