// "Upload a contract", step two (docs/dashboard.md, "Uploading a contract"): the terms read from the staged PDF,
// reviewed in a form where each proposed value stands beside the text it came from (marked for checking when
// it was read with low confidence), then saved with the PDF through the same service call as
// POST /v1/billing/contracts/upload's. The form's data is contract-upload-form.ts. Registered by
// contract-upload-pages.ts.
import type { FastifyInstance } from "fastify";
import { MAX_PROGRAM_RULES } from "../../../domain/contracts/pricing-rule.js";
import type {
  ContractExtraction,
  ExtractedField,
  ExtractedRule,
} from "../../../domain/contracts/extraction/extraction-types.js";
import { rulePriceWords } from "../../../domain/contracts/rule-price-wording.js";
import type { Customer } from "../../../domain/customers/customer-schemas.js";
import { ConflictError, NotFoundError } from "../../../domain/kernel/errors.js";
import { sendPdf } from "../../http/send-documents.js";
import { html, type SafeHtml } from "../html.js";
import {
  contractPath,
  csrfField,
  fieldError,
  inputField,
  type InputSpec,
  invalidAttributes,
  link,
  page,
  type Flash,
} from "../layout.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formOf,
  seeOther,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { customerLabel } from "./contract-page-parts.js";
import {
  keptRuleOf,
  type ReviewValues,
  type RuleLayout,
  type TierRow,
  ruleLayout,
  termsFromValues,
  uploadFailure,
  type UsageRow,
  valuesFromExtraction,
  valuesFromForm,
} from "./contract-upload-form.js";

/** Customers offered in the "existing customer" list, newest first. */
const CUSTOMER_CHOICES = 100;
/** Below this confidence a proposed value is marked for checking (OCR text, loose wording). */
const LOW_CONFIDENCE = 0.8;

// ---------------------------------------------------------------------------------------------------
// Where each proposed value came from

/** The proposed values' sources, by the path of the value in `terms`. */
class Sources {
  private readonly byPath = new Map<string, ExtractedField>();
  readonly layout: RuleLayout;
  constructor(extraction: ContractExtraction | null) {
    for (const found of extraction?.fields ?? [])
      if (!this.byPath.has(found.field)) this.byPath.set(found.field, found);
    this.layout = ruleLayout(extraction);
  }

  /** The source of one value: "customer.name", or a field of a found rule (its own, else the whole rule's). */
  of(path: string, rule?: number): ExtractedField | undefined {
    if (rule === undefined) return this.byPath.get(path);
    return this.byPath.get(`rules.${rule}.${path}`) ?? this.byPath.get(`rules.${rule}`);
  }

  /** Every source of a found rule, once each, for a price shown as read. */
  ofRule(rule: number): ExtractedField[] {
    const found = [...this.byPath.values()].filter(
      (f) => f.field === `rules.${rule}` || f.field.startsWith(`rules.${rule}.`),
    );
    return found.filter((f, i) => found.findIndex((g) => g.page === f.page && g.source_text === f.source_text) === i);
  }
}

const lowConfidence = (found: readonly ExtractedField[]) => found.some((f) => f.confidence < LOW_CONFIDENCE);

/** "p. 2 · “…”": the page and the exact text a value was read from. */
const sourceLine = (found: ExtractedField, id?: string): SafeHtml =>
  html`<p class="source"${id ? html` id="${id}"` : ""}>p. ${String(found.page)} · “${found.source_text}”</p>`;

/** The word that marks a value read with low confidence: visible and read out, not a colour alone. */
const checkLine = (id?: string): SafeHtml =>
  html`<p class="check"${id ? html` id="${id}"` : ""}><strong>Check</strong>: read with low confidence.</p>`;

/**
 * A form field with, below it, where its proposed value came from and (when the reading was unsure) the word
 * "Check"; both are tied to the input for screen readers. `shown` holds the sources already shown in the same
 * usage row (by their text, the id shown under): a row whose fields come from one line shows it once.
 */
function reviewedField(spec: InputSpec, found: ExtractedField | undefined, shown?: Map<string, string>): SafeHtml {
  if (found === undefined) return inputField(spec);
  const low = found.confidence < LOW_CONFIDENCE;
  const key = `${found.page}\u0000${found.source_text}`;
  const earlier = shown?.get(key);
  if (earlier === undefined) shown?.set(key, `${spec.id}-source`);
  const described = [low ? `${spec.id}-check` : "", earlier ?? `${spec.id}-source`].filter(Boolean).join(" ");
  return html`<div class="reviewed${low ? " low-confidence" : ""}">${inputField({ ...spec, describedBy: described })}${low ? checkLine(`${spec.id}-check`) : ""}${earlier === undefined ? sourceLine(found, `${spec.id}-source`) : ""}</div>`;
}

// ---------------------------------------------------------------------------------------------------
// What the reading says, above the form

/** Pages as a reader says them: "1–2", "1, 3 and 5", "1–3 and 7". */
function pagesWords(pages: readonly number[]): string {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    runs.push(j === i ? String(sorted[i]) : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return runs.length <= 1 ? (runs[0] ?? "") : `${runs.slice(0, -1).join(", ")} and ${runs.at(-1)}`;
}

/** What could not be read: the scanned pages' OCR was refused or failed, or no page had text. */
const UNREAD = new Set(["no_text", "ocr_busy", "ocr_failed"]);

function readingMessages(extraction: ContractExtraction | null): SafeHtml {
  const warnings = extraction?.warnings ?? [];
  let headline: SafeHtml;
  if (extraction === null) {
    headline = html`<div class="alert warn" role="status">Nothing was read from this PDF: type the terms below.</div>`;
  } else if (extraction.fields.length === 0) {
    headline = warnings.some((w) => UNREAD.has(w.code))
      ? html`<div class="alert warn" role="status">The terms could not be read from this PDF (see below): type them in the form.</div>`
      : html`<div class="alert warn" role="status">No terms were found in this PDF: type them below.</div>`;
  } else {
    const ocr = warnings.find((w) => w.code === "ocr");
    if (ocr) {
      const pages = ocr.pages ?? [];
      const which =
        pages.length === 0
          ? "Some pages have no text and were"
          : pages.length === 1
            ? `Page ${pagesWords(pages)} has no text and was`
            : `Pages ${pagesWords(pages)} have no text and were`;
      headline = html`<div class="alert warn" role="status">${which} read by OCR: check every value.</div>`;
    } else {
      headline = html`<div class="alert ok" role="status">The terms below were read from the PDF. Each value shows where it came from: check them against the agreement before saving.</div>`;
    }
  }
  const notes =
    warnings.length === 0
      ? ""
      : html`<div class="alert warn reading-notes" role="status"><ul>${warnings.map((w) => html`<li>${w.message}</li>`)}</ul></div>`;
  return html`${headline}${notes}`;
}

// ---------------------------------------------------------------------------------------------------
// The form

function customerSection(
  v: ReviewValues,
  customers: readonly Customer[],
  errors: FieldErrors,
  sources: Sources,
): SafeHtml {
  const sameName =
    v.customer_mode === "new" && v.customer_name
      ? customers.find((c) => c.name.toLowerCase() === v.customer_name!.toLowerCase())
      : undefined;
  return html`<fieldset class="card"><legend>Customer</legend>
<div><label><input type="radio" name="customer_mode" value="new"${v.customer_mode === "new" ? html` checked` : ""}> A new customer</label></div>
${reviewedField({ id: "upload-customer-name", name: "customer_name", label: "Name", value: v.customer_name, maxlength: 200, error: errors.customer_name }, sources.of("customer.name"))}
${sameName ? html`<p class="hint">A customer named ${sameName.name} already exists. Customers are never matched by name: choose it below if it is the same one.</p>` : ""}
${inputField({ id: "upload-customer-external-id", name: "customer_external_id", label: "External id", hint: "(optional: your own id for the customer, unique)", value: v.customer_external_id, maxlength: 255, error: errors.customer_external_id })}
${reviewedField({ id: "upload-customer-email", name: "customer_email", label: "Billing email", hint: "(optional)", type: "email", value: v.customer_email, error: errors.customer_email }, sources.of("customer.email"))}
${reviewedField({ id: "upload-customer-address", name: "customer_address", label: "Address", hint: "(optional: one line)", value: v.customer_address, maxlength: 1000, error: errors.customer_address }, sources.of("customer.address"))}
<div><label><input type="radio" name="customer_mode" value="existing"${v.customer_mode === "existing" ? html` checked` : ""}${customers.length === 0 ? html` disabled` : ""}> An existing customer</label></div>
<div><label for="upload-customer-id">Existing customer</label><select id="upload-customer-id" name="customer_id"${invalidAttributes("upload-customer-id", errors.customer_id)}>
  <option value="">${customers.length === 0 ? "You have no customers yet" : "Choose a customer"}</option>
  ${customers.map((c) => html`<option value="${c.id}"${c.id === v.customer_id ? html` selected` : ""}>${customerLabel(c)}</option>`)}
</select>${fieldError("upload-customer-id", errors.customer_id)}</div>
</fieldset>`;
}

function usageRows(v: ReviewValues, currency: string, errors: FieldErrors, sources: Sources): SafeHtml {
  // As many rows as were posted (or found), at least one to type in; "Add a row" posts the form and gets it back
  // with one more. A row keeps its number, which its errors and its source are named by.
  const rows = v.usage.length === 0 ? [{} as UsageRow] : v.usage;
  return html`<fieldset class="card"><legend>Usage prices</legend>
<p class="hint">One row per metric: a price per unit, or a rate (a percentage: 2.9 for 2.9% of the event's value, stored as the fraction 0.029) with an optional fixed fee per event (the 0.30 of “2.9 % + 30¢”). Leave a row blank to skip it.</p>
<input type="hidden" name="usage_rows" value="${String(rows.length)}">
${rows.map((row, i) => {
  const id = (name: string) => `upload-usage-${name}-${i}`;
  const rule = sources.layout.usage[i];
  const from = (path: string) => (rule === undefined ? undefined : sources.of(path, rule));
  const shown = new Map<string, string>();
  return html`<div class="usage-row" role="group" aria-label="Usage price ${String(i + 1)}">
${reviewedField({ id: id("metric"), name: `usage_metric_${i}`, label: `Metric ${i + 1}`, hint: "(as usage events send it)", value: row.metric, maxlength: 100, error: errors[`usage_metric_${i}`] }, from("metric"), shown)}
${reviewedField({ id: id("name"), name: `usage_name_${i}`, label: "Name", hint: "(optional)", value: row.name, maxlength: 200, error: errors[`usage_name_${i}`] }, from("name"), shown)}
${reviewedField({ id: id("amount"), name: `usage_amount_${i}`, label: `Price per unit, ${currency}`, value: row.amount, inputmode: "decimal", error: errors[`usage_amount_${i}`] }, from("amount"), shown)}
${reviewedField({ id: id("rate"), name: `usage_rate_${i}`, label: "Rate, %", hint: "(instead of a price: 2.9 for 2.9 %)", value: row.rate, inputmode: "decimal", error: errors[`usage_rate_${i}`] }, from("rate"), shown)}
${reviewedField({ id: id("fixed-fee"), name: `usage_fixed_fee_${i}`, label: `Fixed fee per event, ${currency}`, hint: "(optional, with a rate)", value: row.fixed_fee, inputmode: "decimal", error: errors[`usage_fixed_fee_${i}`] }, from("fixed_fee"), shown)}
${reviewedField({ id: id("cap"), name: `usage_cap_${i}`, label: `Monthly cap, ${currency}`, hint: "(optional)", value: row.cap, inputmode: "decimal", error: errors[`usage_cap_${i}`] }, from("monthly_cap"), shown)}
${reviewedField({ id: id("counterparty"), name: `usage_counterparty_${i}`, label: "Counterparty", hint: "(optional: only its usage)", value: row.counterparty, maxlength: 255, error: errors[`usage_counterparty_${i}`] }, from("counterparty"), shown)}
</div>`;
})}
${rows.length < MAX_PROGRAM_RULES ? html`<div><button type="submit" name="add_row" value="1" class="secondary">Add a row</button></div>` : ""}
</fieldset>`;
}

/**
 * The found prices the usage rows cannot show (tiers, a package, a fee's bounds), each with its source and a box to
 * keep it; its name and its tiers are fields, so that a name read from the agreement's wording ("Band it falls in,
 * as follows") is corrected before saving, as the usage rows' are.
 */
function keptRules(v: ReviewValues, errors: FieldErrors, sources: Sources): SafeHtml {
  if (v.kept.length === 0) return html``;
  return html`<fieldset class="card"><legend>Other prices read from the agreement</legend>
<p class="hint">Each price is saved as read while its box is ticked, with the name and tiers below as you leave them. What has no field here (a package, a fee's bounds) can be changed on the contract's page once the contract is saved; untick a price to leave it out.</p>
<input type="hidden" name="kept_rules" value="${String(v.kept.length)}">
${v.kept.map((kept, k) => {
  const rule = keptRuleOf(kept);
  const readable = typeof rule === "object" && rule !== null ? (rule as Partial<ExtractedRule>) : undefined;
  const index = sources.layout.kept[k];
  const found = index === undefined ? [] : sources.ofRule(index);
  const id = `upload-kept-${k}`;
  const error = errors[`kept_rule_${k}`];
  const label = kept.name ?? `Price ${k + 1}`;
  const words =
    readable && typeof readable.model === "string" && typeof readable.type === "string"
      ? rulePriceWords(readable as ExtractedRule, v.currency)
      : "—";
  const low = lowConfidence(found);
  return html`<div class="kept-rule${low ? " low-confidence" : ""}" role="group" aria-label="${label}">
<p><strong>${label}</strong>: ${words}</p>
${low ? checkLine() : ""}${found.map((f) => sourceLine(f))}
<input type="hidden" name="kept_rule_${String(k)}" value="${kept.json}">
${inputField({ id: `${id}-name`, name: `kept_name_${k}`, label: `Name of price ${k + 1}`, hint: "(as invoices show it)", value: kept.name, maxlength: 200, error: errors[`kept_name_${k}`] })}
${kept.tiers === undefined ? "" : keptTiers(k, kept.tiers, v.currency, errors)}
<div><label><input id="${id}" type="checkbox" name="keep_rule_${String(k)}" value="1"${kept.keep ? html` checked` : ""}${invalidAttributes(id, error)}> Keep this price</label>${fieldError(id, error)}</div>
</div>`;
})}
</fieldset>`;
}

/** A kept rule's tiers as fields, one row per tier: its bound (blank on the last), price per unit and flat amount. */
function keptTiers(k: number, tiers: readonly TierRow[], currency: string | undefined, errors: FieldErrors): SafeHtml {
  const money = currency ? `, ${currency}` : "";
  return html`<input type="hidden" name="kept_tiers_${String(k)}" value="${String(tiers.length)}">
${tiers.map((tier, j) => {
  const name = (part: string) => `kept_tier_${part}_${k}_${j}`;
  const id = (part: string) => `upload-kept-${k}-tier-${j}-${part.replaceAll("_", "-")}`;
  return html`<div class="usage-row" role="group" aria-label="Tier ${String(j + 1)} of price ${String(k + 1)}">
${inputField({ id: id("up_to"), name: name("up_to"), label: `Tier ${j + 1}: up to, units`, hint: "(blank: no upper bound)", value: tier.up_to, inputmode: "decimal", error: errors[name("up_to")] })}
${inputField({ id: id("unit_amount"), name: name("unit_amount"), label: `Tier ${j + 1}: price per unit${money}`, value: tier.unit_amount, inputmode: "decimal", error: errors[name("unit_amount")] })}
${inputField({ id: id("flat_amount"), name: name("flat_amount"), label: `Tier ${j + 1}: flat amount${money}`, hint: "(optional)", value: tier.flat_amount, inputmode: "decimal", error: errors[name("flat_amount")] })}
</div>`;
})}`;
}

/** The review page: what the reading says, then the form, filled in with `values`. */
async function reviewPage(
  deps: DashboardDeps,
  viewer: Viewer,
  staged: { id: string; filename: string; extraction: ContractExtraction | null },
  values: ReviewValues,
  options: { flash?: Flash | undefined; errors?: FieldErrors } = {},
): Promise<string> {
  const errors = options.errors ?? {};
  const sources = new Sources(staged.extraction);
  const customers = (await deps.services.customers.list(viewer.session.actor, {}, { limit: CUSTOMER_CHOICES })).items;
  const currency = values.currency ?? "in the contract's currency";
  const { minimum, subscription } = sources.layout;
  const ruleSource = (rule: number | undefined, path: string) =>
    rule === undefined ? undefined : sources.of(path, rule);
  const content = html`<p><a href="/contracts">← All contracts</a></p>
${readingMessages(staged.extraction)}
<p>Agreement: <a href="/upload-contract/${staged.id}/file.pdf" download>${staged.filename}</a> <span class="hint">(downloads the uploaded PDF)</span></p>
<form class="stack wide" method="post" action="/upload-contract/${staged.id}" novalidate>
  ${csrfField(viewer.ctx)}
  <h2>2. Review the terms</h2>
  ${customerSection(values, customers, errors, sources)}
  <fieldset class="card"><legend>Contract</legend>
  ${reviewedField({ id: "upload-contract-id", name: "contract_id", label: "Contract id", hint: "(usage events send it as external_contract_id)", value: values.contract_id, maxlength: 255, error: errors.contract_id }, sources.of("contract_id"))}
  <div class="grid">
  ${reviewedField({ id: "upload-start-date", name: "start_date", label: "Starts on", type: "date", value: values.start_date, error: errors.start_date }, sources.of("start_date"))}
  ${reviewedField({ id: "upload-end-date", name: "end_date", label: "Ends on", hint: "(empty: open-ended)", type: "date", value: values.end_date, error: errors.end_date }, sources.of("end_date"))}
  ${reviewedField({ id: "upload-currency", name: "currency", label: "Currency", hint: "(ISO code, e.g. USD)", value: values.currency, maxlength: 3, error: errors.currency }, sources.of("currency"))}
  ${reviewedField({ id: "upload-payment-terms", name: "payment_terms_days", label: "Payment terms, days", hint: "(optional: blank for the customer's)", type: "number", value: values.payment_terms_days, inputmode: "numeric", error: errors.payment_terms_days }, sources.of("payment_terms_days"))}
  </div>
  </fieldset>
  <fieldset class="card"><legend>Fixed prices</legend>
  <div class="grid">
  ${reviewedField({ id: "upload-minimum", name: "minimum", label: `Monthly minimum, ${currency}`, hint: "(optional)", value: values.minimum, inputmode: "decimal", error: errors.minimum }, ruleSource(minimum, "amount"))}
  ${reviewedField({ id: "upload-subscription", name: "subscription", label: `Subscription fee a month, ${currency}`, hint: "(optional)", value: values.subscription, inputmode: "decimal", error: errors.subscription }, ruleSource(subscription, "amount"))}
  ${reviewedField({ id: "upload-subscription-name", name: "subscription_name", label: "Subscription name", hint: "(optional)", value: values.subscription_name, maxlength: 200, error: errors.subscription_name }, ruleSource(subscription, "name"))}
  </div>
  </fieldset>
  ${usageRows(values, currency, errors, sources)}
  ${keptRules(values, errors, sources)}
  <div><button type="submit">Save contract</button></div>
</form>`;
  return page(viewer.ctx, "Upload a contract", content, { flash: options.flash });
}

/** A staged upload of this company (404 otherwise), or the contract it already became. */
async function stagedOr404(deps: DashboardDeps, viewer: Viewer, id: string) {
  return deps.services.contracts.staged(viewer.session.actor, id);
}

/** The review's routes: the form, the staged PDF, and saving, under /upload-contract/:id. */
export async function contractUploadReviewPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Params: { id: string } }>("/upload-contract/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const staged = await stagedOr404(deps, viewer, request.params.id);
    if (staged.contractId !== null) return seeOther(reply, contractPath(staged.contractId));
    return sendPage(reply, await reviewPage(deps, viewer, staged, valuesFromExtraction(staged.extraction)));
  });

  app.get<{ Params: { id: string } }>("/upload-contract/:id/file.pdf", async (request, reply) => {
    const staged = await stagedOr404(deps, viewerOf(request), request.params.id);
    return sendPdf(reply, { filename: staged.filename, pdf: staged.pdf, uploaded: true }, "attachment");
  });

  app.post<{ Params: { id: string } }>("/upload-contract/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values = valuesFromForm(form);
    if (field(form, "add_row") !== undefined) {
      // One more blank row, everything typed so far kept: a plain post, so no script is needed.
      const staged = await stagedOr404(deps, viewer, request.params.id);
      if (staged.contractId !== null) return seeOther(reply, contractPath(staged.contractId));
      if (values.usage.length === 0) values.usage.push({});
      if (values.usage.length < MAX_PROGRAM_RULES) values.usage.push({});
      return sendPage(reply, await reviewPage(deps, viewer, staged, values));
    }
    const { terms, fieldOf } = termsFromValues(values);
    try {
      const contract = await deps.services.contracts.saveStaged(viewer.session.actor, request.params.id, terms);
      return seeOther(reply, link(contractPath(contract.id), { done: "uploaded" }));
    } catch (error) {
      if (error instanceof NotFoundError && error.resource === "upload") throw error;
      if (error instanceof ConflictError && error.code === "upload_saved") {
        return seeOther(reply, contractPath(String(error.extra?.contract_id)));
      }
      const { status, flash, fields } = uploadFailure(error, fieldOf);
      const staged = await stagedOr404(deps, viewer, request.params.id);
      return sendPage(reply, await reviewPage(deps, viewer, staged, values, { flash, errors: fields }), status);
    }
  });
}
