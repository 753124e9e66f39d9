// The invoices list (docs/dashboard.md, "Invoices"): the company's invoices, filtered as GET /v1/billing/invoices
// filters them and paged, and the form that projects a contract's month (the API's projectInvoiceInput and
// the same service call), its refusals beside its fields. An invoice's own page is invoice-detail-pages.ts,
// registered from here.
import type { FastifyInstance } from "fastify";
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import {
  INVOICE_LIST_STATUSES,
  type InvoiceListStatus,
  invoiceListFilters,
  projectInvoiceInput,
  type InvoiceProjection,
} from "../../../domain/invoices/invoice-schemas.js";
import { parseDate, periodOf } from "../../../domain/kernel/billing-period.js";
import { NotFoundError, ValidationError } from "../../../domain/kernel/errors.js";
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
import {
  contractPath,
  csrfField,
  emptyState,
  fieldError,
  inputField,
  invalidAttributes,
  money,
  page,
  pager,
  rawFilters,
  type Flash,
} from "../layout.js";
import { invoiceDetailPages } from "./invoice-detail-pages.js";
import { invoicePath, invoicesTable, invoiceStatusBadge } from "./invoice-page-parts.js";

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

const MONTH_NAME = new Intl.DateTimeFormat("en", { month: "long", year: "numeric", timeZone: "UTC" });

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

  await invoiceDetailPages(app, deps);
}
