// The contracts list (docs/dashboard.md, "Contracts"): the company's contracts, by status, and the two ways to a
// new one: uploading a signed agreement (contract-upload-pages.ts) or creating a sample contract for a customer
// (the API's createSampleContractInput and the same service call). A contract's own page is
// contract-detail-pages.ts, registered from here.
import type { FastifyInstance } from "fastify";
import {
  CONTRACT_STATUSES,
  createSampleContractInput,
  type Contract,
} from "../../../domain/contracts/contract-schemas.js";
import {
  field,
  formFailure,
  formOf,
  parseWith,
  seeOther,
  sendPage,
  viewerOf,
  type DashboardDeps,
  type Viewer,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { uploadCard } from "./contract-upload-pages.js";
import { contractDetailPages } from "./contract-detail-pages.js";
import { customerLabel, DONE, statusBadge } from "./contract-page-parts.js";
import { contractPath, csrfField, dataTable, doneFlash, emptyState, link, page, type Flash } from "../layout.js";

/** The sample form lists this many customers, newest first; any other customer has the same button on its own page. */
const CUSTOMER_CHOICES = 100;

function statusFilter(status: string | undefined): SafeHtml {
  return html`<form class="inline" method="get" action="/contracts" role="search" aria-label="Filter contracts">
  <div class="field"><label for="filter-status">Status</label><select id="filter-status" name="status">
    <option value=""${status ? "" : html` selected`}>All statuses</option>
    ${CONTRACT_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`)}
  </select></div>
  <button type="submit" class="secondary">Filter</button>${status ? html` <a href="/contracts">Clear</a>` : ""}
</form>`;
}

async function sampleForm(deps: DashboardDeps, viewer: Viewer, selected?: string): Promise<SafeHtml> {
  const customers = await deps.services.customers.list(viewer.session.actor, {}, { limit: CUSTOMER_CHOICES });
  if (customers.items.length === 0) {
    return html`<section class="card" aria-labelledby="new-contract"><h2 id="new-contract">Create a sample contract</h2>${emptyState(
      "A contract belongs to a customer, and you have none yet.",
      html`<p><a class="button" href="/customers">Create a customer first</a></p>`,
    )}</section>`;
  }
  return html`<section class="card" aria-labelledby="new-contract">
<h2 id="new-contract">Create a sample contract</h2>
<p class="hint">An active USD contract with monthly billing: 20.00 per domestic wire, 30.00 per international wire and a 1,000.00 monthly minimum.</p>
<form class="inline" method="post" action="/contracts/sample">
  ${csrfField(viewer.ctx)}
  <div class="field"><label for="sample-customer">Customer</label><select id="sample-customer" name="customer_id" required>
    ${customers.items.map((c) => html`<option value="${c.id}"${c.id === selected ? html` selected` : ""}>${customerLabel(c)}</option>`)}
  </select></div>
  <button type="submit">Create sample contract</button>
</form>
${customers.hasMore ? html`<p class="hint">Only the ${CUSTOMER_CHOICES} newest customers are listed; open any other customer's page to create one for it.</p>` : ""}
</section>`;
}

/** The two ways to a new contract: upload a signed one, or create a sample. */
async function newContractForms(deps: DashboardDeps, viewer: Viewer, selected?: string): Promise<SafeHtml> {
  return html`<div class="grid">${uploadCard()}${await sampleForm(deps, viewer, selected)}</div>`;
}

function contractsTable(contracts: Contract[]): SafeHtml {
  return dataTable(
    "Contracts",
    [
      { header: "Contract", cell: (c) => html`<a href="${contractPath(c.id)}">${c.id}</a>` },
      { header: "Number", cell: (c) => c.contract_number },
      { header: "Customer", cell: (c) => html`<a href="/customers/${c.customer_id}">${c.customer_name}</a>` },
      { header: "Status", cell: (c) => statusBadge(c.status) },
      { header: "Starts", cell: (c) => c.start_date },
      { header: "Ends", cell: (c) => c.end_date ?? "open-ended" },
      {
        header: "Metrics",
        cell: (c) =>
          c.metrics.length === 0 ? "—" : html`${c.metrics.map((m, i) => html`${i > 0 ? ", " : ""}<code>${m}</code>`)}`,
      },
    ],
    contracts,
  );
}

const isStatus = (value: string): value is Contract["status"] =>
  (CONTRACT_STATUSES as readonly string[]).includes(value);

async function listPage(
  deps: DashboardDeps,
  viewer: Viewer,
  query: { status?: string | undefined },
  form: SafeHtml,
  flash?: Flash,
): Promise<{ markup: string; status: number }> {
  const wanted = query.status?.trim() || undefined;
  if (wanted !== undefined && !isStatus(wanted)) {
    const message = `There is no contract status “${wanted}”; choose one of ${CONTRACT_STATUSES.join(", ")}.`;
    return {
      markup: page(viewer.ctx, "Contracts", html`${form}${statusFilter(undefined)}`, {
        flash: { kind: "error", message },
      }),
      status: 400,
    };
  }
  const contracts = await deps.services.contracts.list(viewer.session.actor, wanted);
  const body =
    contracts.length === 0
      ? emptyState(
          wanted ? `No ${wanted} contracts.` : "No contracts yet. Create a sample contract above to try the service.",
        )
      : contractsTable(contracts);
  const heading = wanted ? `${wanted[0]!.toUpperCase()}${wanted.slice(1)} contracts` : "All contracts";
  return {
    markup: page(viewer.ctx, "Contracts", html`${form}${statusFilter(wanted)}<h2>${heading}</h2>${body}`, { flash }),
    status: 200,
  };
}

export async function contractPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: { status?: string; done?: string } }>("/contracts", async (request, reply) => {
    const viewer = viewerOf(request);
    const { markup, status } = await listPage(
      deps,
      viewer,
      request.query,
      await newContractForms(deps, viewer),
      doneFlash(DONE, request.query.done),
    );
    return sendPage(reply, markup, status);
  });

  app.post("/contracts/sample", async (request, reply) => {
    const viewer = viewerOf(request);
    const customerId = field(formOf(request), "customer_id");
    try {
      const input = parseWith(createSampleContractInput, { customer_id: customerId });
      const contract = await deps.services.contracts.createSample(viewer.session.actor, input.customer_id);
      return seeOther(reply, link(contractPath(contract.id), { done: "created" }));
    } catch (error) {
      const { status, flash } = formFailure(error);
      const { markup } = await listPage(deps, viewer, {}, await newContractForms(deps, viewer, customerId), flash);
      return sendPage(reply, markup, status);
    }
  });

  await contractDetailPages(app, deps);
}
