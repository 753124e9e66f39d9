// What an invoice's documents say, in order (docs/api.md, "Invoices", the PDF and the hosted page): pure, so that
// the PDF (invoice-pdf.ts draws these words), the hosted page (which writes them as HTML) and the email (which
// takes its figures from them) say the same thing, and so that the text is tested without a PDF. Dates and money
// are written for people in the seller's locale (kernel/document-format.ts); the figures at issue come from the
// frozen snapshot, the balance under them (payments, credit notes, amount due) from the records as they stand
// when the words are made (docs/decisions.md, "Invoice documents").
import { DEFAULT_LOCALE, documentMoney, dueWords, formatDate } from "../../kernel/document-format.js";
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

/** What was received or credited on an issued invoice, as it stands when the document is made. */
export interface DocumentBalance {
  /** Oldest first. Money as decimal text with the currency's minor unit. */
  payments: { paidOn: string; method: string; reference: string | null; amount: string }[];
  /** Oldest first: what each credit note credited. */
  creditNotes: { number: string; issuedDate: string; amount: string }[];
  /** What is still owed now (amountDue, invoice-amounts.ts: the API's `amount_due`). */
  amountDue: string;
}

export interface InvoicePdfInput {
  seller: PdfSeller;
  customer: PdfCustomer;
  /** The customer's memo or PO number, printed as the invoice's reference. */
  memo: string | null;
  paperSize: PdfPaperSize;
  /** How dates and money are written (BCP 47); en-US when unset. */
  locale?: string;
  invoice: {
    number: string;
    status: string;
    currency: string;
    period: { start: string; end: string };
    issuedDate: string;
    dueDate: string;
    paidDate: string | null;
    contract: string;
    /** The void invoice this one replaces, and the invoice that replaced this void one (null: none). */
    reissueOf?: string | null;
    reissuedAs?: string | null;
    /** Decimals as text, as the invoice gives them. */
    lines: PdfLine[];
    subtotal: string;
    tax: string;
    total: string;
  };
  /** Payments and credit notes, on an issued or paid invoice (absent on a draft or a void one). */
  balance?: DocumentBalance;
  /** The document's date (the metadata's, the footer's): an issued invoice's issue time, a draft's last change. */
  generatedAt: Date;
}

const WATERMARKS: Record<string, string> = { draft: "DRAFT", void: "VOID", paid: "PAID" };

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

const METHODS: Record<string, string> = {
  bank_transfer: "bank transfer",
  ach: "ACH",
  wire: "wire",
  card: "card",
  check: "check",
  cash: "cash",
  other: "",
};

/** The negative of a decimal's text ("75.00" → "-75.00"), never through a double. */
const negated = (amount: string): string => (amount.startsWith("-") ? amount.slice(1) : `-${amount}`);

/**
 * The balance rows under the total: each payment (its date, method and reference), each credit note (its number
 * and date), each as a negative amount, then the amount due, dated by the last of them (or the issue date): the
 * balance as it stands whenever the document is made, which is the same until the next payment or credit note.
 */
function balanceRows(
  balance: DocumentBalance,
  issuedDate: string,
  currency: string,
  locale: string = DEFAULT_LOCALE,
): Array<[string, string]> {
  const money = (amount: string) => documentMoney(amount, currency, locale);
  const date = (day: string) => formatDate(day, locale);
  const payments = balance.payments.map((p): [string, string] => {
    const how = [METHODS[p.method] ?? p.method, p.reference ? `ref. ${p.reference}` : ""].filter((s) => s !== "");
    return [`Payment ${date(p.paidOn)}${how.length > 0 ? ` (${how.join(", ")})` : ""}`, money(negated(p.amount))];
  });
  const notes = balance.creditNotes.map((n): [string, string] => [
    `Credit note ${n.number} (${date(n.issuedDate)})`,
    money(negated(n.amount)),
  ]);
  const last = [issuedDate, ...balance.payments.map((p) => p.paidOn), ...balance.creditNotes.map((n) => n.issuedDate)]
    .sort()
    .at(-1)!;
  return [...payments, ...notes, [`Amount due as of ${date(last)}`, money(balance.amountDue)]];
}

/** What the invoice says, in order: pure, so that its text is tested without a PDF. */
export function invoiceWords(input: InvoicePdfInput) {
  const { invoice, customer } = input;
  const locale = input.locale ?? DEFAULT_LOCALE;
  const money = (amount: string) => documentMoney(amount, invoice.currency, locale);
  const date = (day: string) => formatDate(day, locale);
  const due = dueWords(invoice.issuedDate, invoice.dueDate, locale);
  const period = `${date(invoice.period.start)} to ${date(invoice.period.end)}`;
  const replacedBy = invoice.reissuedAs ? ` Replaced by invoice ${invoice.reissuedAs}.` : "";
  const statusLine: Record<string, string> = {
    draft: "Draft: this invoice may still change and is not yet due.",
    issued: `Due ${due}.`,
    paid: `Paid ${invoice.paidDate ? date(invoice.paidDate) : ""}. Thank you.`,
    void: `Void: this invoice has been cancelled. Nothing is due.${replacedBy}`,
  };
  const balance = input.balance && (invoice.status === "issued" || invoice.status === "paid") ? input.balance : null;
  const totals: Array<[string, string]> =
    invoice.status === "void"
      ? [
          ["Total (void)", money(invoice.total)],
          ["Nothing is due", money("0")],
        ]
      : balance !== null
        ? [["Total", money(invoice.total)], ...balanceRows(balance, invoice.issuedDate, invoice.currency, locale)]
        : invoice.status === "paid"
          ? [
              ["Total", money(invoice.total)],
              [`Paid ${invoice.paidDate ? date(invoice.paidDate) : ""}`.trim(), money(invoice.total)],
            ]
          : [["Total due", money(invoice.total)]];
  const payable = invoice.status === "draft" || invoice.status === "issued";
  const references: Array<[string, string]> = [
    ...(invoice.reissueOf ? [["Replaces", `${invoice.reissueOf} (void)`] as [string, string]] : []),
    ...(invoice.reissuedAs ? [["Replaced by", invoice.reissuedAs] as [string, string]] : []),
  ];
  return {
    seller: sellerLines(input.seller),
    title: `Invoice ${invoice.number}`,
    subtitle: `Billing period ${period}`,
    status: statusLine[invoice.status] ?? invoice.status,
    parties: [
      { label: "Bill to", lines: customerLines(customer) },
      ...(input.memo !== null && input.memo.trim() !== ""
        ? [{ label: "Reference (PO / memo)", lines: textLines(input.memo) }]
        : []),
    ],
    facts: [
      ["Invoice number", invoice.number],
      ...references,
      ["Contract", invoice.contract],
      ["Issue date", date(invoice.issuedDate)],
      ["Due date", due],
      ["Billing period", period],
      ["Currency", invoice.currency],
    ] as Array<[string, string]>,
    lineHeaders: ["Description", "Quantity", "Unit price", "Amount"],
    lines: invoice.lines.flatMap((l) => lineRows(l, invoice.currency, locale)),
    noLines: "No charges in this period.",
    totals: [["Subtotal", money(invoice.subtotal)], ["Tax", money(invoice.tax)], ...totals] as Array<[string, string]>,
    paymentInstructions: payable && input.seller.paymentInstructions ? input.seller.paymentInstructions : null,
    footerNote: input.seller.footer,
    watermark: WATERMARKS[invoice.status] ?? null,
    banner:
      invoice.status === "draft"
        ? "DRAFT: not final, not yet due"
        : invoice.status === "void"
          ? `VOID: cancelled. Nothing is due.${replacedBy}`
          : null,
    footer: {
      generated: `${input.seller.name} · ${date(input.generatedAt.toISOString().slice(0, 10))}`,
      reference: `${invoice.number} · ${invoice.status}`,
      page: (page: number, pages: number) => `Page ${page} of ${pages}`,
    },
  };
}

export type InvoiceWords = ReturnType<typeof invoiceWords>;

/**
 * The figures an invoice's email gives, in the PDF's words: the due date (alone, and with its terms), the total,
 * each payment and credit note, and the amount due, money by the one formatter (documentMoney).
 */
export function emailFigures(input: InvoicePdfInput): {
  amountDue: string;
  dueOn: string;
  dueWithTerms: string;
  balance: Array<[string, string]>;
} {
  const { invoice } = input;
  const locale = input.locale ?? DEFAULT_LOCALE;
  const words = invoiceWords(input);
  const due = input.balance?.amountDue ?? (invoice.status === "void" ? "0" : invoice.total);
  return {
    amountDue: documentMoney(due, invoice.currency, locale),
    dueOn: formatDate(invoice.dueDate, locale),
    dueWithTerms: dueWords(invoice.issuedDate, invoice.dueDate, locale),
    // Subtotal and tax are the PDF's; the email starts at the total.
    balance: words.totals.slice(2),
  };
}
