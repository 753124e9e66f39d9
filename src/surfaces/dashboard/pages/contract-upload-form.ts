// The review form of an uploaded contract (docs/dashboard.md, "Uploading a contract") as data: filled in from what
// reading the agreement proposed (each found rule in the part of the form that can show it, the rest carried as read)
// or from a posted form, turned into the API's `terms` (uploadTermsInput), and a refusal of those terms placed beside
// the form's field it is about. contract-upload-review-pages.ts renders it.
import { MAX_PROGRAM_RULES } from "../../../domain/contracts/pricing-rule.js";
import type { ContractExtraction, ExtractedRule } from "../../../domain/contracts/extraction/extraction-types.js";
import { fractionOfPercent, percentOfFraction } from "../../../domain/contracts/rule-price-wording.js";
import { ConflictError, NotFoundError } from "../../../domain/kernel/errors.js";
import { field, type FormBody, type FormFailure, formFailure, placedFailure } from "../page-kit.js";

export interface UsageRow {
  metric?: string | undefined;
  name?: string | undefined;
  amount?: string | undefined;
  rate?: string | undefined;
  fixed_fee?: string | undefined;
  cap?: string | undefined;
  counterparty?: string | undefined;
}

/** A tier of a kept rule as the form holds it: text as typed; a blank `up_to` is the last tier's "no bound". */
export interface TierRow {
  up_to?: string | undefined;
  unit_amount?: string | undefined;
  flat_amount?: string | undefined;
}

/**
 * A found price the usage rows cannot show (tiers, a package, fee bounds): carried as read, saved when kept, with
 * its name and its tiers (a graduated or volume rule's) editable.
 */
interface KeptRule {
  /** The rule as read, in JSON: saved as it is but for `name` and `tiers`, checked by the same schema as every upload's rules. */
  json: string;
  keep: boolean;
  /** Its name as typed (blank: none of its own, so a usage rule is named after its metric). */
  name?: string | undefined;
  /** Its tiers as typed; undefined for a rule without tiers. */
  tiers?: TierRow[] | undefined;
}

/** What the review form holds: typed, or read from the PDF. Text as typed; the service decides what it means. */
export interface ReviewValues {
  customer_mode: "existing" | "new";
  customer_id?: string | undefined;
  customer_name?: string | undefined;
  customer_external_id?: string | undefined;
  customer_email?: string | undefined;
  customer_address?: string | undefined;
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
  kept: KeptRule[];
}

const LABELS: Record<string, string> = {
  start_date: "the start date",
  end_date: "the end date",
  contract_id: "the contract id",
  external_contract_id: "the contract id",
  external_id: "the external id",
  payment_terms_days: "the payment terms",
};

/** Where each found rule goes in the form: its place in `terms.rules`, by the form's part that shows it. */
export interface RuleLayout {
  minimum?: number;
  subscription?: number;
  /** Usage row i was filled from rule usage[i]; rows added after have no rule. */
  usage: number[];
  /** Read-only price k is rule kept[k]. */
  kept: number[];
}

/** A usage price the row's fields say in full: per unit, or a percentage with at most a fixed fee. */
function editableUsage(rule: ExtractedRule): boolean {
  if (rule.type !== "usage" || rule.tiers !== undefined || rule.package_size !== undefined) return false;
  if (rule.min_fee !== undefined || rule.max_fee !== undefined) return false;
  if (rule.model === "flat") return rule.fixed_fee === undefined && rule.rate === undefined;
  return rule.model === "percentage" && rule.amount === undefined;
}

/**
 * The form's parts each found rule fills, the same every time for the same reading: the page finds a value's
 * source again when a posted form is shown back.
 */
export function ruleLayout(extraction: ContractExtraction | null): RuleLayout {
  const layout: RuleLayout = { usage: [], kept: [] };
  (extraction?.terms.rules ?? []).forEach((rule, index) => {
    if (rule.type === "minimum" && rule.model === "flat" && layout.minimum === undefined) layout.minimum = index;
    else if (rule.type === "subscription" && rule.model === "flat" && layout.subscription === undefined)
      layout.subscription = index;
    else if (editableUsage(rule)) layout.usage.push(index);
    else layout.kept.push(index);
  });
  return layout;
}

/** A rate as the form takes it: a percentage (2.9 for 2.9 %), as the rule forms do; the rule stores the fraction. */
const percentOf = (rate: string | undefined) => (rate === undefined ? undefined : (percentOfFraction(rate) ?? rate));

/** The form as the reading fills it in: every proposed value in its field, the rest blank. */
export function valuesFromExtraction(extraction: ContractExtraction | null): ReviewValues {
  const values: ReviewValues = { customer_mode: "new", usage: [], kept: [] };
  if (extraction === null) return values;
  const { terms } = extraction;
  const rules = terms.rules ?? [];
  const layout = ruleLayout(extraction);
  values.customer_name = terms.customer?.name;
  values.customer_email = terms.customer?.email;
  values.customer_address = terms.customer?.address;
  values.contract_id = terms.contract_id;
  values.start_date = terms.start_date;
  values.end_date = terms.end_date ?? undefined;
  values.currency = terms.currency;
  values.payment_terms_days = terms.payment_terms_days === undefined ? undefined : String(terms.payment_terms_days);
  if (layout.minimum !== undefined) values.minimum = rules[layout.minimum]!.amount;
  if (layout.subscription !== undefined) {
    values.subscription = rules[layout.subscription]!.amount;
    values.subscription_name = rules[layout.subscription]!.name;
  }
  for (const index of layout.usage) {
    const rule = rules[index]!;
    values.usage.push({
      metric: rule.metric,
      name: rule.name,
      amount: rule.amount,
      rate: percentOf(rule.rate),
      fixed_fee: rule.fixed_fee,
      cap: rule.monthly_cap,
      counterparty: rule.counterparty,
    });
  }
  for (const index of layout.kept) {
    const rule = rules[index]!;
    values.kept.push({
      json: JSON.stringify(rule),
      keep: true,
      name: rule.name,
      tiers: rule.tiers?.map((t) => ({
        up_to: t.up_to ?? undefined,
        unit_amount: t.unit_amount,
        flat_amount: t.flat_amount ?? undefined,
      })),
    });
  }
  return values;
}

export function valuesFromForm(form: FormBody): ReviewValues {
  const count = (name: string) => Math.min(Number(field(form, name) ?? 0) || 0, MAX_PROGRAM_RULES);
  const usage: UsageRow[] = [];
  for (let i = 0; i < count("usage_rows"); i++) {
    usage.push({
      metric: field(form, `usage_metric_${i}`),
      name: field(form, `usage_name_${i}`),
      amount: field(form, `usage_amount_${i}`),
      rate: field(form, `usage_rate_${i}`),
      fixed_fee: field(form, `usage_fixed_fee_${i}`),
      cap: field(form, `usage_cap_${i}`),
      counterparty: field(form, `usage_counterparty_${i}`),
    });
  }
  const kept: KeptRule[] = [];
  for (let k = 0; k < count("kept_rules"); k++) {
    // A rule with tiers posts how many rows of them the form showed; one without posts none.
    const tierRows = field(form, `kept_tiers_${k}`) === undefined ? undefined : count(`kept_tiers_${k}`);
    const tiers: TierRow[] | undefined =
      tierRows === undefined
        ? undefined
        : Array.from({ length: tierRows }, (_, j) => ({
            up_to: field(form, `kept_tier_up_to_${k}_${j}`),
            unit_amount: field(form, `kept_tier_unit_amount_${k}_${j}`),
            flat_amount: field(form, `kept_tier_flat_amount_${k}_${j}`),
          }));
    kept.push({
      json: field(form, `kept_rule_${k}`) ?? "",
      keep: field(form, `keep_rule_${k}`) !== undefined,
      name: field(form, `kept_name_${k}`),
      tiers,
    });
  }
  return {
    customer_mode: field(form, "customer_mode") === "existing" ? "existing" : "new",
    customer_id: field(form, "customer_id"),
    customer_name: field(form, "customer_name"),
    customer_external_id: field(form, "customer_external_id"),
    customer_email: field(form, "customer_email"),
    customer_address: field(form, "customer_address"),
    contract_id: field(form, "contract_id"),
    start_date: field(form, "start_date"),
    end_date: field(form, "end_date"),
    currency: field(form, "currency")?.toUpperCase(),
    payment_terms_days: field(form, "payment_terms_days"),
    minimum: field(form, "minimum"),
    subscription: field(form, "subscription"),
    subscription_name: field(form, "subscription_name"),
    usage,
    kept,
  };
}

const blankRow = (row: UsageRow) => Object.values(row).every((value) => value === undefined);

/** A kept rule as carried: its JSON parsed, or the text as posted for the schema to refuse beside it. */
function parsedRule(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/**
 * A kept rule as it will be saved: as read, with the name and tiers the form holds in place of the read ones (a
 * blank name left out, so that a usage rule is named after its metric; a blank bound is the last tier's none).
 */
export function keptRuleOf(kept: KeptRule): unknown {
  const rule = parsedRule(kept.json);
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return rule;
  const { name: _read, ...rest } = rule as Record<string, unknown>;
  return {
    ...(kept.name !== undefined ? { name: kept.name } : {}),
    ...rest,
    ...(kept.tiers !== undefined
      ? {
          tiers: kept.tiers.map((t) => ({
            up_to: t.up_to ?? null,
            unit_amount: t.unit_amount,
            ...(t.flat_amount !== undefined ? { flat_amount: t.flat_amount } : {}),
          })),
        }
      : {}),
  };
}

/**
 * The API's terms from the form, and where each rule's errors go: the service names a rule by its place in
 * `rules`, the form by its field.
 */
export function termsFromValues(v: ReviewValues): {
  terms: Record<string, unknown>;
  fieldOf: (path: string) => string | undefined;
} {
  const rules: unknown[] = [];
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
      ...(row.fixed_fee !== undefined ? { fixed_fee: row.fixed_fee } : {}),
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
      fixed_fee: "fixed_fee",
      monthly_cap: "cap",
      counterparty: "counterparty",
    };
    ruleFields.push((name) => `usage_${byField[name] ?? "amount"}_${i}`);
  });
  v.kept.forEach((kept, k) => {
    if (!kept.keep) return;
    rules.push(keptRuleOf(kept));
    // `name`, `tiers.<j>.<field>`: beside the field typed; anything else beside the rule's box.
    ruleFields.push((name) => {
      const [head, tier, tierField] = name.split(".");
      if (head === "name") return `kept_name_${k}`;
      if (head === "tiers" && tier !== undefined && kept.tiers?.[Number(tier)] !== undefined)
        return `kept_tier_${tierField === "up_to" || tierField === "flat_amount" ? tierField : "unit_amount"}_${k}_${tier}`;
      return `kept_rule_${k}`;
    });
  });
  const customer =
    v.customer_mode === "existing"
      ? { id: v.customer_id }
      : {
          name: v.customer_name,
          ...(v.customer_external_id ? { external_id: v.customer_external_id } : {}),
          ...(v.customer_email ? { email: v.customer_email } : {}),
          ...(v.customer_address ? { address: v.customer_address } : {}),
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
    if (head === "rules" && second !== undefined) return ruleFields[Number(second)]?.(rest.join("."));
    return ["contract_id", "start_date", "end_date", "currency", "payment_terms_days"].includes(head ?? "")
      ? head
      : undefined;
  };
  return { terms, fieldOf };
}

/** Errors the service answers without a field path, placed beside the field they are about. */
export function uploadFailure(error: unknown, fieldOf: (path: string) => string | undefined): FormFailure {
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
