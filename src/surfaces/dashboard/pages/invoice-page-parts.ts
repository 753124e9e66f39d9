// What the invoice pages share (docs/dashboard.md, "Invoices"): an invoice's path, its status as a badge, and
// the invoices table that the list and the overview show.
import type { Invoice } from "../../../domain/invoices/invoice-schemas.js";
import { html, type SafeHtml } from "../html.js";
import { badge, contractPath, dataTable, money } from "../layout.js";

export const invoicePath = (number: string) => `/invoices/${encodeURIComponent(number)}`;

export const invoiceStatusBadge = (status: string) =>
  badge(status, status === "paid" ? "ok" : status === "draft" ? "warn" : "plain");

/**
 * An invoice's total as the pages show it: an issued (paid, void) invoice's total; a draft's what its month will
 * bill if nothing else arrives (`projected.total`: subscriptions and the minimum's top-up included), with what it
 * holds so far under it, so that no page understates the month (docs/decisions.md, "Invoices").
 */
export const invoiceTotal = (i: Invoice): SafeHtml =>
  i.projected
    ? html`${money(i.projected.total, i.currency)}<span class="hint figure-note">projected · ${money(i.total, i.currency)} so far</span>`
    : html`${money(i.total, i.currency)}`;

/** What an invoice owes now (`amount_due`); a draft owes nothing until it is issued. */
const invoiceAmountDue = (i: Invoice): SafeHtml =>
  i.status === "draft" ? html`<span class="hint">not issued yet</span>` : html`${money(i.amount_due, i.currency)}`;

/** Invoices as a table, each with its customer's name, what it owes and its total (stacked on a phone). */
export function invoicesTable(caption: string, invoices: readonly Invoice[]): SafeHtml {
  return dataTable(
    caption,
    [
      { header: "Number", cell: (i) => html`<a href="${invoicePath(i.number)}">${i.number}</a>` },
      { header: "Customer", cell: (i) => i.customer_name },
      { header: "Contract", cell: (i) => html`<a href="${contractPath(i.contract)}">${i.contract}</a>` },
      { header: "Period", cell: (i) => `${i.billing_period.start} to ${i.billing_period.end}` },
      { header: "Status", cell: (i) => invoiceStatusBadge(i.status) },
      { header: "Amount due", cell: invoiceAmountDue, numeric: true },
      { header: "Total", cell: invoiceTotal, numeric: true },
      { header: "Due date", cell: (i) => i.due_date },
    ],
    invoices,
    { stacked: true },
  );
}
