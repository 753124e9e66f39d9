// "Upload a contract": the signed agreement as a PDF, then its terms reviewed in a form and saved. Step one
// keeps the checked PDF (a day at most) with the terms read from its text, when it follows the layout of
// the service's own agreements; step two turns the form into the API's `terms` (uploadTermsInput) and saves
// it with the PDF through the same service call as POST /v1/billing/contracts/upload's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AgreementReading, ReadRule } from "../../../domain/contracts/agreement-reading.js";
import { MAX_PROGRAM_RULES } from "../../../domain/contracts/contract-schemas.js";
import { fractionOfPercent, percentOfFraction, rulePriceWords } from "../../../domain/contracts/rule-price-wording.js";
import type { Customer } from "../../../domain/customers/customer-schemas.js";
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
} from "../../../domain/kernel/errors.js";
import { readMultipartForm, UPLOAD_LIMITS } from "../../http/multipart-form.js";
import { sendPdf } from "../../http/send-documents.js";
import { html, type SafeHtml } from "../html.js";
import {
  contractPath,
  csrfField,
  fieldError,
  inputField,
  invalidAttributes,
  link,
  page,
  type Flash,
} from "../layout.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  type FormBody,
  type FormFailure,
  formFailure,
  formOf,
  placedFailure,
  seeOther,
  sendFormExpired,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";

/** The review form's usage rows: those read from the PDF and this many blank ones to add more. */
const BLANK_USAGE_ROWS = 2;
/** Customers offered in the "existing customer" list, newest first. */
const CUSTOMER_CHOICES = 100;

interface UsageRow {
  metric?: string | undefined;
  name?: string | undefined;
  amount?: string | undefined;
  rate?: string | undefined;
  cap?: string | undefined;
  counterparty?: string | undefined;
}

/** What the review form holds: typed, or read from the PDF. Text as typed; the service decides what it means. */
interface ReviewValues {
  customer_mode: "existing" | "new";
  customer_id?: string | undefined;
  customer_name?: string | undefined;
  customer_external_id?: string | undefined;
  customer_email?: string | undefined;
  contract_id?: string | undefined;
  start_date?: string | undefined;
  end_date?: string | undefined;
  currency?: string | undefined;
  /** Days to pay its invoices; blank: the customer's terms (else the account's). */
  payment_terms_days?: string | undefined;
  minimum?: string | undefined;
  subscription?: string | undefined;
  subscription_name?: string | undefined;
  usage: UsageRow[];
}

const LABELS: Record<string, string> = {
  start_date: "the start date",
  end_date: "the end date",
  contract_id: "the contract id",
  external_contract_id: "the contract id",
  external_id: "the external id",
  payment_terms_days: "the payment terms",
};

// ---------------------------------------------------------------------------------------------------
// From the PDF's reading to the form, and from the form to the API's terms

/** The form as the PDF's text fills it in; rules it has no field for are listed for the user to add later. */
function valuesFromReading(reading: AgreementReading | null): { values: ReviewValues; leftOver: ReadRule[] } {
  const values: ReviewValues = { customer_mode: "new", usage: [] };
  const leftOver: ReadRule[] = [];
  if (reading === null) return { values, leftOver };
  values.customer_name = reading.customer_name ?? undefined;
  values.contract_id = reading.contract_id ?? undefined;
  values.start_date = reading.start_date ?? undefined;
  values.end_date = reading.end_date ?? undefined;
  values.currency = reading.currency ?? undefined;
  for (const rule of reading.rules) {
    if (rule.type === "usage") {
      values.usage.push({
        metric: rule.metric,
        name: rule.name,
        amount: rule.amount,
        // A form takes a rate as a percentage (2.9 for 2.9 %), as the rule forms do; the rule stores the fraction.
        rate: rule.rate === undefined ? undefined : (percentOfFraction(rule.rate) ?? rule.rate),
        cap: rule.monthly_cap,
        counterparty: rule.counterparty,
      });
    } else if (rule.type === "minimum" && values.minimum === undefined && rule.amount !== undefined) {
      values.minimum = rule.amount;
    } else if (rule.type === "subscription" && values.subscription === undefined && rule.amount !== undefined) {
      values.subscription = rule.amount;
      values.subscription_name = rule.name;
    } else {
      leftOver.push(rule);
    }
  }
  return { values, leftOver };
}

function valuesFromForm(form: FormBody): ReviewValues {
  const rows = Math.min(Number(field(form, "usage_rows") ?? 0) || 0, MAX_PROGRAM_RULES);
  const usage: UsageRow[] = [];
  for (let i = 0; i < rows; i++) {
    usage.push({
      metric: field(form, `usage_metric_${i}`),
      name: field(form, `usage_name_${i}`),
      amount: field(form, `usage_amount_${i}`),
      rate: field(form, `usage_rate_${i}`),
      cap: field(form, `usage_cap_${i}`),
      counterparty: field(form, `usage_counterparty_${i}`),
    });
  }
  return {
    customer_mode: field(form, "customer_mode") === "existing" ? "existing" : "new",
    customer_id: field(form, "customer_id"),
    customer_name: field(form, "customer_name"),
    customer_external_id: field(form, "customer_external_id"),
    customer_email: field(form, "customer_email"),
    contract_id: field(form, "contract_id"),
    start_date: field(form, "start_date"),
    end_date: field(form, "end_date"),
    currency: field(form, "currency")?.toUpperCase(),
    payment_terms_days: field(form, "payment_terms_days"),
    minimum: field(form, "minimum"),
    subscription: field(form, "subscription"),
    subscription_name: field(form, "subscription_name"),
    usage,
  };
}

const blankRow = (row: UsageRow) => Object.values(row).every((value) => value === undefined);

/**
 * The API's terms from the form, and where each rule's errors go: the service names a rule by its place in
 * `rules`, the form by its field.
 */
function termsFromValues(v: ReviewValues): {
  terms: Record<string, unknown>;
  fieldOf: (path: string) => string | undefined;
} {
  const rules: Record<string, unknown>[] = [];
  const ruleFields: Array<(name: string) => string> = [];
  if (v.minimum !== undefined) {
    rules.push({ name: "Monthly minimum", type: "minimum", model: "flat", amount: v.minimum });
    ruleFields.push(() => "minimum");
  }
  if (v.subscription !== undefined || v.subscription_name !== undefined) {
    rules.push({
      name: v.subscription_name ?? "Subscription",
      type: "subscription",
      model: "flat",
      amount: v.subscription,
    });
    ruleFields.push((name) => (name === "name" ? "subscription_name" : "subscription"));
  }
  v.usage.forEach((row, i) => {
    if (blankRow(row)) return;
    rules.push({
      type: "usage",
      metric: row.metric,
      ...(row.name !== undefined ? { name: row.name } : {}),
      ...(row.amount !== undefined ? { amount: row.amount } : {}),
      ...(row.rate !== undefined ? { rate: fractionOfPercent(row.rate) ?? row.rate } : {}),
      ...(row.cap !== undefined ? { monthly_cap: row.cap } : {}),
      ...(row.counterparty !== undefined ? { counterparty: row.counterparty } : {}),
    });
    const byField: Record<string, string> = {
      metric: "metric",
      type: "metric",
      name: "name",
      amount: "amount",
      rate: "rate",
      model: "rate",
      monthly_cap: "cap",
      counterparty: "counterparty",
    };
    ruleFields.push((name) => `usage_${byField[name] ?? "amount"}_${i}`);
  });
  const customer =
    v.customer_mode === "existing"
      ? { id: v.customer_id }
      : {
          name: v.customer_name,
          ...(v.customer_external_id ? { external_id: v.customer_external_id } : {}),
          ...(v.customer_email ? { email: v.customer_email } : {}),
        };
  const terms = {
    customer,
    contract_id: v.contract_id,
    start_date: v.start_date,
    end_date: v.end_date ?? null,
    currency: v.currency,
    // A whole number goes as one; anything else as typed, for the schema to refuse beside the field.
    ...(v.payment_terms_days === undefined
      ? {}
      : {
          payment_terms_days: /^-?\d+$/.test(v.payment_terms_days)
            ? Number(v.payment_terms_days)
            : v.payment_terms_days,
        }),
    rules,
  };
  const fieldOf = (path: string): string | undefined => {
    const [head, second, ...rest] = path.split(".");
    if (head === "customer") return second === "id" ? "customer_id" : `customer_${second}`;
    if (head === "rules" && second !== undefined && rest.length > 0)
      return ruleFields[Number(second)]?.(rest.join("."));
    return ["contract_id", "start_date", "end_date", "currency", "payment_terms_days"].includes(head ?? "")
      ? head
      : undefined;
  };
  return { terms, fieldOf };
}

/** Errors the service answers without a field path, placed beside the field they are about. */
function uploadFailure(error: unknown, fieldOf: (path: string) => string | undefined): FormFailure {
  if (error instanceof NotFoundError && error.resource === "customer")
    return placedFailure(404, { customer_id: "This customer no longer exists; choose another one." });
  if (error instanceof ConflictError && error.code === "customer_exists") {
    const existing = (error.extra?.customer as { name?: string } | undefined)?.name;
    return placedFailure(409, {
      customer_external_id: `${existing ? `${existing} already has` : "Another customer already has"} this external id: choose that customer under “An existing customer”, or give a different id.`,
    });
  }
  if (error instanceof ConflictError && error.code === "contract_exists")
    return placedFailure(409, { contract_id: "Another contract already has this id; contract ids are unique." });
  return formFailure(error, fieldOf, LABELS);
}

// ---------------------------------------------------------------------------------------------------
// The pages

function uploadStep(viewer: Viewer, error?: string): SafeHtml {
  return html`<section class="card" aria-labelledby="upload-heading">
<h2 id="upload-heading">1. The signed agreement</h2>
<p class="hint">A PDF of at most 10 MB (10,485,760 bytes), not password-protected. When it is one of this service's own agreements, the next step is filled in from its text; otherwise you type the terms.</p>
<form class="stack" method="post" action="/upload-contract" enctype="multipart/form-data">
  ${csrfField(viewer.ctx)}
  <div><label for="upload-file">Agreement (PDF)</label><input id="upload-file" name="file" type="file" accept="application/pdf,.pdf" required${invalidAttributes("upload-file", error)}>${fieldError("upload-file", error)}</div>
  <div><button type="submit">Read the agreement</button></div>
</form>
</section>`;
}

function customerSection(v: ReviewValues, customers: readonly Customer[], errors: FieldErrors): SafeHtml {
  const label = (c: Customer) => (c.external_id ? `${c.name} (${c.external_id})` : c.name);
  const sameName =
    v.customer_mode === "new" && v.customer_name
      ? customers.find((c) => c.name.toLowerCase() === v.customer_name!.toLowerCase())
      : undefined;
  return html`<fieldset class="card"><legend>Customer</legend>
<div><label><input type="radio" name="customer_mode" value="new"${v.customer_mode === "new" ? html` checked` : ""}> A new customer</label></div>
${inputField({ id: "upload-customer-name", name: "customer_name", label: "Name", value: v.customer_name, maxlength: 200, error: errors.customer_name })}
${sameName ? html`<p class="hint">A customer named ${sameName.name} already exists. Customers are never matched by name: choose it below if it is the same one.</p>` : ""}
${inputField({ id: "upload-customer-external-id", name: "customer_external_id", label: "External id", hint: "(optional: your own id for the customer, unique)", value: v.customer_external_id, maxlength: 255, error: errors.customer_external_id })}
${inputField({ id: "upload-customer-email", name: "customer_email", label: "Billing email", hint: "(optional)", type: "email", value: v.customer_email, error: errors.customer_email })}
<div><label><input type="radio" name="customer_mode" value="existing"${v.customer_mode === "existing" ? html` checked` : ""}${customers.length === 0 ? html` disabled` : ""}> An existing customer</label></div>
<div><label for="upload-customer-id">Existing customer</label><select id="upload-customer-id" name="customer_id"${invalidAttributes("upload-customer-id", errors.customer_id)}>
  <option value="">${customers.length === 0 ? "You have no customers yet" : "Choose a customer"}</option>
  ${customers.map((c) => html`<option value="${c.id}"${c.id === v.customer_id ? html` selected` : ""}>${label(c)}</option>`)}
</select>${fieldError("upload-customer-id", errors.customer_id)}</div>
</fieldset>`;
}

function usageRows(v: ReviewValues, currency: string, errors: FieldErrors): SafeHtml {
  // The rows as posted without the blank ones at the end, then a few blank ones: a form shown again does not
  // grow, and a row keeps its number (its errors are named by it).
  let end = v.usage.length;
  while (end > 0 && blankRow(v.usage[end - 1]!)) end--;
  const filled = v.usage.slice(0, end);
  const rows = [...filled, ...Array.from({ length: BLANK_USAGE_ROWS }, () => ({}) as UsageRow)].slice(
    0,
    MAX_PROGRAM_RULES,
  );
  return html`<fieldset class="card"><legend>Usage prices</legend>
<p class="hint">One row per metric: a price per unit, or a rate (a percentage: 2.9 for 2.9% of the event's value, stored as the fraction 0.029). Leave a row blank to skip it.</p>
<input type="hidden" name="usage_rows" value="${String(rows.length)}">
${rows.map((row, i) => {
  const id = (name: string) => `upload-usage-${name}-${i}`;
  return html`<div class="usage-row" role="group" aria-label="Usage price ${String(i + 1)}">
${inputField({ id: id("metric"), name: `usage_metric_${i}`, label: `Metric ${i + 1}`, hint: "(as usage events send it)", value: row.metric, maxlength: 100, error: errors[`usage_metric_${i}`] })}
${inputField({ id: id("name"), name: `usage_name_${i}`, label: "Name", hint: "(optional)", value: row.name, maxlength: 200, error: errors[`usage_name_${i}`] })}
${inputField({ id: id("amount"), name: `usage_amount_${i}`, label: `Price per unit, ${currency}`, value: row.amount, inputmode: "decimal", error: errors[`usage_amount_${i}`] })}
${inputField({ id: id("rate"), name: `usage_rate_${i}`, label: "Rate, %", hint: "(instead of a price: 2.9 for 2.9 %)", value: row.rate, inputmode: "decimal", error: errors[`usage_rate_${i}`] })}
${inputField({ id: id("cap"), name: `usage_cap_${i}`, label: `Monthly cap, ${currency}`, hint: "(optional)", value: row.cap, inputmode: "decimal", error: errors[`usage_cap_${i}`] })}
${inputField({ id: id("counterparty"), name: `usage_counterparty_${i}`, label: "Counterparty", hint: "(optional: only its usage)", value: row.counterparty, maxlength: 255, error: errors[`usage_counterparty_${i}`] })}
</div>`;
})}
</fieldset>`;
}

async function reviewPage(
  deps: DashboardDeps,
  viewer: Viewer,
  staged: { id: string; filename: string; reading: AgreementReading | null },
  values: ReviewValues,
  options: { flash?: Flash | undefined; errors?: FieldErrors; leftOver?: readonly ReadRule[] } = {},
): Promise<string> {
  const errors = options.errors ?? {};
  const customers = (await deps.services.customers.list(viewer.session.actor, {}, { limit: CUSTOMER_CHOICES })).items;
  const currency = values.currency ?? "in the contract's currency";
  const read =
    staged.reading === null
      ? html`<div class="alert warn" role="status">This PDF does not follow the layout of this service's agreements, so nothing was read from it: type the terms below.</div>`
      : html`<div class="alert ok" role="status">The terms below were read from the PDF's text. Check every field against the agreement before saving.</div>`;
  const leftOver =
    (options.leftOver ?? []).length === 0
      ? ""
      : html`<div class="alert warn" role="status">The agreement also lists ${(options.leftOver ?? []).map((r, i) => html`${i > 0 ? ", " : ""}<strong>${r.name}</strong> (${rulePriceWords(r, values.currency)})`)}, which this form has no field for: add ${(options.leftOver ?? []).length === 1 ? "it" : "them"} on the contract's page once it is saved.</div>`;
  const content = html`<p><a href="/contracts">← All contracts</a></p>
${read}${leftOver}
<p>Agreement: <a href="/upload-contract/${staged.id}/file.pdf" download>${staged.filename}</a> <span class="hint">(downloads the uploaded PDF)</span></p>
<form class="stack wide" method="post" action="/upload-contract/${staged.id}" novalidate>
  ${csrfField(viewer.ctx)}
  <h2>2. Review the terms</h2>
  ${customerSection(values, customers, errors)}
  <fieldset class="card"><legend>Contract</legend>
  ${inputField({ id: "upload-contract-id", name: "contract_id", label: "Contract id", hint: "(usage events send it as external_contract_id)", value: values.contract_id, maxlength: 255, error: errors.contract_id })}
  <div class="grid">
  ${inputField({ id: "upload-start-date", name: "start_date", label: "Starts on", type: "date", value: values.start_date, error: errors.start_date })}
  ${inputField({ id: "upload-end-date", name: "end_date", label: "Ends on", hint: "(empty: open-ended)", type: "date", value: values.end_date, error: errors.end_date })}
  ${inputField({ id: "upload-currency", name: "currency", label: "Currency", hint: "(ISO code, e.g. USD)", value: values.currency, maxlength: 3, error: errors.currency })}
  ${inputField({ id: "upload-payment-terms", name: "payment_terms_days", label: "Payment terms, days", hint: "(optional: blank for the customer's)", type: "number", value: values.payment_terms_days, inputmode: "numeric", error: errors.payment_terms_days })}
  </div>
  </fieldset>
  <fieldset class="card"><legend>Fixed prices</legend>
  <div class="grid">
  ${inputField({ id: "upload-minimum", name: "minimum", label: `Monthly minimum, ${currency}`, hint: "(optional)", value: values.minimum, inputmode: "decimal", error: errors.minimum })}
  ${inputField({ id: "upload-subscription", name: "subscription", label: `Subscription fee a month, ${currency}`, hint: "(optional)", value: values.subscription, inputmode: "decimal", error: errors.subscription })}
  ${inputField({ id: "upload-subscription-name", name: "subscription_name", label: "Subscription name", hint: "(optional)", value: values.subscription_name, maxlength: 200, error: errors.subscription_name })}
  </div>
  </fieldset>
  ${usageRows(values, currency, errors)}
  <div><button type="submit">Save contract</button></div>
</form>`;
  return page(viewer.ctx, "Upload a contract", content, { flash: options.flash });
}

/** A staged upload of this company (404 otherwise), or the contract it already became. */
async function stagedOr404(deps: DashboardDeps, viewer: Viewer, id: string) {
  return deps.services.contracts.staged(viewer.session.actor, id);
}

class FormExpired extends DomainError {
  readonly kind = "forbidden" as const;
  constructor() {
    super("The form's token does not match this session", "csrf_token_mismatch");
  }
}

export async function contractUploadPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get("/upload-contract", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(
      reply,
      page(viewer.ctx, "Upload a contract", html`<p><a href="/contracts">← All contracts</a></p>${uploadStep(viewer)}`),
    );
  });

  app.post(
    "/upload-contract",
    { config: { multipartForm: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const viewer = viewerOf(request);
      const token = request.dashboard!.token;
      const csrf = (fields: URLSearchParams) => {
        if (!deps.services.access.csrfTokenMatches(token, fields.get("_csrf") ?? undefined)) throw new FormExpired();
      };
      try {
        const form = await readMultipartForm(request, {
          ...UPLOAD_LIMITS,
          maxFieldBytes: 4096,
          maxFields: 5,
          beforeFile: csrf,
        });
        csrf(form.fields);
        const staged = await deps.services.contracts.stageUpload(
          viewer.session.actor,
          form.file ?? { filename: undefined, bytes: Buffer.alloc(0) },
        );
        return seeOther(reply, `/upload-contract/${staged.id}`);
      } catch (error) {
        if (error instanceof FormExpired) return sendFormExpired(reply);
        if (error instanceof ForbiddenError) throw error;
        const { status, fields, flash } = formFailure(error, () => "file");
        const message = fields.file ?? flash.message;
        // Too many uploads being checked: the sentence says when to try again, the header says it to a machine.
        if (error instanceof RateLimitedError) void reply.header("retry-after", String(error.retryAfterSeconds));
        return sendPage(
          reply,
          page(
            viewer.ctx,
            "Upload a contract",
            html`<p><a href="/contracts">← All contracts</a></p>${uploadStep(viewer, message)}`,
            { flash: { kind: "error", message: "The agreement could not be taken: see the message beside the file." } },
          ),
          status,
        );
      }
    },
  );

  app.get<{ Params: { id: string } }>("/upload-contract/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const staged = await stagedOr404(deps, viewer, request.params.id);
    if (staged.contractId !== null) return seeOther(reply, contractPath(staged.contractId));
    const { values, leftOver } = valuesFromReading(staged.reading);
    return sendPage(reply, await reviewPage(deps, viewer, staged, values, { leftOver }));
  });

  app.get<{ Params: { id: string } }>("/upload-contract/:id/file.pdf", async (request, reply) => {
    const staged = await stagedOr404(deps, viewerOf(request), request.params.id);
    return sendPdf(reply, { filename: staged.filename, pdf: staged.pdf, uploaded: true }, "attachment");
  });

  app.post<{ Params: { id: string } }>("/upload-contract/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const values = valuesFromForm(formOf(request));
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

/** The contracts page's card: where an upload starts. */
export function uploadCard(): SafeHtml {
  return html`<section class="card" aria-labelledby="upload-contract"><h2 id="upload-contract">Upload a contract</h2>
<p class="hint">The signed agreement as a PDF, and its terms: read from the PDF when it is one of this service's agreements, typed otherwise.</p>
<p><a class="button" href="/upload-contract">Upload a contract</a></p></section>`;
}
