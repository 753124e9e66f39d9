import type { FastifyInstance } from "fastify";
import type { Delivery } from "../../../domain/webhooks/webhook-schemas.js";
import { sendPage, viewerOf, type DashboardDeps, type Viewer } from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { deliveryStatusBadge, monthName } from "../format.js";
import { badge, contractPath, dataTable, decimal, emptyState, link, money, page, when } from "../layout.js";
import { invoicePath, invoicesTable, invoiceTotal } from "./invoice-page-parts.js";

const CHART_DAYS = 30;
const MONTH_ROWS = 50;

const plural = (n: number, one: string, many = `${one}s`) => `${decimal(n)} ${n === 1 ? one : many}`;

type MonthToDate = Awaited<ReturnType<DashboardDeps["services"]["invoices"]["monthToDate"]>>;

/**
 * What was billed this month: the invoices whose billing period is the service's current calendar month (UTC),
 * drafts, issued and paid alike; a void invoice is not billed (its reissue, if any, is).
 */
function monthSection(month: MonthToDate): SafeHtml {
  const name = monthName(month.period.start);
  const more = link("/invoices", { from: month.period.start, to: month.period.end });
  const body =
    month.invoices.items.length === 0
      ? emptyState(
          `Nothing billed in ${name} yet. A draft invoice appears when usage is rated onto a contract or a period is projected.`,
        )
      : html`${dataTable(
          `Billed in ${name} per contract`,
          [
            { header: "Contract", cell: (i) => html`<a href="${contractPath(i.contract)}">${i.contract}</a>` },
            { header: "Customer", cell: (i) => i.customer_name },
            { header: "Invoice", cell: (i) => html`<a href="${invoicePath(i.number)}">${i.number}</a>` },
            { header: "Status", cell: (i) => i.status },
            { header: "Total", cell: invoiceTotal, numeric: true },
            { header: "Currency", cell: (i) => i.currency },
          ],
          month.invoices.items,
          { stacked: true },
        )}
${month.invoices.hasMore ? html`<p><a href="${more}">All invoices of ${name}</a></p>` : ""}
<h3>Total per currency</h3>
<ul class="totals">${month.totals.map((t) => html`<li><strong>${money(t.total, t.currency)}</strong> <span class="hint">over ${plural(t.invoices, "invoice")}</span></li>`)}</ul>`;
  return html`<section aria-labelledby="this-month"><h2 id="this-month">Billed this month (${name})</h2><p class="hint">The invoices of ${name}'s billing period, issued, paid and drafts; void invoices are left out. A draft counts at what its month will bill if nothing else arrives: its usage so far, its subscriptions and one-time fees, and the top-up to its monthly minimum.</p>${body}</section>`;
}

/** Bar geometry for the chart: a 620 × 200 canvas with room for the axis labels. */
const CHART = { width: 620, height: 200, left: 44, right: 8, top: 12, bottom: 26 };

function eventsChart(days: readonly { date: string; events: number }[]): SafeHtml {
  const first = days[0]?.date ?? "";
  const last = days.at(-1)?.date ?? "";
  const total = days.reduce((sum, d) => sum + d.events, 0);
  const heading = html`<h2 id="events-per-day">Events per day, last ${CHART_DAYS} days</h2>`;
  if (total === 0) {
    return html`<section aria-labelledby="events-per-day">${heading}${emptyState(`No usage events with timestamps from ${first} to ${last}.`, html`<p><a href="/usage">See all usage</a></p>`)}</section>`;
  }
  const busiest = days.reduce((best, d) => (d.events > best.events ? d : best), days[0]!);
  const max = busiest.events;
  const plotWidth = CHART.width - CHART.left - CHART.right;
  const plotHeight = CHART.height - CHART.top - CHART.bottom;
  const slot = plotWidth / days.length;
  const barWidth = Math.max(slot * 0.75, 1);
  const round = (n: number) => Math.round(n * 10) / 10;
  const baseline = CHART.top + plotHeight;
  const bars = days.map((d, i) => {
    const height = d.events === 0 ? 0 : Math.max((d.events / max) * plotHeight, 1);
    return html`<rect class="bar" x="${round(CHART.left + i * slot + (slot - barWidth) / 2)}" y="${round(baseline - height)}" width="${round(barWidth)}" height="${round(height)}"><title>${d.date}: ${plural(d.events, "event")}</title></rect>`;
  });
  const summary = `Bar chart of usage events per day from ${first} to ${last}: ${plural(total, "event")} in total, at most ${plural(max, "event")} on ${busiest.date}.`;
  const middle = days[Math.floor(days.length / 2)]!;
  const xLabel = (index: number, date: string, anchor: string) =>
    html`<text x="${round(CHART.left + index * slot + slot / 2)}" y="${CHART.height - 8}" text-anchor="${anchor}">${date}</text>`;
  const svg = html`<svg viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" aria-label="${summary}" focusable="false" preserveAspectRatio="xMidYMid meet">
<title>${summary}</title>
<line class="axis" x1="${CHART.left}" y1="${baseline}" x2="${CHART.width - CHART.right}" y2="${baseline}"></line>
<line class="axis" x1="${CHART.left}" y1="${CHART.top}" x2="${CHART.left}" y2="${baseline}"></line>
<text x="${CHART.left - 6}" y="${CHART.top + 4}" text-anchor="end">${decimal(max)}</text>
<text x="${CHART.left - 6}" y="${baseline}" text-anchor="end">0</text>
${bars}
${xLabel(0, first, "start")}${xLabel(Math.floor(days.length / 2), middle.date, "middle")}${xLabel(days.length - 1, last, "end")}
</svg>`;
  const numbers = html`<details><summary>Show the numbers</summary>${dataTable(
    "Usage events per day",
    [
      { header: "Day (UTC)", cell: (d) => d.date },
      { header: "Events", cell: (d) => decimal(d.events), numeric: true },
    ],
    days,
  )}</details>`;
  return html`<section aria-labelledby="events-per-day">${heading}<div class="card chart">${svg}</div>${numbers}</section>`;
}

function deliveriesSection(deliveries: readonly Delivery[], endpointUrls: ReadonlyMap<string, string>): SafeHtml {
  const body =
    deliveries.length === 0
      ? emptyState(
          "No failed webhook deliveries. Deliveries that fail, or wait for a retry after failing, show up here.",
        )
      : dataTable(
          "Failed webhook deliveries, newest first",
          [
            {
              header: "Event",
              cell: (d) =>
                html`<a href="/webhooks/${encodeURIComponent(d.endpoint_id)}/deliveries/${encodeURIComponent(d.id)}"><code>${d.event_type}</code></a>`,
            },
            {
              header: "Endpoint",
              cell: (d) =>
                html`<a href="/webhooks/${encodeURIComponent(d.endpoint_id)}"><code>${endpointUrls.get(d.endpoint_id) ?? d.endpoint_id}</code></a>`,
            },
            { header: "Status", cell: (d) => deliveryStatusBadge(d) },
            { header: "Attempts", cell: (d) => decimal(d.attempts), numeric: true },
            {
              header: "Last answer",
              cell: (d) => (d.last_status_code !== null ? `HTTP ${d.last_status_code}` : (d.last_error ?? "—")),
            },
            { header: "Created", cell: (d) => when(d.created_at) },
          ],
          deliveries,
        );
  return html`<section aria-labelledby="failed-deliveries"><h2 id="failed-deliveries">Failed deliveries</h2>${body}</section>`;
}

/**
 * For a company with nothing billed yet: the steps from sign-up to a draft invoice, each said done or not. The
 * invoice profile (who the invoices say they are from) and a real contract's upload come before the first usage,
 * as Stripe's setup guide puts the business details and the first product before the first invoice.
 */
async function gettingStarted(deps: DashboardDeps, viewer: Viewer): Promise<SafeHtml> {
  const actor = viewer.session.actor;
  const [keys, account, customers, contracts] = await Promise.all([
    deps.services.access.listApiKeys(actor),
    deps.services.account.get(actor),
    deps.services.customers.list(actor, {}, { limit: 1 }),
    deps.services.contracts.list(actor, undefined),
  ]);
  const step = (done: boolean, content: SafeHtml) =>
    html`<li>${done ? badge("done", "ok") : badge("to do")} ${content}</li>`;
  // The profile counts as filled in once it names the seller and where it is: what an invoice's head shows.
  const profiled = account.legal_name !== null && account.address !== null;
  return html`<section class="card" aria-labelledby="get-started">
<h2 id="get-started">Get started</h2>
<ol class="steps">
${step(
  keys.some((k) => !k.revoked_at),
  html`<a href="/settings/api-keys">Create an API key</a> to call the API from your systems.`,
)}
${step(profiled, html`Fill in your <a href="/settings/invoice-profile">invoice profile</a>: your legal name, address, tax id, logo and how to pay you, as every invoice and its email show them.`)}
${step(customers.items.length > 0, html`<a href="/customers">Create a customer</a>, or let a contract upload create it.`)}
${step(
  contracts.length > 0,
  html`<a href="/upload-contract">Upload a signed contract</a> (a PDF): its customer, dates and prices are read for you to check before saving. Or try a sample contract from <a href="/customers">a customer's page</a>: two wire metrics and a monthly minimum.`,
)}
${step(false, html`Send usage with <code>POST /v1/billing/usage</code> and your key; the draft invoice of the month updates at once. The API is described at <a href="/v1/openapi.json">/v1/openapi.json</a>.`)}
</ol>
</section>`;
}

export async function overviewPage(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get("/", async (request, reply) => {
    const viewer = viewerOf(request);
    const actor = viewer.session.actor;
    const [month, days, latest, failing, anyEvent] = await Promise.all([
      deps.services.invoices.monthToDate(actor, MONTH_ROWS),
      deps.services.usage.dailyEventCounts(actor, CHART_DAYS),
      deps.services.invoices.list(actor, {}, { limit: 5 }),
      deps.services.webhooks.failingDeliveries(actor, 10),
      deps.services.usage.list(actor, {}, { limit: 1 }),
    ]);
    const endpointUrls = new Map(
      failing.length === 0 ? [] : (await deps.services.webhooks.list(actor)).map((e) => [e.id, e.url]),
    );
    const brandNew = latest.items.length === 0 && anyEvent.items.length === 0;
    const latestSection = html`<section aria-labelledby="latest-invoices"><h2 id="latest-invoices">Latest invoices</h2>${
      latest.items.length === 0
        ? emptyState("No invoices yet.")
        : html`${invoicesTable("The five newest invoices", latest.items)}<p><a href="/invoices">All invoices</a></p>`
    }</section>`;
    const content = html`${brandNew ? await gettingStarted(deps, viewer) : ""}
${monthSection(month)}
${eventsChart(days)}
${latestSection}
${deliveriesSection(failing, endpointUrls)}`;
    return sendPage(reply, page(viewer.ctx, "Overview", content));
  });
}
