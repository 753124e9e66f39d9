import type { FastifyInstance } from "fastify";
import {
  createCustomerInput,
  type Customer,
  INVOICE_DELIVERIES,
  updateCustomerInput,
} from "../../../domain/customers/customer-schemas.js";
import { ConflictError } from "../../../domain/kernel/errors.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  type FormFailure,
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
  fieldError,
  inputField,
  invalidAttributes,
  doneFlash,
  emptyState,
  page,
  pager,
  when,
  type Flash,
  money,
} from "../layout.js";

const DONE: Record<string, Flash> = {
  created: { kind: "ok", message: "Customer created." },
  saved: { kind: "ok", message: "Customer saved. Invoices already issued keep what they were issued with." },
};

/** The edit form's fields: every field PATCH /v1/billing/customers/{id} takes, by its API name. */
const EDIT_FIELDS = [
  "name",
  "external_id",
  "email",
  "domain",
  "country",
  "address",
  "registration_number",
  "payment_terms_days",
  "tax_id",
  "invoice_memo",
  "invoice_delivery",
] as const;
type EditValues = Partial<Record<(typeof EDIT_FIELDS)[number], string>>;

const EDIT_LABELS: Record<string, string> = {
  external_id: "the external id",
  payment_terms_days: "the payment terms",
  invoice_delivery: "the delivery",
  invoice_memo: "the memo",
  tax_id: "the tax id",
};

function editValuesOf(customer: Customer): EditValues {
  const values: EditValues = {};
  for (const name of EDIT_FIELDS) {
    const value = customer[name];
    if (value !== null && value !== undefined) values[name] = String(value);
  }
  return values;
}

function editForm(viewer: Viewer, customer: Customer, values: EditValues, errors: FieldErrors = {}): SafeHtml {
  const input = (name: keyof EditValues, label: string, hint?: string, type = "text") =>
    inputField({
      id: `edit-${name}`,
      name,
      label,
      hint,
      type,
      value: values[name],
      required: name === "name",
      error: errors[name],
      ...(type === "number" ? { inputmode: "numeric" as const } : {}),
    });
  const delivery = values.invoice_delivery ?? "none";
  return html`<details class="card"${Object.keys(errors).length > 0 ? html` open` : ""}>
<summary><strong>Edit this customer</strong></summary>
<form class="stack" method="post" action="/customers/${customer.id}">
  ${csrfField(viewer.ctx)}
  <p class="hint">A blank field is cleared. Invoices already issued keep the terms, address and memo they were issued with.</p>
  ${input("name", "Name")}
  ${input("external_id", "External id", "(your own id; unique)")}
  ${input("email", "Billing email", "(optional)", "email")}
  ${input("domain", "Domain", "(optional, e.g. example.com)")}
  ${input("country", "Country", "(optional)")}
  <div><label for="edit-address">Address <span class="hint">(optional, several lines)</span></label><textarea id="edit-address" name="address" rows="3"${invalidAttributes("edit-address", errors.address)}>${values.address ?? ""}</textarea>${fieldError("edit-address", errors.address)}</div>
  ${input("registration_number", "Registration number", "(optional)")}
  ${input("payment_terms_days", "Payment terms, days", "(blank: the account's default; a contract's own terms win)", "number")}
  ${input("tax_id", "Tax id", "(optional: VAT, GST, EIN…)")}
  ${input("invoice_memo", "Invoice memo", "(optional: a PO number, printed on each invoice)")}
  <div><label for="edit-invoice_delivery">Invoice delivery</label><select id="edit-invoice_delivery" name="invoice_delivery"${invalidAttributes("edit-invoice_delivery", errors.invoice_delivery)}>
    ${INVOICE_DELIVERIES.map((d) => html`<option value="${d}"${d === delivery ? html` selected` : ""}>${d === "email" ? "Email each invoice when issued" : "Not sent by the service"}</option>`)}
  </select>${fieldError("edit-invoice_delivery", errors.invoice_delivery)}</div>
  <div><button type="submit">Save customer</button></div>
</form>
</details>`;
}

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
  query: { external_id?: string; search?: string; starting_after?: string },
  form: SafeHtml,
  flash?: Flash,
) {
  const externalId = query.external_id?.trim() || undefined;
  // A search longer than the API takes finds nothing, as it would find nothing anyway (names are 200 at most).
  const searched = query.search?.trim() || undefined;
  const result =
    searched !== undefined && searched.length > 200
      ? { items: [], hasMore: false }
      : await deps.services.customers.list(
          viewer.session.actor,
          { externalId, search: searched },
          { limit: 25, startingAfter: query.starting_after },
        );
  const search = html`<form class="inline" method="get" action="/customers" role="search" aria-label="Search customers">
  <div class="field"><label for="search-customers">Search by name or external id</label><input id="search-customers" name="search" type="search" maxlength="200" value="${searched ?? ""}"></div>
  <button type="submit" class="secondary">Search</button>${externalId || searched ? html` <a href="/customers">Clear</a>` : ""}
</form>`;
  const body =
    result.items.length === 0
      ? emptyState(
          searched
            ? `No customer's name contains “${searched}”, and none has it as external id.`
            : externalId
              ? `No customer has the external id “${externalId}”.`
              : "No customers yet. Create your first one above.",
        )
      : html`${customersTable(result.items)}${pager("/customers", { external_id: externalId, search: searched, starting_after: query.starting_after }, result.hasMore, result.items.at(-1)?.id)}`;
  return page(viewer.ctx, "Customers", html`${form}${search}<h2>All customers</h2>${body}`, { flash });
}

export async function customerPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: { external_id?: string; search?: string; starting_after?: string; done?: string } }>(
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
    return sendPage(
      reply,
      await detailPage(
        deps,
        viewer,
        customer,
        editForm(viewer, customer, editValuesOf(customer)),
        doneFlash(DONE, request.query.done),
      ),
    );
  });

  app.post<{ Params: { id: string } }>("/customers/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const customer = await deps.services.customers.get(viewer.session.actor, request.params.id);
    const form = formOf(request);
    const values: EditValues = {};
    for (const name of EDIT_FIELDS) {
      // A browser sends a textarea's line breaks as CRLF: kept as the API's "\n".
      const value = field(form, name)?.replace(/\r\n?/g, "\n");
      if (value !== undefined) values[name] = value;
    }
    try {
      const terms = values.payment_terms_days;
      // The form sends every field: a blank one clears it (name cannot be cleared: it is refused as required).
      const input = parseWith(updateCustomerInput, {
        ...Object.fromEntries(EDIT_FIELDS.map((name) => [name, values[name] ?? null])),
        name: values.name ?? "",
        invoice_delivery: values.invoice_delivery ?? "none",
        payment_terms_days: terms === undefined ? null : /^-?\d+$/.test(terms) ? Number(terms) : terms,
      });
      await deps.services.customers.update(viewer.session.actor, customer.id, input);
      return seeOther(reply, `/customers/${customer.id}?done=saved`);
    } catch (error) {
      let failure: FormFailure;
      if (error instanceof ConflictError && error.code === "customer_exists") {
        failure = placedFailure(409, {
          external_id: "Another customer already has this external id; external ids are unique.",
        });
      } else {
        failure = formFailure(
          error,
          (path) => ((EDIT_FIELDS as readonly string[]).includes(path) ? path : undefined),
          EDIT_LABELS,
        );
      }
      return sendPage(
        reply,
        await detailPage(deps, viewer, customer, editForm(viewer, customer, values, failure.fields), failure.flash),
        failure.status,
      );
    }
  });
}

async function detailPage(
  deps: DashboardDeps,
  viewer: Viewer,
  customer: Customer,
  edit: SafeHtml,
  flash: Flash | undefined,
): Promise<string> {
  const contracts = (await deps.services.contracts.list(viewer.session.actor, undefined)).filter(
    (c) => c.customer_id === customer.id,
  );
  const facts = html`<div class="card"><dl class="facts">
<dt>Id</dt><dd><code>${customer.id}</code></dd>
<dt>External id</dt><dd>${customer.external_id ?? "—"}</dd>
<dt>Email</dt><dd>${customer.email ?? "—"}</dd>
<dt>Domain</dt><dd>${customer.domain ?? "—"}</dd>
<dt>Country</dt><dd>${customer.country ?? "—"}</dd>
<dt>Address</dt><dd class="lines">${customer.address ?? "—"}</dd>
<dt>Registration number</dt><dd>${customer.registration_number ?? "—"}</dd>
<dt>Payment terms</dt><dd>${customer.payment_terms ?? "the account's default"}</dd>
<dt>Tax id</dt><dd>${customer.tax_id ?? "—"}</dd>
<dt>Invoice memo</dt><dd>${customer.invoice_memo ?? "—"}</dd>
<dt>Invoice delivery</dt><dd>${customer.invoice_delivery === "email" ? "emailed when issued" : "not sent by the service"}</dd>
<dt>Credit balance</dt><dd>${customer.credit_balances.length === 0 ? "none" : customer.credit_balances.map((b, i) => html`${i > 0 ? ", " : ""}${money(b.amount, b.currency)}`)}</dd>
<dt>Created</dt><dd>${when(customer.created_at)}</dd>
<dt>Changed</dt><dd>${customer.updated_at ? when(customer.updated_at) : "never"}</dd>
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
  return page(viewer.ctx, customer.name, html`${facts}${edit}<h2>Contracts</h2>${sample}${contractList}`, { flash });
}
