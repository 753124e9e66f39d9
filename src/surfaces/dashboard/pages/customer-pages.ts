import type { FastifyInstance } from "fastify";
import { createCustomerInput, type Customer } from "../../../domain/customers/customer-schemas.js";
import { ConflictError } from "../../../domain/kernel/errors.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  parseWith,
  placedFailure,
  seeOther,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import {
  contractPath,
  csrfField,
  dataTable,
  inputField,
  doneFlash,
  emptyState,
  page,
  pager,
  when,
  type Flash,
} from "../layout.js";

const DONE: Record<string, Flash> = { created: { kind: "ok", message: "Customer created." } };

interface CustomerFormValues {
  name?: string;
  external_id?: string;
  email?: string;
  domain?: string;
  country?: string;
  payment_terms_days?: string;
}

function createForm(viewer: Viewer, values: CustomerFormValues = {}, errors: FieldErrors = {}): SafeHtml {
  const input = (name: keyof CustomerFormValues, label: string, type = "text", extra = "") =>
    inputField({
      id: `customer-${name}`,
      name,
      label,
      hint: extra || undefined,
      type,
      value: values[name],
      required: name === "name",
      error: errors[name],
    });
  return html`<details class="card"${Object.keys(values).length > 0 ? html` open` : ""}>
<summary><strong>Create a customer</strong></summary>
<form class="stack" method="post" action="/customers">
  ${csrfField(viewer.ctx)}
  ${input("name", "Name")}
  ${input("external_id", "External id", "text", "(your own id; unique)")}
  ${input("email", "Billing email", "email", "(optional)")}
  ${input("domain", "Domain", "text", "(optional, e.g. example.com)")}
  ${input("country", "Country", "text", "(optional)")}
  ${input("payment_terms_days", "Payment terms, days", "number", "(optional, e.g. 30 for Net 30)")}
  <div><button type="submit">Create customer</button></div>
</form>
</details>`;
}

function customersTable(customers: Customer[]): SafeHtml {
  return dataTable(
    "Customers",
    [
      { header: "Name", cell: (c) => html`<a href="/customers/${c.id}">${c.name}</a>` },
      { header: "External id", cell: (c) => (c.external_id ? html`<code>${c.external_id}</code>` : "—") },
      { header: "Email", cell: (c) => c.email ?? "—" },
      { header: "Terms", cell: (c) => c.payment_terms ?? "—" },
      { header: "Created", cell: (c) => when(c.created_at) },
    ],
    customers,
  );
}

async function listPage(
  deps: DashboardDeps,
  viewer: Viewer,
  query: { external_id?: string; starting_after?: string },
  form: SafeHtml,
  flash?: Flash,
) {
  const externalId = query.external_id?.trim() || undefined;
  const result = await deps.services.customers.list(
    viewer.session.actor,
    { externalId },
    { limit: 25, startingAfter: query.starting_after },
  );
  const search = html`<form class="inline" method="get" action="/customers" role="search" aria-label="Search customers">
  <div class="field"><label for="search-external-id">Search by external id</label><input id="search-external-id" name="external_id" type="search" value="${externalId ?? ""}"></div>
  <button type="submit" class="secondary">Search</button>${externalId ? html` <a href="/customers">Clear</a>` : ""}
</form>`;
  const body =
    result.items.length === 0
      ? emptyState(
          externalId
            ? `No customer has the external id “${externalId}”.`
            : "No customers yet. Create your first one above.",
        )
      : html`${customersTable(result.items)}${pager("/customers", { external_id: externalId, starting_after: query.starting_after }, result.hasMore, result.items.at(-1)?.id)}`;
  return page(viewer.ctx, "Customers", html`${form}${search}<h2>All customers</h2>${body}`, { flash });
}

export async function customerPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: { external_id?: string; starting_after?: string; done?: string } }>(
    "/customers",
    async (request, reply) => {
      const viewer = viewerOf(request);
      return sendPage(
        reply,
        await listPage(deps, viewer, request.query, createForm(viewer), doneFlash(DONE, request.query.done)),
      );
    },
  );

  app.post("/customers", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values: CustomerFormValues = {};
    for (const key of ["name", "external_id", "email", "domain", "country", "payment_terms_days"] as const) {
      const value = field(form, key);
      if (value !== undefined) values[key] = value;
    }
    try {
      const terms = values.payment_terms_days;
      const input = parseWith(createCustomerInput, {
        ...values,
        payment_terms_days: terms === undefined ? undefined : /^-?\d+$/.test(terms) ? Number(terms) : terms,
      });
      const customer = await deps.services.customers.create(viewer.session.actor, input);
      return seeOther(reply, `/customers/${customer.id}?done=created`);
    } catch (error) {
      if (error instanceof ConflictError && error.code === "customer_exists") {
        const existing = (error.extra?.customer as { name?: string } | undefined)?.name;
        const { fields, flash } = placedFailure(409, {
          external_id: `${existing ? `${existing} already has` : "Another customer already has"} this external id; external ids are unique.`,
        });
        return sendPage(reply, await listPage(deps, viewer, {}, createForm(viewer, values, fields), flash), 409);
      }
      const { status, flash, fields } = formFailure(error, (path) => path, { payment_terms_days: "the payment terms" });
      return sendPage(reply, await listPage(deps, viewer, {}, createForm(viewer, values, fields), flash), status);
    }
  });

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>("/customers/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const customer = await deps.services.customers.get(viewer.session.actor, request.params.id);
    const contracts = (await deps.services.contracts.list(viewer.session.actor, undefined)).filter(
      (c) => c.customer_id === customer.id,
    );
    const facts = html`<div class="card"><dl class="facts">
<dt>Id</dt><dd><code>${customer.id}</code></dd>
<dt>External id</dt><dd>${customer.external_id ?? "—"}</dd>
<dt>Email</dt><dd>${customer.email ?? "—"}</dd>
<dt>Domain</dt><dd>${customer.domain ?? "—"}</dd>
<dt>Country</dt><dd>${customer.country ?? "—"}</dd>
<dt>Payment terms</dt><dd>${customer.payment_terms ?? "—"}</dd>
<dt>Created</dt><dd>${when(customer.created_at)}</dd>
</dl></div>`;
    const contractList =
      contracts.length === 0
        ? emptyState("No contracts for this customer yet.")
        : dataTable(
            "Contracts of this customer",
            [
              { header: "Contract", cell: (c) => html`<a href="${contractPath(c.id)}">${c.id}</a>` },
              { header: "Status", cell: (c) => c.status },
            ],
            contracts,
          );
    const sample = html`<form method="post" action="/contracts/sample" class="actions">${csrfField(viewer.ctx)}<input type="hidden" name="customer_id" value="${customer.id}"><button type="submit">Create a sample contract</button></form>`;
    return sendPage(
      reply,
      page(viewer.ctx, customer.name, html`${facts}<h2>Contracts</h2>${sample}${contractList}`, {
        flash: doneFlash(DONE, request.query.done),
      }),
    );
  });
}
