// A contract's credits (docs/api.md, "Credits"): the grants table and the "Grant credit" form on the contract's
// page, and one grant's page with its ledger. contract-detail-pages.ts registers the routes and places the
// section; the form goes through the API's own schema (createCreditGrantInput) and the same service call.
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import { createCreditGrantInput, type CreditGrant } from "../../../domain/credits/credit-schemas.js";
import {
  field,
  formFailure,
  parseWith,
  type FieldErrors,
  type FormBody,
  type FormFailure,
  type Viewer,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import {
  badge,
  contractPath,
  csrfField,
  dataTable,
  emptyState,
  fieldError,
  inputField,
  invalidAttributes,
  money,
  page,
  when,
} from "../layout.js";

/** The grant form's fields as typed; `metrics` are the boxes ticked. */
export interface GrantValues {
  amount?: string | undefined;
  type?: string | undefined;
  name?: string | undefined;
  starts_on?: string | undefined;
  expires_on?: string | undefined;
  priority?: string | undefined;
  metrics: string[];
}

const GRANT_FIELDS = ["amount", "type", "name", "starts_on", "expires_on", "priority", "metrics"] as const;

/** Field names as the grant form's messages may mention them. */
const GRANT_LABELS: Record<string, string> = { starts_on: "the start date", expires_on: "the expiry date" };

const grantPath = (contractId: string, grantId: string) =>
  `${contractPath(contractId)}/credits/${encodeURIComponent(grantId)}`;

const invoiceLink = (number: string | null) =>
  number === null ? "—" : html`<a href="/invoices/${encodeURIComponent(number)}">${number}</a>`;

const statusBadge = (status: CreditGrant["status"]) => badge(status, status === "active" ? "ok" : "plain");

const metricList = (metrics: readonly string[] | null) =>
  metrics === null ? "all usage" : html`${metrics.map((m, i) => html`${i > 0 ? ", " : ""}<code>${m}</code>`)}`;

/** The grant form as posted: each field trimmed (blank is absent), every ticked metric box. */
export function grantValuesOf(form: FormBody): GrantValues {
  return {
    amount: field(form, "amount"),
    type: field(form, "type"),
    name: field(form, "name"),
    starts_on: field(form, "starts_on"),
    expires_on: field(form, "expires_on"),
    priority: field(form, "priority"),
    metrics: form
      .getAll("metrics")
      .map((m) => m.trim())
      .filter((m) => m !== ""),
  };
}

/**
 * The form's values as the API takes them, through its own schema: a priority of digits as a number; what is
 * not one is passed as typed, for the schema to refuse in its words.
 */
export function grantInputOf(values: GrantValues) {
  const { priority, metrics, ...rest } = values;
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rest)) if (value !== undefined) input[name] = value;
  if (metrics.length > 0) input.metrics = metrics;
  if (priority !== undefined) input.priority = /^[+-]?\d{1,6}$/.test(priority) ? Number(priority) : priority;
  return parseWith(createCreditGrantInput, input);
}

/** The grant form's refusal: each error beside its field (`metrics.0` is the metrics boxes), in plain words. */
export function grantFailure(error: unknown): FormFailure {
  const failure = formFailure(
    error,
    (path) => {
      const head = path.split(".")[0] ?? "";
      return (GRANT_FIELDS as readonly string[]).includes(head) ? head : undefined;
    },
    GRANT_LABELS,
  );
  const amount = failure.fields.amount;
  if (amount === "Must be more than 0." || amount === "Enter zero or more: a price cannot be negative.")
    failure.fields.amount = "Enter an amount more than 0.";
  return failure;
}

function grantsTable(grants: readonly CreditGrant[]): SafeHtml {
  if (grants.length === 0) return emptyState("No credit granted on this contract yet.");
  return dataTable(
    "Credit grants",
    [
      { header: "Name", cell: (g) => html`<a href="${grantPath(g.contract, g.id)}">${g.name}</a>` },
      { header: "Type", cell: (g) => g.type },
      { header: "Amount", cell: (g) => money(g.amount, g.currency), numeric: true },
      { header: "Balance", cell: (g) => money(g.balance, g.currency), numeric: true },
      { header: "Starts on", cell: (g) => g.starts_on },
      { header: "Expires on", cell: (g) => g.expires_on ?? "never" },
      { header: "Metrics", cell: (g) => metricList(g.metrics) },
      { header: "Priority", cell: (g) => String(g.priority), numeric: true },
      { header: "Status", cell: (g) => statusBadge(g.status) },
      { header: "Invoice", cell: (g) => (g.type === "prepaid" ? invoiceLink(g.invoice_number) : "—") },
    ],
    grants,
  );
}

function grantForm(
  viewer: Viewer,
  contract: Contract,
  metrics: readonly string[],
  values: GrantValues | undefined,
  errors: FieldErrors,
): SafeHtml {
  const v = values ?? { metrics: [] };
  const typeOption = (type: string, label: string) =>
    html`<option value="${type}"${v.type === type ? html` selected` : ""}>${label}</option>`;
  return html`<details class="card"${values ? html` open` : ""}>
<summary><strong>Grant credit</strong></summary>
<form class="stack" method="post" action="${contractPath(contract.id)}/credits">
  ${csrfField(viewer.ctx)}
  ${inputField({ id: "grant-amount", name: "amount", label: `Amount, ${contract.currency}`, hint: "(more than 0)", inputmode: "decimal", required: true, value: v.amount, error: errors.amount })}
  <div><label for="grant-type">Type</label><select id="grant-type" name="type" required${invalidAttributes("grant-type", errors.type)}>
  <option value="">Choose a type</option>
  ${typeOption("prepaid", "prepaid: bought by the customer, billed as a one-time line")}
  ${typeOption("promotional", "promotional: given, not billed")}
</select>${fieldError("grant-type", errors.type)}</div>
  ${inputField({ id: "grant-name", name: "name", label: "Name", hint: "(optional; shown on invoice lines, “Prepaid credit” or “Promotional credit” by default)", maxlength: 200, value: v.name, error: errors.name })}
  ${inputField({ id: "grant-starts_on", name: "starts_on", type: "date", label: "Starts on", hint: "(optional: the first day, UTC, its usage may burn it; blank: today)", value: v.starts_on, error: errors.starts_on })}
  ${inputField({ id: "grant-expires_on", name: "expires_on", type: "date", label: "Expires on", hint: "(optional: the last day it may be burned; what is left is released after it. Blank: never)", value: v.expires_on, error: errors.expires_on })}
  <fieldset id="grant-metrics"${invalidAttributes("grant-metrics", errors.metrics)}>
    <legend>Metrics <span class="hint">(leave all unchecked to pay for all usage)</span></legend>
    ${metrics.length === 0 ? html`<p class="hint">This contract's program has no usage metrics yet.</p>` : ""}
    ${metrics.map((m) => html`<label><input type="checkbox" name="metrics" value="${m}"${v.metrics.includes(m) ? html` checked` : ""}> <code>${m}</code></label>`)}
    ${fieldError("grant-metrics", errors.metrics)}
  </fieldset>
  ${inputField({ id: "grant-priority", name: "priority", label: "Priority", hint: "(optional, 0 to 100, default 50: a lower number burns first)", inputmode: "numeric", value: v.priority, error: errors.priority })}
  <div><button type="submit">Grant credit</button></div>
</form>
</details>`;
}

/** The contract page's "Credits" section: the grants with their balances, and the form that grants one. */
export function creditsSection(
  viewer: Viewer,
  contract: Contract,
  grants: readonly CreditGrant[],
  metrics: readonly string[],
  values: GrantValues | undefined,
  errors: FieldErrors,
): SafeHtml {
  return html`<section aria-labelledby="credits">
<h2 id="credits">Credits</h2>
<p class="hint">Usage burns the grants as it is rated: the lowest priority number first, then the one expiring first. Each draft invoice shows a negative credit line per grant; a prepaid grant is billed once, as a one-time line.</p>
${grantsTable(grants)}
${grantForm(viewer, contract, metrics, values, errors)}
</section>`;
}

const LEDGER_WORDS = {
  grant: "Granted",
  burn: "Burned by usage",
  void: "Given back (a usage event was voided)",
  expiry: "Released at expiry",
} as const;

function ledgerWords(entry: NonNullable<CreditGrant["ledger"]>[number]): string {
  // The sign from the decimal's text: an amount never passes through a double.
  const givenBack = !String(entry.amount).startsWith("-") && String(entry.amount) !== "0";
  if (entry.kind === "burn" && givenBack) return "Given back (its month was priced again)";
  return LEDGER_WORDS[entry.kind];
}

/** One grant's page: its figures and every movement of its ledger, oldest first. */
export function grantPage(viewer: Viewer, contract: Contract, grant: CreditGrant): string {
  const signed = (amount: CreditGrant["amount"]) => {
    const words = money(amount, grant.currency);
    return Number(String(amount)) > 0 ? `+${words}` : words;
  };
  const facts = html`<div class="card"><dl class="facts">
<dt>Grant id</dt><dd><code>${grant.id}</code></dd>
<dt>Contract</dt><dd><a href="${contractPath(contract.id)}">${contract.id}</a> <span class="hint">(${contract.customer_name})</span></dd>
<dt>Type</dt><dd>${grant.type === "prepaid" ? "prepaid: bought by the customer" : "promotional: given, not billed"}</dd>
<dt>Amount</dt><dd>${money(grant.amount, grant.currency)}</dd>
<dt>Balance</dt><dd><strong>${money(grant.balance, grant.currency)}</strong></dd>
<dt>Starts on</dt><dd>${grant.starts_on}</dd>
<dt>Expires on</dt><dd>${grant.expires_on ?? "never"}</dd>
<dt>Metrics</dt><dd>${metricList(grant.metrics)}</dd>
<dt>Priority</dt><dd>${String(grant.priority)} <span class="hint">(a lower number burns first)</span></dd>
<dt>Status</dt><dd>${statusBadge(grant.status)}</dd>
<dt>Billed on</dt><dd>${grant.type === "prepaid" ? invoiceLink(grant.invoice_number) : "not billed (promotional)"}</dd>
<dt>Granted</dt><dd>${when(grant.created_at)}</dd>
</dl></div>`;
  const ledger = grant.ledger ?? [];
  const table =
    ledger.length === 0
      ? emptyState("No movement yet.")
      : dataTable(
          `Ledger of credit grant ${grant.id}`,
          [
            { header: "Kind", cell: (e) => html`${ledgerWords(e)} <span class="hint">(${e.kind})</span>` },
            { header: "Amount", cell: (e) => signed(e.amount), numeric: true },
            { header: "Invoice", cell: (e) => invoiceLink(e.invoice_number) },
            { header: "When", cell: (e) => when(e.created_at) },
          ],
          ledger,
        );
  return page(
    viewer.ctx,
    `Credit grant ${grant.name}`,
    html`<p><a href="${contractPath(contract.id)}">← Contract ${contract.id}</a></p>${facts}<h2>Ledger</h2><p class="hint">Every movement, oldest first: the entries add up to the balance.</p>${table}`,
  );
}
