import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import { percentWords, perUnitWords, rulePriceWords } from "../../../domain/contracts/rule-price-wording.js";
import { NotFoundError } from "../../../domain/kernel/errors.js";
import { USAGE_EVENT_STATUSES, voidUsageBody, type UsageEvent } from "../../../domain/usage/usage-schemas.js";
import { usageListQuery } from "../../http/routes/usage-routes.js";
import {
  field,
  formFailure,
  formOf,
  parseWith,
  seeOther,
  sendPage,
  viewerOf,
  type DashboardDeps,
  type FieldErrors,
  type Viewer,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
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
} from "../layout.js";

const PAGE_SIZE = 25;

/** The filters GET /v1/billing/usage takes (its own schema), so a filter the API refuses is refused here too. */
type UsageFilterQuery = z.infer<typeof usageListQuery>;

const FILTER_NAMES = ["contract", "metric", "from", "to", "status", "starting_after"] as const;
type RawFilters = Partial<Record<(typeof FILTER_NAMES)[number], string>>;

const eventPath = (id: string) => `/usage/${encodeURIComponent(id)}`;

const statusBadge = (status: string) =>
  badge(status, status === "rated" ? "ok" : status === "voided" ? "warn" : "plain");

const DONE: Record<string, Flash> = {
  voided: {
    kind: "ok",
    message: "Event voided: it is no longer billed, and its draft invoice was priced again without it.",
  },
};

/** The most characters a void's reason may have (the API's `voidUsageBody`). */
const REASON_MAX = 500;

/** The filter form, with what was typed and each refused filter's error beside it. */
function filterForm(contracts: readonly Contract[], raw: RawFilters, errors: FieldErrors = {}): SafeHtml {
  const known = contracts.some((c) => c.id === raw.contract);
  const invalid = (name: string) => invalidAttributes(`usage-${name}`, errors[name]);
  const error = (name: string) => fieldError(`usage-${name}`, errors[name]);
  return html`<form class="inline" method="get" action="/usage" role="search" aria-label="Filter usage events">
  <div class="field"><label for="usage-contract">Contract</label><select id="usage-contract" name="contract"${invalid("contract")}>
    <option value="">All contracts</option>
    ${contracts.map((c) => html`<option value="${c.id}"${c.id === raw.contract ? html` selected` : ""}>${c.id} (${c.customer_name})</option>`)}
    ${raw.contract && !known ? html`<option value="${raw.contract}" selected>${raw.contract}</option>` : ""}
  </select>${error("contract")}</div>
  <div class="field"><label for="usage-metric">Metric</label><input id="usage-metric" name="metric" type="text" maxlength="100" value="${raw.metric ?? ""}"${invalid("metric")}>${error("metric")}</div>
  <div class="field"><label for="usage-status">Status</label><select id="usage-status" name="status"${invalid("status")}>
    <option value="">Any status</option>
    ${USAGE_EVENT_STATUSES.map((s) => html`<option value="${s}"${raw.status === s ? html` selected` : ""}>${s}</option>`)}
  </select>${error("status")}</div>
  <div class="field"><label for="usage-from">Service period from</label><input id="usage-from" name="from" type="date" value="${raw.from ?? ""}"${invalid("from")}>${error("from")}</div>
  <div class="field"><label for="usage-to">Service period to</label><input id="usage-to" name="to" type="date" value="${raw.to ?? ""}"${invalid("to")}>${error("to")}</div>
  <button type="submit" class="secondary">Filter</button>${Object.keys(raw).length > 0 ? html` <a href="/usage">Clear filters</a>` : ""}
</form>`;
}

function eventsTable(events: readonly UsageEvent[], currencyOf: ReadonlyMap<string, string>): SafeHtml {
  return dataTable(
    "Usage events, newest first",
    [
      { header: "Event", cell: (e) => html`<a href="${eventPath(e.id)}"><code>${e.id}</code></a>` },
      { header: "Contract", cell: (e) => html`<a href="${contractPath(e.contract)}">${e.contract}</a>` },
      { header: "Metric", cell: (e) => html`<code>${e.metric}</code>` },
      { header: "Quantity", cell: (e) => decimal(e.quantity), numeric: true },
      { header: "Amount", cell: (e) => money(e.rated_amount, currencyOf.get(e.contract)), numeric: true },
      { header: "Status", cell: (e) => statusBadge(e.status) },
      { header: "Timestamp", cell: (e) => when(e.timestamp) },
    ],
    events,
  );
}

const FILTER_FIELDS: readonly string[] = ["contract", "metric", "status", "from", "to"];

async function listPage(
  deps: DashboardDeps,
  viewer: Viewer,
  query: Record<string, unknown>,
): Promise<{ markup: string; status: number }> {
  const actor = viewer.session.actor;
  const contracts = await deps.services.contracts.list(actor, undefined);
  const raw = rawFilters(query, FILTER_NAMES);
  let errors: FieldErrors = {};
  let flash: Flash | undefined;
  let status = 200;
  let body: SafeHtml;
  try {
    const filters: UsageFilterQuery = parseWith(usageListQuery, raw);
    const result = await deps.services.usage.list(
      actor,
      {
        contractId: filters.contract,
        metric: filters.metric,
        from: filters.from,
        to: filters.to,
        status: filters.status,
      },
      { limit: PAGE_SIZE, startingAfter: filters.starting_after },
    );
    const currencyOf = new Map(contracts.map((c) => [c.id, c.currency]));
    const filtered = FILTER_NAMES.some((name) => name !== "starting_after" && raw[name] !== undefined);
    body =
      result.items.length === 0
        ? filtered || raw.starting_after
          ? emptyState("No usage events match these filters.", html`<p><a href="/usage">Show all events</a></p>`)
          : emptyState(
              "No usage events yet. Send some with POST /v1/billing/usage and an API key; they appear here as soon as they are rated.",
              html`<p><a href="/settings/api-keys">Create an API key</a></p>`,
            )
        : html`${eventsTable(result.items, currencyOf)}${pager("/usage", raw, result.hasMore, result.items.at(-1)?.id)}`;
  } catch (error) {
    // Each refused filter beside its field ('From' after 'To' beside 'from'); the cursor has none.
    ({
      status,
      flash,
      fields: errors,
    } = formFailure(error, (path) => (FILTER_FIELDS.includes(path) ? path : undefined)));
    body = emptyState("Fix the filters above to see events.");
  }
  return {
    markup: page(viewer.ctx, "Usage", html`${filterForm(contracts, raw, errors)}<h2>Events</h2>${body}`, { flash }),
    status,
  };
}

/** The rule that priced the event, looked up in the program version the event was rated with. */
async function ruleSection(
  deps: DashboardDeps,
  viewer: Viewer,
  event: UsageEvent,
  currency: string | undefined,
): Promise<SafeHtml> {
  let versions: Awaited<ReturnType<DashboardDeps["services"]["contracts"]["pricingHistory"]>> = [];
  try {
    versions = await deps.services.contracts.pricingHistory(viewer.session.actor, event.contract);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  // The version in force today (a later one may be scheduled already).
  let current: number | undefined;
  try {
    current = (await deps.services.contracts.getPricing(viewer.session.actor, event.contract)).version;
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  const version = versions.find((v) => v.version === event.pricing_version);
  const rule = version?.rules.find((r) => r.id === event.rule_id);
  const versionNote =
    current === undefined
      ? ""
      : event.pricing_version === current
        ? html` <span class="hint">(the current version)</span>`
        : html` <span class="hint">(the contract is now at version ${current})</span>`;
  const rate =
    event.fee_amount !== undefined
      ? html`none: the event carried its own fee of ${money(event.fee_amount, currency)}, billed as is`
      : event.applied_rate === null
        ? "—"
        : rule?.model === "percentage"
          ? `${percentWords(event.applied_rate)} (${decimal(event.applied_rate)})`
          : perUnitWords(event.applied_rate, currency);
  const ruleFacts = rule
    ? html`<dt>Rule</dt><dd>${rule.name} <code>${rule.id}</code></dd>
<dt>Rule type and model</dt><dd>${rule.type}, ${rule.model}</dd>
<dt>Rule price</dt><dd>${rulePriceWords(rule)}</dd>
${rule.monthly_cap !== null ? html`<dt>Monthly cap</dt><dd>${money(rule.monthly_cap, rule.currency)}</dd>` : ""}`
    : html`<dt>Rule</dt><dd><code>${event.rule_id}</code> <span class="hint">(not found in version ${event.pricing_version} of the program)</span></dd>`;
  return html`<section class="card" aria-labelledby="rule-applied">
<h2 id="rule-applied">Rule and rate applied</h2>
<dl class="facts">
${ruleFacts}
<dt>Program version</dt><dd>${event.pricing_version}${versionNote}</dd>
<dt>Rate applied</dt><dd>${rate}</dd>
<dt>Rated amount</dt><dd>${money(event.rated_amount, currency)}</dd>
</dl>
<p><a href="${contractPath(event.contract)}">See the contract's pricing program and its versions</a></p>
</section>`;
}

/** What the void form shows: blank, or what was typed when the service refused it. */
interface VoidForm {
  reason?: string | undefined;
  errors?: FieldErrors;
}

/**
 * How the event stands as a bill: voided (when and why), or, while its invoice is a draft, a form to void it;
 * an event on an issued invoice is corrected with a credit note instead.
 */
function voidSection(
  viewer: Viewer,
  event: UsageEvent,
  invoiceStatus: string | undefined,
  form: VoidForm | undefined,
): SafeHtml {
  if (event.status === "voided") return html``;
  if (invoiceStatus !== "draft") {
    return invoiceStatus === undefined
      ? html``
      : html`<p class="hint">Its invoice is ${invoiceStatus}, no longer a draft: the event can no longer be voided (correct the invoice with a credit note instead).</p>`;
  }
  const errors = form?.errors ?? {};
  return html`<details class="card"${form ? html` open` : ""}>
<summary><strong>Void this event</strong></summary>
<p class="hint">The event stays stored, marked voided, and its draft invoice ${event.invoice_number} is priced again without it. This cannot be undone.</p>
<form class="stack" method="post" action="${eventPath(event.id)}/void">
  ${csrfField(viewer.ctx)}
  ${inputField({ id: "void-reason", name: "reason", label: "Reason", hint: `(optional, at most ${REASON_MAX} characters; kept with the event)`, value: form?.reason, maxlength: REASON_MAX, error: errors.reason })}
  <div><button type="submit" class="danger">Void this event</button></div>
</form>
</details>`;
}

async function eventPage(
  deps: DashboardDeps,
  viewer: Viewer,
  eventId: string,
  flash?: Flash,
  form?: VoidForm,
): Promise<string> {
  const actor = viewer.session.actor;
  const event = await deps.services.usage.get(actor, eventId);
  let contract: Contract | undefined;
  try {
    contract = await deps.services.contracts.get(actor, event.contract);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  let invoiceStatus: string | undefined;
  try {
    invoiceStatus = (await deps.services.invoices.get(actor, event.invoice_number)).status;
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  const currency = contract?.currency;
  const optional = (label: string, value: string | undefined) =>
    value === undefined ? "" : html`<dt>${label}</dt><dd>${value}</dd>`;
  const voided =
    event.status === "voided"
      ? html`<dt>Voided</dt><dd>Voided on ${when(event.voided_at)} — ${event.void_reason ?? html`<span class="hint">no reason given</span>`}</dd>`
      : "";
  const facts = html`<div class="card"><dl class="facts">
<dt>Event id</dt><dd><code>${event.id}</code></dd>
<dt>Contract</dt><dd><a href="${contractPath(event.contract)}">${event.contract}</a>${contract ? html` <span class="hint">(${contract.customer_name})</span>` : ""}</dd>
<dt>Metric</dt><dd><code>${event.metric}</code></dd>
<dt>Quantity</dt><dd>${decimal(event.quantity)}</dd>
${event.fee_amount !== undefined ? html`<dt>Fee amount</dt><dd>${money(event.fee_amount, currency)}</dd>` : ""}
${optional("Counterparty", event.counterparty)}
${optional("Counterparty side", event.counterparty_side)}
${optional("Pair", event.pair)}
<dt>Amount</dt><dd>${money(event.rated_amount, currency)}${event.status === "voided" ? html` <span class="hint">(as rated; voided, so no longer billed)</span>` : ""}</dd>
<dt>Status</dt><dd>${statusBadge(event.status)}</dd>
${voided}
<dt>Invoice</dt><dd><a href="/invoices/${encodeURIComponent(event.invoice_number)}">${event.invoice_number}</a>${invoiceStatus ? html` <span class="hint">(${invoiceStatus})</span>` : ""}</dd>
<dt>Service period</dt><dd>${event.service_period_start} to ${event.service_period_end}</dd>
<dt>Timestamp</dt><dd>${when(event.timestamp)}</dd>
<dt>Received</dt><dd>${when(event.ingested_at)}</dd>
</dl></div>`;
  const back = html`<p><a href="${link("/usage", { contract: event.contract })}">More events of this contract</a> · <a href="/usage">All usage</a></p>`;
  return page(
    viewer.ctx,
    `Usage event ${event.id}`,
    html`${facts}${voidSection(viewer, event, invoiceStatus, form)}${await ruleSection(deps, viewer, event, currency)}${back}`,
    { flash },
  );
}

export async function usagePages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: Record<string, unknown> }>("/usage", async (request, reply) => {
    const viewer = viewerOf(request);
    const { markup, status } = await listPage(deps, viewer, request.query);
    return sendPage(reply, markup, status);
  });

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>("/usage/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(reply, await eventPage(deps, viewer, request.params.id, doneFlash(DONE, request.query.done)));
  });

  app.post<{ Params: { id: string } }>("/usage/:id/void", async (request, reply) => {
    const viewer = viewerOf(request);
    const reason = field(formOf(request), "reason");
    try {
      const input = parseWith(voidUsageBody, { reason });
      const event = await deps.services.usage.void(viewer.session.actor, request.params.id, input.reason ?? null);
      return seeOther(reply, link(eventPath(event.id), { done: "voided" }));
    } catch (error) {
      const { status, flash, fields } = formFailure(error, (path) => (path === "reason" ? path : undefined), {
        reason: "the reason",
      });
      return sendPage(
        reply,
        await eventPage(deps, viewer, request.params.id, flash, { reason, errors: fields }),
        status,
      );
    }
  });
}
