// The forms on a contract's page that change its pricing program (docs/dashboard.md, "Rates and price models in the
// forms"): adding a rule and changing a rule's price, each optionally from a day. What they show, and what they send:
// the API's own rule schemas read the fields (a rate typed as a percentage is the fraction a rule stores, tiers are
// typed a line each), so a form accepts what the API does; a refusal is shown beside the field it names.
// contract-rule-pages.ts takes the posted forms.
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import { RULE_MODELS, RULE_TYPES, type PresentedRule } from "../../../domain/contracts/pricing-rule.js";
import { fractionOfPercent, rulePriceWords } from "../../../domain/contracts/rule-price-wording.js";
import { readTierLines, TIER_LINE_FORMAT } from "../../../domain/contracts/tier-lines.js";
import { ConflictError, ValidationError } from "../../../domain/kernel/errors.js";
import {
  field,
  formFailure,
  placedFailure,
  plainWords,
  type FieldErrors,
  type FormBody,
  type Viewer,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { contractPath, csrfField, fieldError, inputField, invalidAttributes } from "../layout.js";

/** Field names as the rule forms' messages may mention them. */
const RULE_LABELS: Record<string, string> = { monthly_cap: "the monthly cap" };

export const ADD_FIELDS = [
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
export type AddValues = Partial<Record<(typeof ADD_FIELDS)[number], string>>;
export const CHANGE_FIELDS = ["rule_id", "amount", "rate", "allow_rate_above_one", "effective_date"] as const;
export type ChangeValues = Partial<Record<(typeof CHANGE_FIELDS)[number], string>>;

export function valuesOf<K extends string>(form: FormBody, names: readonly K[]): Partial<Record<K, string>> {
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
export function ruleInputOf(values: AddValues): Record<string, unknown> {
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

export function addRuleForm(
  viewer: Viewer,
  contract: Contract,
  values: AddValues | undefined,
  errors: FieldErrors,
): SafeHtml {
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

export function changeRuleForm(
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

/** The form field a refusal names: the changed rule's own (`rules.{index}.x` in a preview); other rules' none. */
export function previewFieldOf(index: number | undefined) {
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
export function ruleFormFailure(
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
