// An invoice's page (docs/dashboard.md, "Invoices"): its facts, its line items (a graduated or volume line with
// a row per tier), its totals, the lifecycle forms its status allows (finalize, pay, void: the API's operations,
// each confirmed with a ticked box), its payments and credit notes (invoice-collection-pages.ts), its delivery
// (the emails, sending it again, its hosted link) and its documents. Registered by invoice-pages.ts.
import type { FastifyInstance } from "fastify";
import { payInvoiceInput, type Invoice, type InvoiceWithLines } from "../../../domain/invoices/invoice-schemas.js";
import type { InvoiceMessage } from "../../../domain/invoices/delivery/invoice-message-schemas.js";
import { ValidationError } from "../../../domain/kernel/errors.js";
import { sendPdf, sendUsageStatement } from "../../http/send-documents.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  parseWith,
  placedFailure,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { type CollectionFailure, collectionSections, invoiceCollectionPages } from "./invoice-collection-pages.js";
import {
  badge,
  contractPath,
  csrfField,
  dataTable,
  decimal,
  doneFlash,
  emptyState,
  fieldError,
  invalidAttributes,
  link,
  money,
  page,
  when,
  type Flash,
  type DecimalValue,
} from "../layout.js";
import { invoicePath, invoiceStatusBadge } from "./invoice-page-parts.js";

/** A refused finalize, pay or void form: what was typed, the errors beside its fields, and the banner to show instead should that form not be on the page. */
interface LifecycleFailure {
  verb: LifecycleVerb;
  paidDate?: string | undefined;
  errors: FieldErrors;
  unplaced: Flash;
}

type LifecycleVerb = "finalize" | "pay" | "void";

/** The forms an invoice in this status offers. */
const formsOf = (status: string): readonly LifecycleVerb[] =>
  status === "draft" ? ["finalize"] : status === "issued" ? ["pay", "void"] : [];

type LineItem = InvoiceWithLines["line_items"][number];

/** A row of the line items table: a line, or one of a graduated or volume line's tiers (or its cap adjustment). */
interface ChargeRow {
  description: SafeHtml | string;
  kind: string;
  metric: string | null;
  quantity: DecimalValue | null;
  unit_price: DecimalValue | null;
  amount: DecimalValue;
}

/**
 * A line (a credit line without quantity and unit price), then a row per tier it reached (its bounds and flat amount, quantity, unit price, exact amount) and the
 * cap adjustment when a monthly cap cut it (docs/api.md, "Price models").
 */
const withTierRows =
  (currency: string) =>
  (line: LineItem): ChargeRow[] => {
    // A credit line is one amount (negative): its quantity of 1 and "unit price" would only repeat it.
    const rows: ChargeRow[] = [line.kind === "credit" ? { ...line, quantity: null, unit_price: null } : line];
    let lower: DecimalValue | null = null;
    for (const tier of line.tiers ?? []) {
      const bounds =
        tier.up_to !== null ? `up to ${decimal(tier.up_to)}` : lower !== null ? `above ${decimal(lower)}` : "all units";
      const flat = tier.flat_amount === null ? "" : ` (+ ${money(tier.flat_amount, currency)} flat)`;
      rows.push({
        description: html`<span class="tier">Tier ${bounds}${flat}</span>`,
        kind: "tier",
        metric: null,
        quantity: tier.quantity,
        unit_price: tier.unit_amount,
        amount: tier.amount,
      });
      if (tier.up_to !== null) lower = tier.up_to;
    }
    if (line.cap_adjustment !== undefined)
      rows.push({
        description: html`<span class="tier">Monthly cap</span>`,
        kind: "cap",
        metric: null,
        quantity: null,
        unit_price: null,
        amount: line.cap_adjustment,
      });
    return rows;
  };

async function detailPage(
  deps: DashboardDeps,
  viewer: Viewer,
  number: string,
  flash?: Flash,
  failure?: LifecycleFailure,
  collectionFailure?: CollectionFailure,
): Promise<string> {
  const invoice = await deps.services.invoices.get(viewer.session.actor, number);
  const notes =
    invoice.status === "draft" ? [] : await deps.services.invoices.listCreditNotes(viewer.session.actor, number);
  // An error beside a form the page no longer shows (the invoice moved on) is said at the top instead.
  if (failure && !formsOf(invoice.status).includes(failure.verb)) {
    flash = failure.unplaced;
    failure = undefined;
  }
  const currency = invoice.currency;
  const facts = html`<div class="card"><dl class="facts">
<dt>Number</dt><dd>${invoice.number}</dd>
<dt>Customer</dt><dd><a href="/customers/${encodeURIComponent(invoice.customer)}">${invoice.customer_name}</a></dd>
<dt>Contract</dt><dd><a href="${contractPath(invoice.contract)}">${invoice.contract}</a></dd>
<dt>Status</dt><dd>${invoiceStatusBadge(invoice.status)}</dd>
<dt>Billing period</dt><dd>${invoice.billing_period.start} to ${invoice.billing_period.end}</dd>
<dt>Issue date</dt><dd>${invoice.issued_date}</dd>
<dt>Due date</dt><dd>${invoice.due_date}</dd>
<dt>Paid</dt><dd>${invoice.paid_date ?? "not yet"}</dd>
<dt>Currency</dt><dd>${currency}</dd>
<dt>Metrics</dt><dd>${invoice.metrics.length > 0 ? invoice.metrics.map((m, i) => html`${i > 0 ? ", " : ""}<code>${m}</code>`) : "—"}</dd>
<dt>Last updated</dt><dd>${when(invoice.updated_at)}</dd>
</dl></div>`;
  const lines =
    invoice.line_items.length === 0
      ? emptyState("No line items yet: project the period to add subscription and minimum lines.")
      : dataTable(
          `Line items of invoice ${invoice.number}`,
          [
            { header: "Description", cell: (l) => l.description },
            { header: "Kind", cell: (l) => l.kind },
            { header: "Metric", cell: (l) => (l.metric ? html`<code>${l.metric}</code>` : "—") },
            { header: "Quantity", cell: (l) => (l.quantity === null ? "" : decimal(l.quantity)), numeric: true },
            {
              header: "Unit price",
              cell: (l) => (l.unit_price === null ? "" : money(l.unit_price, currency)),
              numeric: true,
            },
            { header: "Amount", cell: (l) => money(l.amount, currency), numeric: true },
          ],
          invoice.line_items.flatMap(withTierRows(currency)),
          { stacked: true },
        );
  const totals = html`<div class="card"><dl class="facts figures">
<dt>Subtotal</dt><dd>${money(invoice.subtotal, currency)}</dd>
<dt>Tax</dt><dd>${money(invoice.tax, currency)}</dd>
<dt>Total${invoice.projected ? " so far" : ""}</dt><dd><strong>${money(invoice.total, currency)}</strong></dd>
${invoice.status === "draft" ? "" : html`<dt>Amount due</dt><dd><strong>${money(invoice.amount_due, currency)}</strong></dd>`}
</dl></div>${projectedSection(invoice)}`;
  const reproject =
    invoice.status === "draft"
      ? html`<form method="post" action="/invoices/project" class="actions">${csrfField(viewer.ctx)}
<input type="hidden" name="contract" value="${invoice.contract}"><input type="hidden" name="billing_period_start" value="${invoice.billing_period.start}"><input type="hidden" name="billing_period_end" value="${invoice.billing_period.end}">
<button type="submit" class="secondary">Project this period again</button></form>`
      : "";
  const usage = link("/usage", {
    contract: invoice.contract,
    from: invoice.billing_period.start,
    to: invoice.billing_period.end,
  });
  const documents = html`<p class="actions"><a href="${invoicePath(invoice.number)}/invoice.pdf">Download the PDF</a> · <a href="${invoicePath(invoice.number)}/usage.csv">Download the usage statement (CSV)</a></p>`;
  const delivery =
    invoice.status === "draft"
      ? ""
      : deliverySection(viewer, invoice, await deps.services.invoices.messages(viewer.session.actor, number));
  const content = html`${facts}${lifecycleForms(viewer, invoice, failure)}<h2>Line items</h2>${lines}<h2>Totals</h2>${totals}${collectionSections(viewer, invoice, notes, collectionFailure)}${reproject}${documents}${delivery}<p><a href="${usage}">Usage events of this period</a> · <a href="/invoices">All invoices</a></p>`;
  return page(viewer.ctx, `Invoice ${invoice.number}`, content, { flash });
}

/**
 * A draft's month as it will bill if nothing else arrives (`projected`: docs/api.md, "Invoices"): the
 * subscriptions, one-time fees and minimum top-up projection bills, and the total.
 */
function projectedSection(invoice: InvoiceWithLines): SafeHtml {
  const projected = invoice.projected;
  if (!projected) return html``;
  const currency = invoice.currency;
  const row = (label: string, amount: DecimalValue) => html`<dt>${label}</dt><dd>${money(amount, currency)}</dd>`;
  return html`<section class="card" aria-labelledby="projected-heading"><h2 id="projected-heading">This month if nothing else arrives</h2>
<p class="hint">What finalizing would bill now: the usage above, the subscriptions and one-time fees at their amounts, and the top-up to the monthly minimum. Projection puts them on the draft at the end of the month.</p>
<dl class="facts figures">
${row("Subscriptions", projected.subscriptions)}
${row("One-time fees", projected.one_time_fees)}
${row("Minimum top-up", projected.minimum_top_up)}
<dt>Projected total</dt><dd><strong>${money(projected.total, currency)}</strong></dd>
</dl></section>`;
}

/** The invoice's hosted link and its messages, with the forms that send it again and replace the link. */
function deliverySection(viewer: Viewer, invoice: Invoice, messages: readonly InvoiceMessage[]): SafeHtml {
  const action = (verb: string) => `${invoicePath(invoice.number)}/${verb}`;
  const log =
    messages.length === 0
      ? emptyState("No email has been sent about this invoice.")
      : dataTable(
          `Messages about invoice ${invoice.number}, newest first`,
          [
            { header: "Created", cell: (m) => when(m.created_at) },
            {
              header: "Kind",
              cell: (m) =>
                m.kind === "reminder" && m.reminder_day !== null
                  ? `reminder (${m.reminder_day < 0 ? `${-m.reminder_day} days before` : `${m.reminder_day} days after`} the due date)`
                  : m.kind,
            },
            { header: "To", cell: (m) => m.to ?? "—" },
            {
              header: "Status",
              cell: (m) => badge(m.status, m.status === "sent" ? "ok" : m.status === "failed" ? "bad" : "warn"),
            },
            { header: "Attempts", cell: (m) => String(m.attempts), numeric: true },
            { header: "Sent", cell: (m) => (m.sent_at ? when(m.sent_at) : "—") },
            { header: "Last error", cell: (m) => m.last_error ?? "—" },
          ],
          messages,
        );
  const hosted = invoice.hosted_url
    ? html`<p>Hosted page: <a class="mono" href="${invoice.hosted_url}" rel="noreferrer">${invoice.hosted_url}</a></p>
<form method="post" action="${action("hosted-link/revoke")}" class="actions">${csrfField(viewer.ctx)}
<button type="submit" class="secondary">Revoke this link and make a new one</button></form>`
    : "";
  const resend =
    invoice.status === "void"
      ? ""
      : html`<form method="post" action="${action("send")}" class="actions">${csrfField(viewer.ctx)}
<button type="submit">Send again</button></form>`;
  return html`<section class="card" aria-labelledby="delivery-heading"><h2 id="delivery-heading">Delivery</h2>
${hosted}${resend}${log}</section>`;
}

const DONE: Record<string, Flash> = {
  sent: { kind: "ok", message: "Email queued: it is sent to the customer in a moment (see Delivery below)." },
  revoked: { kind: "ok", message: "Hosted link replaced: the old link no longer opens the invoice." },
  finalized: { kind: "ok", message: "Invoice issued: its lines and totals are now final." },
  paid: { kind: "ok", message: "Payment recorded: the invoice is paid." },
  voided: { kind: "ok", message: "Invoice voided and reissued: a new draft holds this month's usage." },
  payment_recorded: { kind: "ok", message: "Payment recorded." },
  credit_note_issued: { kind: "ok", message: "Credit note issued." },
};

/** What can happen to the invoice next, each behind a box to tick: issuing, paying and voiding are final. */
function lifecycleForms(viewer: Viewer, invoice: Invoice, failure?: LifecycleFailure): SafeHtml {
  const action = (verb: string) => `${invoicePath(invoice.number)}/${verb}`;
  const errorsOf = (verb: LifecycleVerb): FieldErrors => (failure?.verb === verb ? failure.errors : {});
  const confirm = (id: string, text: string, error: string | undefined) =>
    html`<div class="field"><input type="checkbox" id="${id}" name="confirm" value="yes" required${invalidAttributes(id, error)}> <label for="${id}">${text}</label>${fieldError(id, error)}</div>`;
  const paid = errorsOf("pay");
  if (invoice.status === "draft") {
    return html`<section class="card" aria-labelledby="issue-heading"><h2 id="issue-heading">Issue this invoice</h2>
<p class="hint">Issuing brings the draft up to date (subscriptions, the monthly minimum), then fixes its lines and totals for good, sets today as its issue date and the due date from the customer's payment terms. Usage of this month sent afterwards is refused.</p>
<form method="post" action="${action("finalize")}" class="stack">${csrfField(viewer.ctx)}
${confirm("confirm-finalize", `I have checked this invoice: issue ${invoice.number} to the customer`, errorsOf("finalize").confirm)}
<button type="submit">Finalize and issue</button></form></section>`;
  }
  if (invoice.status === "issued") {
    return html`<section class="card" aria-labelledby="payment-heading"><h2 id="payment-heading">Payment</h2>
<form method="post" action="${action("pay")}" class="stack">${csrfField(viewer.ctx)}
<div class="field"><label for="paid-date">Paid on <span class="hint">(today if left empty; not before ${invoice.issued_date})</span></label><input id="paid-date" name="paid_date" type="date" min="${invoice.issued_date}" value="${
      failure?.verb === "pay" ? (failure.paidDate ?? "") : ""
    }"${invalidAttributes("paid-date", paid.paid_date)}>${fieldError("paid-date", paid.paid_date)}</div>
${confirm("confirm-pay", `The customer has paid what is left due on ${invoice.number}`, paid.confirm)}
<button type="submit">Mark as paid in full</button></form>
<form method="post" action="${action("void")}" class="stack">${csrfField(viewer.ctx)}
${confirm("confirm-void", `Void ${invoice.number}: the customer no longer owes it, and a new draft takes over this month's usage (this cannot be undone)`, errorsOf("void").confirm)}
<button type="submit" class="danger">Void and reissue</button></form></section>`;
  }
  return html``;
}

/** A refused finalize, pay or void: a missing confirmation beside its box, a refused payment date beside the date. */
function lifecycleFailure(error: unknown): { status: number; flash: Flash; fields: FieldErrors } {
  if (error instanceof ValidationError && error.code === "paid_date_before_issue") {
    const issued = /(\d{4}-\d{2}-\d{2})$/.exec(error.details?.[0]?.message ?? "")?.[1];
    return placedFailure(400, {
      paid_date: `A payment cannot be dated before the invoice was issued${issued ? `, on ${issued}` : ""}.`,
    });
  }
  if (error instanceof ValidationError && error.code === "paid_date_in_future") {
    const today = /(\d{4}-\d{2}-\d{2})$/.exec(error.details?.[0]?.message ?? "")?.[1];
    return placedFailure(400, {
      paid_date: `This date is in the future: enter the day the payment arrived${today ? `, ${today} (today) at the latest` : ""}.`,
    });
  }
  return formFailure(error, (path) => (path === "confirm" || path === "paid_date" ? path : undefined));
}

/** The routes of an invoice's page and its actions, under /invoices/:number. */
export async function invoiceDetailPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Params: { number: string }; Querystring: { done?: string } }>(
    "/invoices/:number",
    async (request, reply) => {
      return sendPage(
        reply,
        await detailPage(deps, viewerOf(request), request.params.number, doneFlash(DONE, request.query.done)),
      );
    },
  );

  // Finalize, pay and void: the API's operations (invoice-routes.ts), each confirmed with a ticked box.
  for (const [verb, done] of [
    ["finalize", "finalized"],
    ["pay", "paid"],
    ["void", "voided"],
  ] as const) {
    app.post<{ Params: { number: string } }>(`/invoices/:number/${verb}`, async (request, reply) => {
      const viewer = viewerOf(request);
      const form = formOf(request);
      const number = request.params.number;
      try {
        if (field(form, "confirm") !== "yes") {
          throw new ValidationError("Tick the box to confirm: this cannot be undone", "confirmation_required", [
            { path: "confirm", message: "Tick this box to confirm: this cannot be undone." },
          ]);
        }
        const actor = viewer.session.actor;
        if (verb === "finalize") await deps.services.invoices.finalize(actor, number);
        else if (verb === "void") await deps.services.invoices.void(actor, number);
        else
          await deps.services.invoices.pay(
            actor,
            number,
            parseWith(payInvoiceInput, { paid_date: field(form, "paid_date") }).paid_date,
          );
        return reply.redirect(`${invoicePath(number)}?done=${done}`, 303);
      } catch (error) {
        const { status, flash, fields } = lifecycleFailure(error);
        const failure: LifecycleFailure = {
          verb,
          paidDate: field(form, "paid_date"),
          errors: fields,
          unplaced: formFailure(error).flash,
        };
        return sendPage(reply, await detailPage(deps, viewer, number, flash, failure), status);
      }
    });
  }

  await invoiceCollectionPages(app, deps, (viewer, number, flash, failure) =>
    detailPage(deps, viewer, number, flash, undefined, failure),
  );

  // Delivery: the API's send and revoke (invoice-routes.ts).
  for (const [path, done] of [
    ["send", "sent"],
    ["hosted-link/revoke", "revoked"],
  ] as const) {
    app.post<{ Params: { number: string } }>(`/invoices/:number/${path}`, async (request, reply) => {
      const viewer = viewerOf(request);
      const number = request.params.number;
      try {
        if (path === "send") await deps.services.invoices.send(viewer.session.actor, number);
        else await deps.services.invoices.revokeHostedLink(viewer.session.actor, number);
        return reply.redirect(`${invoicePath(number)}?done=${done}`, 303);
      } catch (error) {
        const { status, flash } = formFailure(error);
        return sendPage(reply, await detailPage(deps, viewer, number, flash), status);
      }
    });
  }

  // The documents, for the signed-in user (the API's /pdf and /usage.csv take an API key).
  app.get<{ Params: { number: string } }>("/invoices/:number/invoice.pdf", async (request, reply) => {
    return sendPdf(
      reply,
      await deps.services.invoices.pdf(viewerOf(request).session.actor, request.params.number),
      "attachment",
    );
  });
  app.get<{ Params: { number: string } }>("/invoices/:number/usage.csv", async (request, reply) => {
    return sendUsageStatement(
      reply,
      await deps.services.invoices.usageStatement(viewerOf(request).session.actor, request.params.number),
    );
  });
}
