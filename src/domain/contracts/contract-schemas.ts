import { z } from "zod";
import { createCustomerInput, paymentTermsDaysInput } from "../customers/customer-schemas.js";
import { calendarDate } from "../kernel/calendar-date.js";
import { BILLING_RANGE_WORDS } from "../kernel/time-range.js";
import { decimalText, jsonDecimal } from "../kernel/decimal-schemas.js";
import { externalIdText } from "../kernel/ids.js";
import { SUPPORTED_CURRENCIES } from "../kernel/money.js";
import { dateText, instantText, urlText } from "../kernel/text-formats.js";
import { COUNTED_KINDS } from "./minimum-terms.js";
import { MAX_PROGRAM_RULES, MAX_RULE_TIERS, RULE_MODELS, RULE_TYPES } from "./pricing-rule.js";

/** Contract ids that would read as the API's own paths beside `/v1/billing/contracts/{ext_id}`. */
const PATH_WORDS = ["extract", "upload"];

export const CONTRACT_STATUSES = ["draft", "active", "completed", "cancelled", "terminated"] as const;

/** POST /v1/billing/contracts: a customer id only; a name or contract id is refused (issue: sample contracts). */
export const createSampleContractInput = z
  .object({ customer_id: z.string().min(1).max(100).describe("The customer's UUID") })
  .strict();

/** A contract as the API answers it; `Contract` in the OpenAPI document. */
export const contractSchema = z
  .object({
    object: z.literal("contract"),
    id: z.string().describe("The contract's external id: the value sent as external_contract_id on usage events"),
    customer_id: z.string(),
    customer_name: z.string(),
    contract_number: z.string(),
    status: z.enum(CONTRACT_STATUSES),
    start_date: dateText(),
    end_date: dateText().nullable().describe("null: open-ended"),
    currency: z.string(),
    billing_cadence: z.string(),
    metrics: z.array(z.string()),
    pdf_url: urlText().describe("The agreement PDF"),
    sample: z.boolean(),
    payment_terms_days: z
      .number()
      .int()
      .nullable()
      .describe("Its own payment terms (days), over its customer's; null: the customer's, else the account's"),
    created_at: instantText(),
  })
  .meta({ id: "Contract" });
export type Contract = z.infer<typeof contractSchema>;

const scopeText = z.string().trim().min(1).max(255);

const countedName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.:-]+$/, "may contain letters, digits, _ . : -");

/** A minimum rule's `counts` (minimum-terms.ts), as it is sent and as it is shown. */
const minimumCountsSchema = z
  .object({
    kinds: z
      .array(z.enum(COUNTED_KINDS))
      .min(1)
      .optional()
      .describe("The kinds of charge counted; default usage, fee and subscription"),
    metrics: z.array(countedName).min(1).max(100).optional().describe("Only the usage and fees of these metrics"),
    rule_ids: z
      .array(countedName)
      .min(1)
      .max(100)
      .optional()
      .describe("Only the charges of these rules (a pass-through rule named here counts)"),
  })
  .strict()
  .describe(
    "minimum rules: what the minimum counts, each field narrowing it. Without it: the month's usage, fees and subscriptions, but pass-through rules' charges and prepaid credit purchases",
  );

const ruleFieldShape = {
  name: z.string().trim().min(1).max(200),
  type: z.enum(RULE_TYPES),
  model: z.enum(RULE_MODELS),
  amount: decimalText.describe("Money amount as a decimal string, for flat rules (per unit on usage rules)"),
  rate: decimalText.describe(
    "Fraction, for percentage rules: 0.0235 is 2.35 percent; above 1 only with allow_rate_above_one",
  ),
  metric: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9_.:-]+$/, "may contain letters, digits, _ . : -"),
  frequency: z.literal("monthly"),
  monthly_cap: decimalText.describe("Money amount: the most the rule's rate-based charges add up to in a month"),
  currency: z.string().length(3),
  counterparty: scopeText,
  counterparty_side: scopeText,
  pair: scopeText,
  tiers: z
    .array(
      z
        .object({
          up_to: decimalText
            .nullable()
            .optional()
            .describe(
              "Units up to and including this quantity; null (or absent) on the last tier only: no upper bound",
            ),
          unit_amount: decimalText.describe("Money amount per unit in this tier"),
          flat_amount: decimalText
            .nullable()
            .optional()
            .describe("Money amount charged once when the period enters the tier"),
        })
        .strict(),
    )
    .max(MAX_RULE_TIERS)
    .describe(`graduated and volume rules: the tiers, in order of up_to (at most ${MAX_RULE_TIERS})`),
  package_size: decimalText.describe(
    "package rules: units per package, a positive integer; amount is the price per started package",
  ),
  fixed_fee: decimalText.describe(
    "percentage rules: money amount added to each event's charge (the 30¢ of 2.9 % + 30¢)",
  ),
  min_fee: decimalText.describe("percentage rules: the least one event is charged, fixed fee included"),
  max_fee: decimalText.describe("percentage rules: the most one event is charged, fixed fee included"),
  allow_rate_above_one: z
    .boolean()
    .describe("percentage rules: a rate above 1 (100 %) is meant; without it such a rate is refused as a likely typo"),
  pass_through: z
    .boolean()
    .describe(
      "usage rules: the charges are collected for a third party (network, correspondent, interchange fees): no monthly minimum counts them and no credit pays them",
    ),
  counts: minimumCountsSchema,
};

export const ruleIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.-]+$/, "may contain letters, digits, _ . -");

/** POST …/pricing-rules. Cross-field rules (a percentage rule needs a rate …) are checked by normalizeRule. */
export const addPricingRuleInput = z
  .object({
    id: ruleIdSchema.optional(),
    ...Object.fromEntries(Object.entries(ruleFieldShape).map(([k, v]) => [k, v.optional()])),
  } as { id: z.ZodOptional<typeof ruleIdSchema> } & {
    [K in keyof typeof ruleFieldShape]: z.ZodOptional<(typeof ruleFieldShape)[K]>;
  })
  .strict();

/**
 * Rule fields any of which may be absent or null: a rule as the preview takes it (as `POST …/pricing-rules` does,
 * or as `GET …/pricing` answers it, null: not set), and an update's fields (null clears one).
 */
const nullableRuleFields = z
  .object({
    id: ruleIdSchema.optional(),
    ...Object.fromEntries(Object.entries(ruleFieldShape).map(([k, v]) => [k, v.nullable().optional()])),
  } as { id: z.ZodOptional<typeof ruleIdSchema> } & {
    [K in keyof typeof ruleFieldShape]: z.ZodOptional<z.ZodNullable<(typeof ruleFieldShape)[K]>>;
  })
  .strict();

/** POST …/pricing/preview: the whole program as it would be, and the month to price with it. */
export const pricingPreviewInput = z
  .object({
    rules: z
      .array(nullableRuleFields)
      .max(MAX_PROGRAM_RULES)
      .describe(
        "Every rule of the program as it would be, each as `POST …/pricing-rules` takes it or as `GET …/pricing` answers it (a null field is not set)",
      ),
    billing_period_start: calendarDate().describe(
      `First day of a calendar month, a billing month ${BILLING_RANGE_WORDS}`,
    ),
    billing_period_end: calendarDate().describe("Last day of the same month"),
    effective_date: calendarDate()
      .optional()
      .describe(
        "The day (UTC) the previewed program would apply from, in the month: events before it keep the version they were priced with, as saving the change with this `effective_date` would. Without it, the whole month is priced with the previewed program",
      ),
  })
  .strict();

/** The day a rule change applies from (docs/api.md, "Scheduled changes"); without it, every event rated from now on. */
const effectiveDateField = calendarDate()
  .optional()
  .describe(
    "The day (UTC) the change applies from: events of that day on are priced by it, and an open draft's events from that day are priced again. Without it the change applies to every event rated from now on, and nothing already rated changes.",
  );

/** POST …/pricing-rules: the rule, and when the change applies from. */
export const addPricingRuleBody = addPricingRuleInput.extend({ effective_date: effectiveDateField }).strict();

/** PUT …/pricing-rules/{rule_id}: any subset, merged into the rule; null clears an optional field. */
export const updatePricingRuleInput = nullableRuleFields;

/** PUT …/pricing-rules/{rule_id}: the fields, and when the change applies from. */
export const updatePricingRuleBody = updatePricingRuleInput.extend({ effective_date: effectiveDateField }).strict();

/** A rule change's body as the service takes it (pricing-versions.ts): the rule's fields, and the day it applies from. */
export const toRuleChange = <T extends { effective_date?: string | undefined }>({ effective_date, ...fields }: T) => ({
  fields,
  effectiveDate: effective_date ?? null,
});

/** A rule of a program version, as the API answers it; `PricingRule` in the OpenAPI document. */
const pricingRuleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(RULE_TYPES),
    model: z.enum(RULE_MODELS),
    amount: z.string().nullable(),
    rate: jsonDecimal.nullable(),
    metric: z.string().nullable(),
    frequency: z.literal("monthly").nullable(),
    monthly_cap: z.string().nullable(),
    currency: z.string(),
    counterparty: z.string().nullable(),
    counterparty_side: z.string().nullable(),
    pair: z.string().nullable(),
    tiers: z
      .array(
        z
          .object({ up_to: jsonDecimal.nullable(), unit_amount: z.string(), flat_amount: z.string().nullable() })
          .meta({ id: "PricingTier" }),
      )
      .optional()
      .describe("graduated and volume rules only"),
    package_size: jsonDecimal.optional().describe("package rules only"),
    fixed_fee: z.string().optional().describe("percentage rules, when set"),
    min_fee: z.string().optional().describe("percentage rules, when set"),
    max_fee: z.string().optional().describe("percentage rules, when set"),
    allow_rate_above_one: z.literal(true).optional().describe("percentage rules, when set"),
    pass_through: z.literal(true).optional().describe("usage rules collected for a third party, when set"),
    counts: minimumCountsSchema.optional(),
  })
  .meta({ id: "PricingRule" });

const programVersionSchema = z
  .object({
    object: z.literal("pricing_program"),
    contract: z.string(),
    version: z.number().int(),
    effective_date: dateText(),
    rules: z.array(pricingRuleSchema),
  })
  .meta({ id: "PricingProgramVersion" });

export const pricingProgramSchema = programVersionSchema
  .extend({
    upcoming: z
      .array(programVersionSchema)
      .describe(
        "Versions scheduled to come into force after today, in the order they will (each from its effective_date)",
      ),
  })
  .meta({ id: "PricingProgram" });

/** The answer to adding or updating a rule: the rule as it stands in the program version that the change made. */
export const pricingRuleResponseSchema = z
  .object({
    object: z.literal("pricing_rule"),
    contract: z.string(),
    version: z.number().int().describe("The program version the change made (in force on its effective_date)"),
    effective_date: dateText().describe("The day that version applies from, as shown"),
    rule: pricingRuleSchema,
  })
  .meta({ id: "PricingRuleChange" });

/** The most bytes an uploaded agreement may have: 10 MiB (10,485,760). */
export const MAX_AGREEMENT_BYTES = 10 * 1024 * 1024;
/** The most pages an uploaded agreement may have (docs/api.md, "Limits"): every page's content is read to check it. */
export const MAX_AGREEMENT_PAGES = 500;

/**
 * A contract upload's `terms` (docs/api.md, "Uploading a contract"): the customer (an existing one by id, or
 * a new one, never matched by name), the contract's id, term and currency, and its pricing rules, each as
 * addPricingRule takes it. Cross-field rule checks are normalizeRule's, as for addPricingRule.
 */
export const uploadTermsInput = z
  .object({
    customer: createCustomerInput
      .pick({ name: true, external_id: true, email: true, address: true })
      .partial({ name: true })
      .extend({ id: z.string().min(1).max(100).optional().describe("An existing customer's UUID") })
      .strict()
      .superRefine((customer, ctx) => {
        if (
          customer.id !== undefined &&
          (customer.name ?? customer.external_id ?? customer.email ?? customer.address) !== undefined
        ) {
          ctx.addIssue({
            code: "custom",
            path: ["id"],
            message:
              "names an existing customer: send either id, or name (with external_id, email and address) for a new one",
          });
        } else if (customer.id === undefined && customer.name === undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["name"],
            message: "is required for a new customer (or send the id of an existing one)",
          });
        }
      })
      .describe('`{"id"}` of an existing customer, or `{"name", "external_id"?, "email"?, "address"?}` for a new one'),
    contract_id: externalIdText
      .refine((id) => !PATH_WORDS.includes(id), {
        message: `must not be ${PATH_WORDS.join(" or ")}: those name the API's own paths under /v1/billing/contracts/`,
      })
      .describe(
        "The contract's id: the value usage events send as external_contract_id. Not `extract` or `upload`, which name the API's own paths.",
      ),
    start_date: calendarDate(),
    end_date: calendarDate().nullable().optional().describe("On or after `start_date`; omitted or null: open-ended"),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, "must be a three-letter ISO 4217 code in capitals, such as USD")
      .refine((code) => SUPPORTED_CURRENCIES.has(code), "is not a currency the service bills in"),
    payment_terms_days: paymentTermsDaysInput
      .nullable()
      .optional()
      .describe("The contract's payment terms (days, `Net {n}`), over its customer's; left out: the customer's"),
    rules: z
      .array(addPricingRuleInput)
      .max(MAX_PROGRAM_RULES)
      .describe("The pricing rules; a monthly minimum is a rule of type minimum"),
  })
  .strict()
  .refine((terms) => terms.end_date == null || terms.end_date >= terms.start_date, {
    path: ["end_date"],
    message: "must be on or after start_date",
    // Checked whenever both dates are dates, even when other fields are refused: a form shows every error at once.
    when: (payload) => termDates.safeParse(payload.value).success,
  });

const termDates = z.object({ start_date: calendarDate(), end_date: calendarDate().nullable().optional() });

export type UploadTerms = z.output<typeof uploadTermsInput>;

/** Why an extraction's reading is partial or needs a closer look (docs/api.md, "Reading an agreement"). */
const EXTRACTION_WARNING_CODES = [
  "no_text",
  "ocr",
  "ocr_skipped",
  "ocr_busy",
  "ocr_failed",
  "pages_skipped",
  "date_order",
  "nothing_found",
] as const;

const extractedTier = z.object({
  up_to: z.string().nullable(),
  unit_amount: z.string(),
  flat_amount: z.string().nullable().optional(),
});

/** A pricing rule as an extraction proposes it: the fields `uploadContract` takes, each only when found. */
const extractedRuleSchema = z
  .object({
    name: z.string(),
    type: z.enum(["usage", "subscription", "minimum"]),
    model: z.enum(RULE_MODELS),
    metric: z.string().optional().describe("The rule's name as an id: lower case, `_` between words"),
    amount: z.string().optional(),
    rate: z.string().optional().describe("A fraction: 0.0235 is 2.35 %"),
    frequency: z.literal("monthly").optional(),
    fixed_fee: z.string().optional(),
    min_fee: z.string().optional(),
    max_fee: z.string().optional(),
    monthly_cap: z.string().optional(),
    counterparty: z.string().optional(),
    tiers: z.array(extractedTier).optional(),
    package_size: z.string().optional(),
  })
  .meta({ id: "ExtractedRule" });

/** POST /v1/billing/contracts/extract: the terms an agreement proposes, and where each value came from. */
export const contractExtractionSchema = z
  .object({
    object: z.literal("contract_extraction"),
    terms: z
      .object({
        customer: z
          .object({ name: z.string().optional(), email: z.string().optional(), address: z.string().optional() })
          .optional(),
        contract_id: z.string().optional().describe("The agreement's number as printed"),
        start_date: dateText().optional(),
        end_date: dateText().nullable().optional().describe("null: the agreement says it is open-ended"),
        currency: z.string().optional(),
        payment_terms_days: z.number().int().optional(),
        rules: z.array(extractedRuleSchema).optional(),
      })
      .describe("Shaped as `uploadContract`'s `terms`, each field present only when it was found"),
    fields: z
      .array(
        z
          .object({
            field: z.string().describe('The value\'s path in `terms`: "customer.name", "rules.2.rate"'),
            value: z
              .union([z.string(), z.number(), z.null(), z.array(extractedTier)])
              .describe("The value as it stands in `terms`"),
            confidence: z
              .number()
              .min(0)
              .max(1)
              .describe("How sure the reading is: lower for loose wording and for text read by OCR"),
            page: z.number().int().describe("The page it was read on (1 is the first)"),
            source_text: z.string().describe("The exact text it was read from, as it stands on the page"),
          })
          .meta({ id: "ExtractedField" }),
      )
      .describe("Every proposed value, with its source"),
    warnings: z.array(
      z
        .object({
          code: z
            .enum(EXTRACTION_WARNING_CODES)
            .describe(
              "no_text: a page has no text layer and OCR found no words on it; ocr: pages were read by OCR; ocr_skipped: pages without text beyond the 5 OCR reads; ocr_busy: OCR had no turn for these pages within its wait (or the company already has two scans being read), the other pages were read and the message says when to send the file again; ocr_failed: a page ran out of OCR's budget; pages_skipped: pages beyond the first 30; date_order: a date in numbers only was read in the order the document implies; nothing_found: no term was recognised",
            ),
          message: z.string(),
          pages: z.array(z.number().int()).optional(),
        })
        .meta({ id: "ExtractionWarning" }),
    ),
  })
  .meta({ id: "ContractExtraction" });
