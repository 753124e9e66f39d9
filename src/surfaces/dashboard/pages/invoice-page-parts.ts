// What the invoice pages share (docs/dashboard.md, "Invoices"): an invoice's path, its status as a badge, and
// the invoices table that the list and the overview show.
import type { Invoice } from "../../../domain/invoices/invoice-schemas.js";
import { html, type SafeHtml } from "../html.js";
import { badge, contractPath, dataTable, money } from "../layout.js";

export const invoicePath = (number: string) => `/invoices/${encodeURIComponent(number)}`;

export const invoiceStatusBadge = (status: string) =>
  badge(status, status === "paid" ? "ok" : status === "draft" ? "warn" : "plain");

/** Invoices as a table, each with its customer's name. */
export function invoicesTable(caption: string, invoices: readonly Invoice[]): SafeHtml {
  return dataTable(
    caption,
    [
      { header: "Number", cell: (i) => html`<a href="${invoicePath(i.number)}">${i.number}</a>` },
      { header: "Customer", cell: (i) => i.customer_name },
      { header: "Contract", cell: (i) => html`<a href="${contractPath(i.contract)}">${i.contract}</a>` },
      { header: "Period", cell: (i) => `${i.billing_period.start} to ${i.billing_period.end}` },
      { header: "Status", cell: (i) => invoiceStatusBadge(i.status) },
      { header: "Subtotal", cell: (i) => money(i.subtotal, i.currency), numeric: true },
      { header: "Total", cell: (i) => money(i.total, i.currency), numeric: true },
      { header: "Issue date", cell: (i) => i.issued_date },
      { header: "Due date", cell: (i) => i.due_date },
    ],
    invoices,
  );
}
