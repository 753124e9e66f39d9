import type { FastifyInstance } from "fastify";
import {
  addPricingRuleBody,
  CONTRACT_STATUSES,
  createSampleContractInput,
  toRuleChange,
  updatePricingRuleBody,
  type Contract,
} from "../../../domain/contracts/contract-schemas.js";
import {
  versionHistoryDiff,
  type DiffedRuleField,
  type RuleDiff,
  type VersionDiff,
} from "../../../domain/contracts/pricing-diff.js";
import {
  RULE_MODELS,
  RULE_TYPES,
  type PresentedRule,
  type RuleFields,
} from "../../../domain/contracts/pricing-rule.js";
import { fractionOfPercent, rulePriceWords } from "../../../domain/contracts/rule-price-wording.js";
import { readTierLines, TIER_LINE_FORMAT } from "../../../domain/contracts/tier-lines.js";
import type { Customer } from "../../../domain/customers/customer-schemas.js";
import type { PricingPreview } from "../../../domain/invoices/invoice-schemas.js";
import { parseDate, periodOf, requireDayInTerm, type BillingPeriod } from "../../../domain/kernel/billing-period.js";
import { ConflictError, NotFoundError, ValidationError } from "../../../domain/kernel/errors.js";
import {
  field,
  formFailure,
  formOf,
  parseWith,
  placedFailure,
  plainWords,
  seeOther,
  sendPage,
  viewerOf,
  type DashboardDeps,
  type FieldErrors,
  type FormBody,
  type Viewer,
} from "../page-kit.js";
import { html, type HtmlValue, type SafeHtml } from "../html.js";
import { monthName } from "../format.js";
import { sendPdf } from "../../http/send-documents.js";
import { uploadCard } from "./contract-upload-pages.js";
import {
  creditsSection,
  grantFailure,
  grantInputOf,
  grantPage,
  grantValuesOf,
  type GrantValues,
} from "./credit-pages.js";
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
  when,
  type Flash,
} from "../layout.js";

const DONE: Record<string, Flash> = {
  created: { kind: "ok", message: "Sample contract created." },
  uploaded: {
    kind: "ok",
    message: "Contract saved with its signed agreement. Usage sent with its id is rated from now on.",
  },
  "rule-added": { kind: "ok", message: "Rule added: the program has a new version, used for usage from now on." },
  "rule-changed": { kind: "ok", message: "Rule changed: the program has a new version, used for usage from now on." },
  "rule-added-dated": {
    kind: "ok",
    message:
      "Rule added from the date given: usage from that day on is priced with it (open draft invoices from that day were priced again).",
  },
  "rule-changed-dated": {
    kind: "ok",
    message:
      "Rule changed from the date given: usage from that day on is priced with it (open draft invoices from that day were priced again).",
  },
  "credit-granted": {
    kind: "ok",
    message: "Credit granted: usage burns it as it is rated, from its start date. See it under Credits.",
  },
  "prepaid-granted": {
    kind: "ok",
    message:
      "Prepaid credit granted and billed as a one-time line on the contract's draft invoice (see its invoice under Credits). Usage burns it as it is rated, from its start date.",
  },
};

/** The sample form lists this many customers, newest first; any other customer has the same button on its own page. */
const CUSTOMER_CHOICES = 100;

const STATUS_TONE: Record<Contract["status"], "ok" | "bad" | "warn" | "plain"> = {
  draft: "plain",
  active: "ok",
  completed: "plain",
  cancelled: "warn",
  terminated: "bad",
};

const statusBadge = (status: Contract["status"]) => badge(status, STATUS_TONE[status] ?? "plain");

// ---------------------------------------------------------------------------------------------------
// The list

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
  const label = (c: Customer) => (c.external_id ? `${c.name} (${c.external_id})` : c.name);
  return html`<section class="card" aria-labelledby="new-contract">
<h2 id="new-contract">Create a sample contract</h2>
<p class="hint">An active USD contract with monthly billing: 20.00 per domestic wire, 30.00 per international wire and a 1,000.00 monthly minimum.</p>
<form class="inline" method="post" action="/contracts/sample">
  ${csrfField(viewer.ctx)}
  <div class="field"><label for="sample-customer">Customer</label><select id="sample-customer" name="customer_id" required>
    ${customers.items.map((c) => html`<option value="${c.id}"${c.id === selected ? html` selected` : ""}>${label(c)}</option>`)}
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

// ---------------------------------------------------------------------------------------------------
// The detail: facts, the current program and its history

const FIELD_LABEL: Record<DiffedRuleField, string> = {
  name: "name",
  type: "type",
  model: "model",
  amount: "amount",
  rate: "rate",
  metric: "metric",
  frequency: "frequency",
  monthly_cap: "monthly cap",
  currency: "currency",
  counterparty: "counterparty",
  counterparty_side: "counterparty side",
  pair: "pair",
  tiers: "tiers",
  package_size: "package size",
  fixed_fee: "fixed fee",
  min_fee: "minimum fee",
  max_fee: "maximum fee",
  allow_rate_above_one: "rate above 100 % allowed",
};

function scopeOf(rule: PresentedRule): string {
  if (rule.type !== "usage") return "—";
  const parts = [
    rule.counterparty ? `counterparty ${rule.counterparty}` : undefined,
    rule.counterparty_side ? `side ${rule.counterparty_side}` : undefined,
    rule.pair ? `pair ${rule.pair}` : undefined,
  ].filter((p): p is string => p !== undefined);
  return parts.length === 0 ? "all events" : parts.join(", ");
}

function rulesTable(caption: string, rules: readonly PresentedRule[]): SafeHtml {
  if (rules.length === 0) return emptyState("This pricing program has no rules.");
  return dataTable(
    caption,
    [
      { header: "Name", cell: (r) => r.name },
      { header: "Type", cell: (r) => r.type.replace("_", "-") },
      { header: "Model", cell: (r) => r.model },
      { header: "Metric", cell: (r) => (r.metric ? html`<code>${r.metric}</code>` : "—") },
      { header: "Price", cell: priceCell, numeric: true },
      { header: "Monthly cap", cell: (r) => (r.monthly_cap ? money(r.monthly_cap, r.currency) : "—"), numeric: true },
      { header: "Frequency", cell: (r) => r.frequency ?? "—" },
      { header: "Applies to", cell: (r) => scopeOf(r) },
      { header: "Rule id", cell: (r) => html`<code>${r.id}</code>` },
    ],
    rules,
  );
}

/** A rule's price in words; a percentage rule's rate also as the fraction stored, which the API sends and takes. */
function priceCell(rule: PresentedRule): HtmlValue {
  const words = rulePriceWords(rule);
  return rule.model === "percentage" && rule.rate !== null
    ? html`${words} <span class="hint">(rate stored as <code>${String(rule.rate)}</code>)</span>`
    : words;
}

/** One line about a rule for the history: its name and what it charges. */
const ruleLine = (rule: PresentedRule): SafeHtml =>
  html`<strong>${rule.name}</strong> <span class="hint">(${rule.type.replace("_", "-")}${rule.metric ? html`, metric <code>${rule.metric}</code>` : ""}; <code>${rule.id}</code>)</span>: ${rulePriceWords(rule)}${
    rule.monthly_cap ? `, capped at ${money(rule.monthly_cap, rule.currency)} a month` : ""
  }${rule.frequency ? `, ${rule.frequency}` : ""}`;

const shown = (value: string | null) => (value === null ? html`<em>none</em>` : html`<code>${value}</code>`);

function diffItem(diff: RuleDiff): SafeHtml {
  // The words carry the meaning; the colours (diff-add, diff-del, diff-chg) only repeat it.
  if (diff.kind === "added")
    return html`<li class="diff-add"><span class="diff-kind">Added</span> ${ruleLine(diff.rule)}</li>`;
  if (diff.kind === "removed")
    return html`<li class="diff-del"><span class="diff-kind">Removed</span> ${ruleLine(diff.rule)}</li>`;
  return html`<li class="diff-chg"><span class="diff-kind">Changed</span> <strong>${diff.after.name}</strong> <span class="hint">(<code>${diff.after.id}</code>)</span>
<ul class="diff-fields">${diff.changes.map(
    (c) =>
      html`<li>${FIELD_LABEL[c.field]}: <del>${shown(c.before)}</del> <span aria-hidden="true">→</span><span class="visually-hidden">changed to</span> <ins>${shown(c.after)}</ins></li>`,
  )}</ul></li>`;
}

function historySection(history: VersionDiff[], current: number, scheduled: ReadonlySet<number>): SafeHtml {
  if (history.length === 0) return emptyState("This contract has no pricing program versions.");
  return html`<ol class="versions" reversed>${history.map((v) => {
    const headingId = `version-${v.version}`;
    const kept =
      v.unchanged > 0
        ? html`<p class="hint">${v.unchanged === 1 ? "1 rule" : `${v.unchanged} rules`} unchanged.</p>`
        : "";
    const changes: HtmlValue =
      v.diffs.length === 0
        ? html`<p>No rule changed in this version.</p>`
        : html`<ul class="diff-list">${v.diffs.map(diffItem)}</ul>`;
    return html`<li class="card version">
<h3 id="${headingId}">Version ${v.version}${v.version === current ? html` ${badge("current", "ok")}` : scheduled.has(v.version) ? html` ${badge("scheduled", "warn")}` : ""}</h3>
<p class="hint">Effective ${v.effective_date}${v.created_at ? html` · written ${when(v.created_at)}` : ""}${v.version === 1 ? " · the first version" : ` · compared with version ${v.version - 1}`}</p>
${changes}${kept}
</li>`;
  })}</ol>`;
}

// ---------------------------------------------------------------------------------------------------
// Changing the program: the API's own rule schemas and the same service calls, so a form accepts what the API does

/** Field names as the rule forms' messages may mention them. */
const RULE_LABELS: Record<string, string> = { monthly_cap: "the monthly cap" };

const ADD_FIELDS = [
  "name",
  "type",
  "model",
  "metric",
  "amount",
  "rate",
  "allow_rate_above_one",
  "fixed_fee",
  "min_fee",
  "max_fee",
  "package_size",
  "tiers",
  "monthly_cap",
  "effective_date",
] as const;
type AddValues = Partial<Record<(typeof ADD_FIELDS)[number], string>>;
const CHANGE_FIELDS = ["rule_id", "amount", "rate", "allow_rate_above_one", "effective_date"] as const;
type ChangeValues = Partial<Record<(typeof CHANGE_FIELDS)[number], string>>;

/** What the rule forms show: blank, or what was typed when the service refused it (or when it was previewed). */
interface RuleForms {
  add?: AddValues;
  change?: ChangeValues;
  /** The "Grant credit" form as typed, when the service refused it (credit-pages.ts). */
  grant?: GrantValues;
  /** The refused form's errors, by field name. */
  errors?: FieldErrors;
  /** The previewed change, priced against a month: shown under the forms. Nothing of it is stored. */
  preview?: { result: PricingPreview; effectiveDate: string | null };
}

function valuesOf<K extends string>(form: FormBody, names: readonly K[]): Partial<Record<K, string>> {
  const values: Partial<Record<K, string>> = {};
  for (const name of names) {
    // Tiers keep their lines; trimming the whole text is enough (field() trims).
    const value = field(form, name);
    if (value !== undefined) values[name] = value;
  }
  return values;
}

/** The form's hint for the rate, which it takes as a percentage. */
const RATE_HINT = "(percentage rules: a percentage, 2.35 for 2.35 %; stored as the fraction 0.0235)";
const ABOVE_ONE_LABEL = "allow a rate above 100 %";

/**
 * The rule fields a rule form gives, as the API takes them: the rate typed as a percentage shifted to the
 * fraction a rule stores (2.35 → 0.0235, exactly), the tiers' lines read into `tiers`, the box ticked as
 * allow_rate_above_one. What is not a number is passed as typed, for the API's schema to refuse in its words.
 */
function ruleInputOf(values: AddValues): Record<string, unknown> {
  const { rate, tiers, allow_rate_above_one: aboveOne, ...rest } = values;
  const input: Record<string, unknown> = { ...rest };
  if (rate !== undefined) input.rate = fractionOfPercent(rate) ?? rate;
  if (aboveOne !== undefined) input.allow_rate_above_one = true;
  if (tiers !== undefined) {
    const read = readTierLines(tiers);
    if (read.error !== undefined)
      throw new ValidationError(`tiers: ${read.error}`, "invalid_request", [{ path: "tiers", message: read.error }]);
    input.tiers = read.tiers;
  }
  return input;
}

/** The form field a refusal's path names: any part of the tiers is the tiers' text. */
const ruleFieldOf = (path: string): string => (path.startsWith("tiers.") ? "tiers" : path);

/**
 * A refusal of the rate in the words of a form that takes a percentage (the API's words speak of the fraction):
 * a rate above 100 % without the box ticked, a percentage rule without a rate.
 */
function percentRateWords(fields: FieldErrors, typed: string | undefined): FieldErrors {
  const message = fields.rate;
  if (message === undefined) return fields;
  if (message.startsWith("Is a fraction:"))
    return {
      ...fields,
      rate: `${typed ?? "The rate"} % is above 100 %: tick “${ABOVE_ONE_LABEL}” if that rate is meant.`,
    };
  if (message === plainWords("is required on a percentage rule"))
    return { ...fields, rate: "Enter the rate as a percentage: 2.9 for 2.9 %." };
  return fields;
}

/** The optional day a change applies from (`effective_date`), as the API takes it. */
function effectiveDateField(id: string, contract: Contract, value: string | undefined, error: string | undefined) {
  return inputField({
    id,
    name: "effective_date",
    type: "date",
    label: "Effective from",
    hint: `(optional: the day, UTC, from which usage is priced with the change, within the term ${contract.start_date} to ${contract.end_date ?? "open-ended"}; open draft invoices from that day are priced again. Blank: usage from now on)`,
    value,
    error,
  });
}

/** A rule form's buttons: save, or price the change against this month without saving it. */
const ruleFormButtons = (save: string) =>
  html`<div><button type="submit" name="action" value="save">${save}</button> <button type="submit" class="secondary" name="action" value="preview">Preview against this month</button></div>`;

/** The box that sends allow_rate_above_one. */
function aboveOneBox(id: string, checked: boolean, error: string | undefined): SafeHtml {
  return html`<div class="field"><input type="checkbox" id="${id}" name="allow_rate_above_one" value="yes"${checked ? html` checked` : ""}${invalidAttributes(id, error)}> <label for="${id}">${ABOVE_ONE_LABEL}</label>${fieldError(id, error)}</div>`;
}

function choice(
  id: string,
  name: string,
  label: string,
  options: readonly string[],
  selected: string | undefined,
  blank: string,
  error?: string,
): SafeHtml {
  return html`<div><label for="${id}">${label}</label><select id="${id}" name="${name}"${invalidAttributes(id, error)}>
  <option value="">${blank}</option>
  ${options.map((o) => html`<option value="${o}"${o === selected ? html` selected` : ""}>${o.replace("_", "-")}</option>`)}
</select>${fieldError(id, error)}</div>`;
}

function addRuleForm(viewer: Viewer, contract: Contract, values: AddValues | undefined, errors: FieldErrors): SafeHtml {
  const v = values ?? {};
  const text = (name: keyof AddValues, label: string, hint: string, mode = "text") =>
    inputField({
      id: `add-${name}`,
      name,
      label,
      hint,
      value: v[name],
      ...(mode === "decimal" ? { inputmode: "decimal" as const } : {}),
      error: errors[name],
    });
  return html`<details class="card"${values ? html` open` : ""}>
<summary><strong>Add a pricing rule</strong></summary>
<form class="stack" method="post" action="${contractPath(contract.id)}/rules">
  ${csrfField(viewer.ctx)}
  ${text("name", "Name", "(optional; the metric by default)")}
  ${choice("add-type", "type", "Type", RULE_TYPES, v.type, "Usage when a metric is given", errors.type)}
  ${choice("add-model", "model", "Model", RULE_MODELS, v.model, "Percentage when a rate is given, else flat", errors.model)}
  ${text("metric", "Metric", "(usage rules: the event's metric name)")}
  ${text("amount", `Amount, ${contract.currency}`, "(flat rules: per unit on usage rules; package rules: per started package)", "decimal")}
  ${text("rate", "Rate, %", RATE_HINT, "decimal")}
  ${aboveOneBox("add-allow_rate_above_one", v.allow_rate_above_one !== undefined, errors.allow_rate_above_one)}
  ${text("fixed_fee", `Fixed fee, ${contract.currency}`, "(optional, percentage rules: added to each event's charge)", "decimal")}
  ${text("min_fee", `Minimum fee, ${contract.currency}`, "(optional, percentage rules: the least per event, fixed fee included)", "decimal")}
  ${text("max_fee", `Maximum fee, ${contract.currency}`, "(optional, percentage rules: the most per event, fixed fee included)", "decimal")}
  ${text("package_size", "Package size", "(package rules: units per package, a whole number)", "decimal")}
  <div><label for="add-tiers">Tiers <span class="hint" id="add-tiers-hint">(graduated and volume rules: one tier a line, “${TIER_LINE_FORMAT}”, up_to inclusive, - for the last tier's up_to, which has none; such as 1000 0.10, then 10000 0.08 5.00, then - 0.05)</span></label><textarea id="add-tiers" name="tiers" rows="4"${invalidAttributes("add-tiers", errors.tiers)}>${v.tiers ?? ""}</textarea>${fieldError("add-tiers", errors.tiers)}</div>
  ${text("monthly_cap", `Monthly cap, ${contract.currency}`, "(optional, usage rules)", "decimal")}
  ${effectiveDateField("add-effective_date", contract, v.effective_date, errors.effective_date)}
  ${ruleFormButtons("Add rule")}
</form>
</details>`;
}

function changeRuleForm(
  viewer: Viewer,
  contract: Contract,
  rules: readonly PresentedRule[],
  values: ChangeValues | undefined,
  errors: FieldErrors,
): SafeHtml {
  if (rules.length === 0) return html``;
  const v = values ?? {};
  return html`<details class="card"${values ? html` open` : ""}>
<summary><strong>Change a rule's price</strong></summary>
<form class="stack" method="post" action="${contractPath(contract.id)}/rules/change">
  ${csrfField(viewer.ctx)}
  <div><label for="change-rule">Rule</label><select id="change-rule" name="rule_id" required${invalidAttributes("change-rule", errors.rule_id)}>
    ${rules.map((r) => html`<option value="${r.id}"${r.id === v.rule_id ? html` selected` : ""}>${r.name}: ${rulePriceWords(r)}</option>`)}
  </select>${fieldError("change-rule", errors.rule_id)}</div>
  ${inputField({ id: "change-amount", name: "amount", label: `New amount, ${contract.currency}`, hint: "(flat rules)", value: v.amount, inputmode: "decimal", error: errors.amount })}
  ${inputField({ id: "change-rate", name: "rate", label: "New rate, %", hint: RATE_HINT, value: v.rate, inputmode: "decimal", error: errors.rate })}
  ${aboveOneBox("change-allow_rate_above_one", v.allow_rate_above_one !== undefined, errors.allow_rate_above_one)}
  ${effectiveDateField("change-effective_date", contract, v.effective_date, errors.effective_date)}
  ${ruleFormButtons("Change price")}
</form>
</details>`;
}

/** The version in force today with the scheduled ones, or none when the contract has no program. */
async function pricingOf(deps: DashboardDeps, viewer: Viewer, contractId: string) {
  try {
    return await deps.services.contracts.getPricing(viewer.session.actor, contractId);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

type Pricing = NonNullable<Awaited<ReturnType<typeof pricingOf>>>;

/** The metrics a grant may be limited to: the contract's, and those of its program today and scheduled. */
function metricsOfContract(contract: Contract, pricing: Pricing | undefined): string[] {
  const rules = [...(pricing?.rules ?? []), ...(pricing?.upcoming.flatMap((v) => v.rules) ?? [])];
  const metrics = new Set([...contract.metrics, ...rules.map((r) => r.metric).filter((m): m is string => !!m)]);
  return [...metrics].sort();
}

/** The versions that come into force after today: when, and which version. */
function scheduledSection(upcoming: Pricing["upcoming"]): SafeHtml {
  if (upcoming.length === 0) return html``;
  return html`<section class="card" aria-labelledby="scheduled-changes">
<h2 id="scheduled-changes">Scheduled changes</h2>
<p class="hint">Versions of the program that come into force later; usage from each day on is priced with it.</p>
<ul class="scheduled">${upcoming.map(
    (v) =>
      html`<li>From <strong>${v.effective_date}</strong>: <a href="#version-${v.version}">version ${v.version}</a> <span class="hint">(${v.rules.length === 1 ? "1 rule" : `${v.rules.length} rules`})</span></li>`,
  )}</ul>
</section>`;
}

/** The previewed change beside the month's invoice as it stands: both totals and the difference per line. */
function previewPanel(
  contract: Contract,
  preview: PricingPreview,
  effectiveDate: string | null,
  saveButton: string,
): SafeHtml {
  const currency = preview.currency;
  const month = monthName(preview.billing_period.start);
  const actualName =
    preview.actual.number === null
      ? "no invoice yet"
      : html`invoice <a href="/invoices/${encodeURIComponent(preview.actual.number)}">${preview.actual.number}</a>, ${preview.actual.status ?? ""}`;
  const signed = (amount: PricingPreview["difference"]["total"]) => {
    const words = money(amount, currency);
    return Number(String(amount)) > 0 ? `+${words}` : words;
  };
  const lines =
    preview.difference.lines.length === 0
      ? emptyState(`Neither invoice of ${month} has a line.`)
      : dataTable(
          `Differences per line, ${month}`,
          [
            {
              header: "Line",
              cell: (l) => html`${l.description} <span class="hint">(${l.kind.replace("_", "-")})</span>`,
            },
            { header: "Now", cell: (l) => money(l.actual_amount, currency), numeric: true },
            { header: "With the change", cell: (l) => money(l.preview_amount, currency), numeric: true },
            { header: "Difference", cell: (l) => signed(l.difference), numeric: true },
          ],
          preview.difference.lines,
        );
  const unpriced =
    preview.unpriced_events > 0
      ? html`<p class="alert warn">${decimal(preview.unpriced_events)} ${preview.unpriced_events === 1 ? "event has" : "events have"} no rule in the changed program: ${preview.unpriced_events === 1 ? "it is" : "they are"} left out of the preview's total.</p>`
      : "";
  const dated =
    effectiveDate === null
      ? ""
      : html`<p class="hint">The preview prices the whole month with the changed program; saved, the change applies to usage from ${effectiveDate}.</p>`;
  return html`<section class="card preview" id="pricing-preview" aria-labelledby="pricing-preview-heading">
<h2 id="pricing-preview-heading">Preview: ${month} with this change</h2>
<p class="alert warn" role="status">Preview only: nothing has been saved. Press “${saveButton}” to save the change.</p>
<p class="hint">${contract.id}, ${preview.billing_period.start} to ${preview.billing_period.end}: ${decimal(preview.events)} stored ${preview.events === 1 ? "event" : "events"} priced again (voided events left out).</p>
${dated}${unpriced}
<dl class="facts">
<dt>Total now</dt><dd>${money(preview.actual.total, currency)} <span class="hint">(${actualName})</span></dd>
<dt>Total with the change</dt><dd>${money(preview.preview.total, currency)}</dd>
<dt>Difference</dt><dd>${signed(preview.difference.total)}</dd>
</dl>
<h3>Per line</h3>
${lines}
</section>`;
}

async function detailPage(
  deps: DashboardDeps,
  viewer: Viewer,
  contractId: string,
  flash?: Flash,
  forms: RuleForms = {},
): Promise<string> {
  const actor = viewer.session.actor;
  const contract = await deps.services.contracts.get(actor, contractId);
  const versions = await deps.services.contracts.pricingHistory(actor, contract.id);
  const pricing = await pricingOf(deps, viewer, contract.id);
  const facts = html`<div class="card"><dl class="facts">
<dt>Contract id</dt><dd><code>${contract.id}</code> <span class="hint">(send it as external_contract_id on usage events)</span></dd>
<dt>Number</dt><dd>${contract.contract_number}</dd>
<dt>Customer</dt><dd><a href="/customers/${contract.customer_id}">${contract.customer_name}</a></dd>
<dt>Status</dt><dd>${statusBadge(contract.status)}</dd>
<dt>Term</dt><dd>${contract.start_date} to ${contract.end_date ?? "open-ended"}</dd>
<dt>Currency</dt><dd>${contract.currency}</dd>
<dt>Billing cadence</dt><dd>${contract.billing_cadence}</dd>
<dt>Payment terms</dt><dd>${contract.payment_terms_days === null ? "the customer's (else the account's default)" : `Net ${contract.payment_terms_days}`}</dd>
<dt>Sample</dt><dd>${contract.sample ? "yes, a sample contract" : "no"}</dd>
<dt>Metrics</dt><dd>${contract.metrics.length === 0 ? "—" : html`${contract.metrics.map((m, i) => html`${i > 0 ? ", " : ""}<code>${m}</code>`)}`}</dd>
<dt>Created</dt><dd>${when(contract.created_at)}</dd>
<dt>Agreement</dt><dd>${
    contract.sample || contract.pdf_url.includes("/v1/agreements/")
      ? html`<a href="${contract.pdf_url}">Agreement PDF</a> <span class="hint">(generated; anyone with this link can open it)</span>`
      : html`<a href="${contractPath(contract.id)}/agreement.pdf">Signed agreement (PDF)</a> <span class="hint">(as uploaded; only your company can open it)</span>`
  }</dd>
</dl></div>`;
  const program = pricing
    ? html`<h2>Pricing program</h2><p class="hint">Version ${pricing.version}, in force since ${pricing.effective_date}.</p>${rulesTable(
        `Pricing rules, version ${pricing.version}`,
        pricing.rules,
      )}${scheduledSection(pricing.upcoming)}`
    : html`<h2>Pricing program</h2>${emptyState("This contract has no pricing program yet.")}`;
  const errors = forms.errors ?? {};
  const change = html`<div class="grid">${addRuleForm(viewer, contract, forms.add, forms.add ? errors : {})}${changeRuleForm(viewer, contract, pricing?.rules ?? [], forms.change, forms.change ? errors : {})}</div>`;
  const preview = forms.preview
    ? previewPanel(contract, forms.preview.result, forms.preview.effectiveDate, forms.add ? "Add rule" : "Change price")
    : "";
  const credits = creditsSection(
    viewer,
    contract,
    await deps.services.credits.list(actor, contract.id),
    metricsOfContract(contract, pricing),
    forms.grant,
    forms.grant ? errors : {},
  );
  const history = html`<h2>Version history</h2><p class="hint">Newest first; each version compared with the one before it.</p>${historySection(
    versionHistoryDiff(versions),
    pricing?.version ?? 0,
    new Set(pricing?.upcoming.map((v) => v.version) ?? []),
  )}`;
  return page(
    viewer.ctx,
    `Contract ${contract.id}`,
    html`<p><a href="/contracts">← All contracts</a></p>${facts}${program}${change}${preview}${credits}${history}`,
    { flash },
  );
}

// ---------------------------------------------------------------------------------------------------
// Previewing a change: the whole program as it would be, priced against this month; nothing is stored

/**
 * The month a preview prices: this calendar month by the service's clock (UTC); when that month lies outside the
 * contract's term, the term's first month.
 */
function previewMonth(now: Date, contract: Contract): BillingPeriod {
  const month = periodOf(now);
  const outside = month.end < contract.start_date || (contract.end_date !== null && month.start > contract.end_date);
  return outside ? periodOf(parseDate(contract.start_date) ?? now) : month;
}

/** A rule as the API presents it, as the fields a program is sent with: what it has, its nulls left out. */
function fieldsOfRule(rule: PresentedRule): RuleFields {
  return Object.fromEntries(Object.entries(rule).filter(([, value]) => value !== null)) as RuleFields;
}

/** An update's fields merged into a rule as the service merges them: each field sent replaces it, null clears it. */
function mergedRule(rule: PresentedRule, fields: RuleFields): RuleFields {
  const merged: Record<string, unknown> = { ...fieldsOfRule(rule) };
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  return merged as RuleFields;
}

/**
 * The program in force today with a change made to it (`change`: the rules, and the index of the changed one),
 * priced against this month. A refusal of the changed rule's fields names them as the form does (`rules.3.amount`
 * → amount): see `previewFieldOf`.
 */
async function previewChange(
  deps: DashboardDeps,
  viewer: Viewer,
  contractId: string,
  effectiveDate: string | null,
  change: (rules: readonly PresentedRule[]) => RuleFields[],
): Promise<PricingPreview> {
  const actor = viewer.session.actor;
  const contract = await deps.services.contracts.get(actor, contractId);
  // A date that saving would refuse is refused here too, in the same words (pricing-versions.ts).
  if (effectiveDate !== null) requireDayInTerm(effectiveDate, contract);
  const pricing = await pricingOf(deps, viewer, contract.id);
  const month = previewMonth(deps.clock.now(), contract);
  return deps.services.usage.previewPricing(actor, contract.id, {
    rules: change(pricing?.rules ?? []),
    periodStart: month.start,
    periodEnd: month.end,
  });
}

/** The form field a refusal names: the changed rule's own (`rules.{index}.x` in a preview); other rules' none. */
function previewFieldOf(index: number | undefined) {
  return (path: string): string | undefined => {
    const [, at, rest] = /^rules\.(\d+)\.(.+)$/.exec(path) ?? [];
    if (at === undefined || rest === undefined) return path === "rules" ? undefined : ruleFieldOf(path);
    return index !== undefined && Number(at) === index ? ruleFieldOf(rest) : undefined;
  };
}

/**
 * A rule form's refusal: each error beside its field, the rate in a percentage's words; a dated change that
 * reaches an issued invoice (period_closed) or leaves usage without a rule (usage_without_rule) beside the date.
 */
function ruleFormFailure(
  error: unknown,
  fieldOf: (path: string) => string | undefined,
  values: { rate?: string | undefined; effective_date?: string | undefined },
) {
  const failure = formFailure(error, fieldOf, RULE_LABELS);
  if (
    error instanceof ConflictError &&
    values.effective_date !== undefined &&
    (error.code === "period_closed" || error.code === "usage_without_rule")
  ) {
    return placedFailure(failure.status, { effective_date: plainWords(error.message) });
  }
  return { ...failure, fields: percentRateWords(failure.fields, values.rate) };
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

  app.get<{ Params: { id: string } }>("/contracts/:id/agreement.pdf", async (request, reply) => {
    return sendPdf(
      reply,
      await deps.services.contracts.agreementFile(viewerOf(request).session.actor, request.params.id),
      "inline",
    );
  });

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>("/contracts/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(reply, await detailPage(deps, viewer, request.params.id, doneFlash(DONE, request.query.done)));
  });

  app.post<{ Params: { id: string } }>("/contracts/:id/credits", async (request, reply) => {
    const viewer = viewerOf(request);
    const values = grantValuesOf(formOf(request));
    try {
      const granted = await deps.services.credits.grant(viewer.session.actor, request.params.id, grantInputOf(values));
      return seeOther(
        reply,
        link(contractPath(granted.contract), {
          done: granted.type === "prepaid" ? "prepaid-granted" : "credit-granted",
        }),
      );
    } catch (error) {
      const { status, flash, fields } = grantFailure(error);
      return sendPage(
        reply,
        await detailPage(deps, viewer, request.params.id, flash, { grant: values, errors: fields }),
        status,
      );
    }
  });

  app.get<{ Params: { id: string; grantId: string } }>("/contracts/:id/credits/:grantId", async (request, reply) => {
    const viewer = viewerOf(request);
    const actor = viewer.session.actor;
    const contract = await deps.services.contracts.get(actor, request.params.id);
    const grant = await deps.services.credits.get(actor, contract.id, request.params.grantId);
    return sendPage(reply, grantPage(viewer, contract, grant));
  });

  app.post<{ Params: { id: string } }>("/contracts/:id/rules", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values = valuesOf(form, ADD_FIELDS);
    const previewing = field(form, "action") === "preview";
    let index: number | undefined;
    try {
      const { fields, effectiveDate } = toRuleChange(parseWith(addPricingRuleBody, ruleInputOf(values)));
      if (previewing) {
        const result = await previewChange(deps, viewer, request.params.id, effectiveDate, (rules) => {
          index = rules.length;
          return [...rules.map(fieldsOfRule), fields];
        });
        return sendPage(
          reply,
          await detailPage(deps, viewer, request.params.id, undefined, {
            add: values,
            preview: { result, effectiveDate },
          }),
        );
      }
      const added = await deps.services.contracts.addRule(viewer.session.actor, request.params.id, {
        fields,
        effectiveDate,
      });
      return seeOther(
        reply,
        link(contractPath(added.contract), { done: effectiveDate === null ? "rule-added" : "rule-added-dated" }),
      );
    } catch (error) {
      const { status, flash, fields } = ruleFormFailure(error, previewFieldOf(index), values);
      return sendPage(
        reply,
        await detailPage(deps, viewer, request.params.id, flash, { add: values, errors: fields }),
        status,
      );
    }
  });

  app.post<{ Params: { id: string } }>("/contracts/:id/rules/change", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const { rule_id: ruleId, ...prices } = valuesOf(form, CHANGE_FIELDS);
    const previewing = field(form, "action") === "preview";
    let index: number | undefined;
    try {
      if (ruleId === undefined)
        throw new ValidationError("Choose the rule to change", "invalid_request", [
          { path: "rule_id", message: "Choose the rule to change." },
        ]);
      if (prices.amount === undefined && prices.rate === undefined) {
        throw new ValidationError(
          "Give a new amount (flat rules) or a new rate (percentage rules)",
          "invalid_request",
          [{ path: "amount", message: "Give a new amount (flat rules) or a new rate (percentage rules)." }],
        );
      }
      const { fields, effectiveDate } = toRuleChange(parseWith(updatePricingRuleBody, ruleInputOf(prices)));
      if (previewing) {
        const result = await previewChange(deps, viewer, request.params.id, effectiveDate, (rules) => {
          index = rules.findIndex((r) => r.id === ruleId);
          if (index < 0) throw new NotFoundError("pricing_rule");
          return rules.map((r, i) => (i === index ? mergedRule(r, fields) : fieldsOfRule(r)));
        });
        return sendPage(
          reply,
          await detailPage(deps, viewer, request.params.id, undefined, {
            change: { rule_id: ruleId, ...prices },
            preview: { result, effectiveDate },
          }),
        );
      }
      const changed = await deps.services.contracts.updateRule(viewer.session.actor, request.params.id, ruleId, {
        fields,
        effectiveDate,
      });
      return seeOther(
        reply,
        link(contractPath(changed.contract), {
          done: effectiveDate === null ? "rule-changed" : "rule-changed-dated",
        }),
      );
    } catch (error) {
      const { status, flash, fields } = ruleFormFailure(error, previewFieldOf(index), prices);
      return sendPage(
        reply,
        await detailPage(deps, viewer, request.params.id, flash, {
          change: { rule_id: ruleId, ...prices },
          errors: fields,
        }),
        status,
      );
    }
  });
}
