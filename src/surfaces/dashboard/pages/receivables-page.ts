import type { FastifyInstance } from "fastify";
import { AGING_BUCKETS, type AgingBucket, type ReceivablesReport } from "../../../domain/invoices/invoice-schemas.js";
import { html, type SafeHtml } from "../html.js";
import { type Column, dataTable, emptyState, link, money, page } from "../layout.js";
import { sendPage, viewerOf, type DashboardDeps } from "../page-kit.js";

/** The aging buckets' column headers (invoice-schemas.ts, AGING_BUCKETS). */
const BUCKET_HEADERS: Record<AgingBucket, string> = {
  current: "Current",
  "1_30": "1–30 days",
  "31_60": "31–60 days",
  "61_90": "61–90 days",
  over_90: "Over 90 days",
};

type Amounts = ReceivablesReport["totals"][number];

/** The bucket columns and the total, each in the row's currency. */
const amountColumns = <T extends Amounts>(): Column<T>[] => [
  ...AGING_BUCKETS.map((bucket) => ({
    header: BUCKET_HEADERS[bucket],
    cell: (row: T) => money(row[bucket], row.currency),
    numeric: true,
  })),
  { header: "Total", cell: (row: T) => html`<strong>${money(row.total, row.currency)}</strong>`, numeric: true },
  { header: "Invoices", cell: (row: T) => String(row.invoices), numeric: true },
];

/** The aging table: a row per customer and currency, then the totals per currency. */
function agingTables(report: ReceivablesReport): SafeHtml {
  if (report.data.length === 0) {
    return emptyState(
      "Nothing is owed: no issued invoice is waiting for payment.",
      html`<p><a href="/invoices">All invoices</a></p>`,
    );
  }
  const customers = dataTable(
    `Receivables per customer and currency at ${report.as_of}`,
    [
      {
        header: "Customer",
        cell: (r) => html`<a href="/customers/${encodeURIComponent(r.customer)}">${r.customer_name}</a>`,
      },
      { header: "Currency", cell: (r) => r.currency },
      ...amountColumns<ReceivablesReport["data"][number]>(),
    ],
    report.data,
  );
  const totals = dataTable(
    `Receivables per currency at ${report.as_of}`,
    [{ header: "Currency", cell: (r) => r.currency }, ...amountColumns<Amounts>()],
    report.totals,
  );
  return html`<h2>Per customer</h2>${customers}<h2>Total per currency</h2>${totals}
<p><a href="${link("/invoices", { status: "overdue" })}">Overdue invoices</a> · <a href="${link("/invoices", { status: "open" })}">Open invoices</a></p>`;
}

/** Receivables: what issued invoices still owe, per customer and currency, aged by days past due (GET /v1/billing/reports/receivables). */
export async function receivablesPage(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get("/receivables", async (request, reply) => {
    const viewer = viewerOf(request);
    const report = await deps.services.invoices.receivables(viewer.session.actor);
    const content = html`<p class="hint">What issued invoices still owe at ${report.as_of} (today, UTC), by days past their due date. An invoice is current until and on its due date.</p>${agingTables(report)}`;
    return sendPage(reply, page(viewer.ctx, "Receivables", content));
  });
}
