import type { FastifyInstance } from "fastify";
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import {
  INVOICE_LIST_STATUSES,
  type InvoiceListStatus,
  invoiceListFilters,
  payInvoiceInput,
  projectInvoiceInput,
  type Invoice,
  type InvoiceProjection,
  type InvoiceWithLines,
} from "../../../domain/invoices/invoice-schemas.js";
import type { InvoiceMessage } from "../../../domain/invoices/delivery/invoice-message-schemas.js";
import { parseDate, periodOf } from "../../../domain/kernel/billing-period.js";
import { NotFoundError, ValidationError } from "../../../domain/kernel/errors.js";
import { sendPdf, sendUsageStatement } from "../../http/send-documents.js";
import { pageQuery } from "../../http/list-envelope.js";
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
  inputField,
  invalidAttributes,
  link,
  money,
  page,
  pager,
  rawFilters,
  when,
  type Flash,
  type DecimalValue,
} from "../layout.js";

const PAGE_SIZE = 25;

/** The filters GET /v1/billing/invoices takes (invoice-routes.ts), so a filter the API refuses is refused here too. */
const invoiceFilterQuery = invoiceListFilters.extend({ starting_after: pageQuery.starting_after });

const FILTER_NAMES = ["contract", "status", "from", "to", "starting_after"] as const;
// The `status` filter's values, the API's own (invoice-schemas.ts, INVOICE_LIST_STATUSES), in words.
const STATUS_WORDS: Record<InvoiceListStatus, string> = {
  draft: "draft",
  issued: "issued",
  paid: "paid",
  void: "void",
  open: "open (issued, not paid)",
  overdue: "overdue (open, past its due date)",
};
const INVOICE_STATUS_CHOICES: readonly (readonly [string, string])[] = [
  ["", "Any status"],
  ...INVOICE_LIST_STATUSES.map((status) => [status, STATUS_WORDS[status]] as const),
];
type RawFilters = Partial<Record<(typeof FILTER_NAMES)[number], string>>;

interface ProjectValues {
  contract?: string | undefined;
  billing_period_start?: string | undefined;
  billing_period_end?: string | undefined;
}

export const invoicePath = (number: string) => `/invoices/${encodeURIComponent(number)}`;

const MONTH_NAME = new Intl.DateTimeFormat("en", { month: "long", year: "numeric", timeZone: "UTC" });

const invoiceStatusBadge = (status: string) =>
  badge(status, status === "paid" ? "ok" : status === "draft" ? "warn" : "plain");

function contractOptions(contracts: readonly Contract[], selected: string | undefined, blank: string): SafeHtml {
  const known = contracts.some((c) => c.id === selected);
  return html`<option value="">${blank}</option>
${contracts.map((c) => html`<option value="${c.id}"${c.id === selected ? html` selected` : ""}>${c.id} (${c.customer_name})</option>`)}
${selected && !known ? html`<option value="${selected}" selected>${selected}</option>` : ""}`;
}

function filterForm(contracts: readonly Contract[], raw: RawFilters): SafeHtml {
  return html`<form class="inline" method="get" action="/invoices" role="search" aria-label="Filter invoices">
  <div class="field"><label for="invoice-contract">Contract</label><select id="invoice-contract" name="contract">${contractOptions(contracts, raw.contract, "All contracts")}</select></div>
  <div class="field"><label for="invoice-status">Status</label><select id="invoice-status" name="status">${INVOICE_STATUS_CHOICES.map(([value, label]) => html`<option value="${value}"${(raw.status ?? "") === value ? html` selected` : ""}>${label}</option>`)}${raw.status && !INVOICE_STATUS_CHOICES.some(([value]) => value === raw.status) ? html`<option value="${raw.status}" selected>${raw.status}</option>` : ""}</select></div>
  <div class="field"><label for="invoice-from">Period starts on or after</label><input id="invoice-from" name="from" type="date" value="${raw.from ?? ""}"></div>
  <div class="field"><label for="invoice-to">Period ends on or before</label><input id="invoice-to" name="to" type="date" value="${raw.to ?? ""}"></div>
  <button type="submit" class="secondary">Filter</button>${Object.keys(raw).length > 0 ? html` <a href="/invoices">Clear filters</a>` : ""}
</form>`;
}

function projectForm(
  viewer: Viewer,
  contracts: readonly Contract[],
  values: ProjectValues = {},
  errors: FieldErrors = {},
): SafeHtml {
  const open = Object.values(values).some((v) => v !== undefined);
  return html`<details class="card"${open ? html` open` : ""}>
<summary><strong>Project a period</strong></summary>
<p class="hint">Creates or updates the contract's draft invoice for one calendar month: subscription lines, the usage rated so far and the monthly minimum.</p>
<form class="stack" method="post" action="/invoices/project">
  ${csrfField(viewer.ctx)}
  <div><label for="project-contract">Contract</label><select id="project-contract" name="contract" required${invalidAttributes("project-contract", errors.contract)}>${contractOptions(
    contracts,
    values.contract,
    "Choose a contract",
  )}</select>${fieldError("project-contract", errors.contract)}</div>
  ${inputField({ id: "project-start", name: "billing_period_start", label: "Period start", hint: "(the first day of a month)", type: "date", required: true, value: values.billing_period_start, error: errors.billing_period_start })}
  ${inputField({ id: "project-end", name: "billing_period_end", label: "Period end", hint: "(the last day of the same month)", type: "date", required: true, value: values.billing_period_end, error: errors.billing_period_end })}
  <div><button type="submit">Project invoice</button></div>
</form>
</details>`;
}

function projectionResult(projection: InvoiceProjection): SafeHtml {
  return html`<section class="card" aria-labelledby="projection-result">
<h2 id="projection-result">Projection of ${projection.contract} for ${projection.billing_period.start} to ${projection.billing_period.end}</h2>
<p class="alert ok" role="status">${projection.is_new ? "A new draft invoice was created." : "The draft invoice was brought up to date."}</p>
<dl class="facts">
<dt>Invoice</dt><dd><a href="${invoicePath(projection.number)}">${projection.number}</a></dd>
<dt>Contract</dt><dd><a href="${contractPath(projection.contract)}">${projection.contract}</a></dd>
<dt>Status</dt><dd>${invoiceStatusBadge(projection.status)}</dd>
<dt>Subtotal</dt><dd>${money(projection.subtotal, projection.currency)}</dd>
<dt>Tax</dt><dd>${money(projection.tax, projection.currency)}</dd>
<dt>Total</dt><dd><strong>${money(projection.total, projection.currency)}</strong></dd>
</dl>
</section>`;
}

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

async function listPage(
  deps: DashboardDeps,
  viewer: Viewer,
  query: Record<string, unknown>,
  options: { top?: SafeHtml; project?: ProjectValues; projectErrors?: FieldErrors; flash?: Flash | undefined } = {},
): Promise<{ markup: string; status: number }> {
  const actor = viewer.session.actor;
  const contracts = await deps.services.contracts.list(actor, undefined);
  const raw = rawFilters(query, FILTER_NAMES);
  let flash = options.flash;
  let status = 200;
  let body: SafeHtml;
  try {
    const filters = parseWith(invoiceFilterQuery, raw);
    const result = await deps.services.invoices.list(
      actor,
      { contractId: filters.contract, status: filters.status, from: filters.from, to: filters.to },
      { limit: PAGE_SIZE, startingAfter: filters.starting_after },
    );
    const filtered = FILTER_NAMES.some((name) => raw[name] !== undefined);
    body =
      result.items.length === 0
        ? filtered
          ? emptyState("No invoices match these filters.", html`<p><a href="/invoices">Show all invoices</a></p>`)
          : emptyState(
              "No invoices yet. A draft invoice appears when usage is rated onto a contract, or when you project a period above.",
            )
        : html`${invoicesTable("Invoices, newest first", result.items)}${pager("/invoices", raw, result.hasMore, result.items.at(-1)?.number)}`;
  } catch (error) {
    ({ status, flash } = formFailure(error));
    body = emptyState("Fix the filters above to see invoices.");
  }
  const content = html`${options.top ?? ""}${projectForm(viewer, contracts, options.project, options.projectErrors)}<h2>All invoices</h2>${filterForm(contracts, raw)}${body}`;
  return { markup: page(viewer.ctx, "Invoices", content, { flash }), status };
}

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
        );
  const totals = html`<div class="card"><dl class="facts">
<dt>Subtotal</dt><dd>${money(invoice.subtotal, currency)}</dd>
<dt>Tax</dt><dd>${money(invoice.tax, currency)}</dd>
<dt>Total</dt><dd><strong>${money(invoice.total, currency)}</strong></dd>
</dl></div>`;
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

/**
 * A refused projection, each error beside its field. The service refuses a period or a contract without naming
 * a field: the period's rule (one calendar month) and the contract's term are said beside the dates, an
 * unknown contract beside the contract.
 */
async function projectFailure(
  deps: DashboardDeps,
  viewer: Viewer,
  error: unknown,
  values: ProjectValues,
): Promise<{ status: number; flash: Flash; fields: FieldErrors }> {
  if (error instanceof ValidationError && error.code === "invalid_billing_period") {
    const start = values.billing_period_start === undefined ? undefined : parseDate(values.billing_period_start);
    const month = start ? periodOf(start) : undefined;
    const fields: FieldErrors = {};
    if (!month || month.start !== values.billing_period_start) {
      fields.billing_period_start = `A period starts on the first day of a month${start && month ? `: ${month.start} for ${MONTH_NAME.format(start)}` : ""}.`;
    }
    if (!month || month.end !== values.billing_period_end) {
      fields.billing_period_end = `A period ends on the last day of the month it starts in${month && month.start === values.billing_period_start ? `: ${month.end}` : ""}.`;
    }
    // A whole month, but outside the months the service bills (time-range.ts): the service's own sentence.
    if (Object.keys(fields).length === 0) fields.billing_period_start = `${error.message}.`;
    return placedFailure(400, fields);
  }
  if (error instanceof ValidationError && error.code === "outside_contract_term" && values.contract !== undefined) {
    const contract = await deps.services.contracts.get(viewer.session.actor, values.contract).catch(() => undefined);
    if (contract) {
      const term = contract.end_date
        ? `runs from ${contract.start_date} to ${contract.end_date}`
        : `starts on ${contract.start_date}, with no end date`;
      return placedFailure(400, {
        billing_period_start: `This month is outside the contract's term: the contract ${term}. Choose a month within it.`,
      });
    }
  }
  if (error instanceof NotFoundError && error.resource === "contract") {
    return placedFailure(404, { contract: "There is no such contract in your account: choose one from the list." });
  }
  return formFailure(error, (path) =>
    path === "external_contract_id"
      ? "contract"
      : path === "billing_period_start" || path === "billing_period_end"
        ? path
        : undefined,
  );
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

export async function invoicePages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: Record<string, unknown> }>("/invoices", async (request, reply) => {
    const { markup, status } = await listPage(deps, viewerOf(request), request.query);
    return sendPage(reply, markup, status);
  });

  // A projection is shown in this response rather than after a redirect: the result is the page's answer.
  app.post("/invoices/project", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values: ProjectValues = {
      contract: field(form, "contract"),
      billing_period_start: field(form, "billing_period_start"),
      billing_period_end: field(form, "billing_period_end"),
    };
    try {
      const input = parseWith(projectInvoiceInput, {
        external_contract_id: values.contract,
        billing_period_start: values.billing_period_start,
        billing_period_end: values.billing_period_end,
      });
      const projection = await deps.services.invoices.project(viewer.session.actor, {
        contractId: input.external_contract_id,
        periodStart: input.billing_period_start,
        periodEnd: input.billing_period_end,
      });
      const { markup } = await listPage(deps, viewer, {}, { top: projectionResult(projection) });
      return sendPage(reply, markup);
    } catch (error) {
      const failure = await projectFailure(deps, viewer, error, values);
      const { markup } = await listPage(
        deps,
        viewer,
        {},
        { project: values, projectErrors: failure.fields, flash: failure.flash },
      );
      return sendPage(reply, markup, failure.status);
    }
  });

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
