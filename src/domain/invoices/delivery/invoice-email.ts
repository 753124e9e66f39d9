import type { MessageKind } from "./invoice-message-repository.js";

/** What an invoice's email says: drawn from the invoice, its seller and its customer when it is sent. */
export interface InvoiceEmailFacts {
  kind: MessageKind;
  /** A reminder's day from the due date (negative: before it). */
  reminderDay: number | null;
  sellerName: string;
  customerName: string;
  number: string;
  /** Money as the documents write it (documentMoney: "$1,250.00"), the same formatter as the PDF's. */
  amountDue: string;
  /** The due date as the documents write it ("May 6, 2026"), and with the terms ("May 6, 2026 (Net 30)"). */
  dueOn: string;
  dueWithTerms: string;
  /** The total, each payment and credit note, then the amount due: the PDF's rows (invoice-words.ts). */
  balance: Array<[string, string]>;
  hostedUrl: string | null;
  memo: string | null;
}

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c as "&" | "<" | ">" | '"' | "'"],
  );

/** The first sentence: a new invoice, or a reminder before or after the due date. */
function opening(f: InvoiceEmailFacts): string {
  if (f.kind !== "reminder" || f.reminderDay === null)
    return `${f.sellerName} has sent you invoice ${f.number} for ${f.amountDue}.`;
  const days = Math.abs(f.reminderDay);
  const plural = days === 1 ? "day" : "days";
  if (f.reminderDay < 0)
    return `A reminder: invoice ${f.number} from ${f.sellerName} is due in ${days} ${plural}, on ${f.dueOn}.`;
  if (f.reminderDay === 0) return `A reminder: invoice ${f.number} from ${f.sellerName} is due today, ${f.dueOn}.`;
  return `A reminder: invoice ${f.number} from ${f.sellerName} was due on ${f.dueOn}, ${days} ${plural} ago, and is still unpaid.`;
}

/**
 * The email of an invoice (pure): its subject (the seller and the invoice number), a plain text body and a simple
 * HTML one saying the same: the due date with its terms, the total, each payment and credit note, the amount due
 * (the PDF's rows, so that both say the same) and the hosted page's link. The PDF goes attached.
 */
export function composeInvoiceEmail(f: InvoiceEmailFacts): { subject: string; text: string; html: string } {
  const subject =
    f.kind === "reminder"
      ? `Reminder: invoice ${f.number} from ${f.sellerName}`
      : `Invoice ${f.number} from ${f.sellerName}`;
  const facts: [string, string][] = [["Invoice", f.number], ["Due date", f.dueWithTerms], ...f.balance];
  const text = [
    `Hello ${f.customerName},`,
    "",
    opening(f),
    "",
    ...facts.map(([label, value]) => `${label}: ${value}`),
    ...(f.hostedUrl ? ["", `View and download it: ${f.hostedUrl}`] : []),
    ...(f.memo ? ["", f.memo] : []),
    "",
    "The invoice is attached as a PDF.",
    "",
    f.sellerName,
    "",
  ].join("\n");
  const html = `<!doctype html>
<html><body style="font-family: sans-serif; color: #1a1a1a">
<p>Hello ${escapeHtml(f.customerName)},</p>
<p>${escapeHtml(opening(f))}</p>
<table style="border-collapse: collapse">${facts
    .map(
      ([label, value]) =>
        `<tr><th style="text-align: left; padding: 2px 12px 2px 0">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    )
    .join("")}</table>
${f.hostedUrl ? `<p><a href="${escapeHtml(f.hostedUrl)}">View and download the invoice</a></p>` : ""}
${f.memo ? `<p>${escapeHtml(f.memo).replace(/\n/g, "<br>")}</p>` : ""}
<p>The invoice is attached as a PDF.</p>
<p>${escapeHtml(f.sellerName)}</p>
</body></html>
`;
  return { subject: subject.replace(/[\r\n]+/g, " "), text, html };
}
