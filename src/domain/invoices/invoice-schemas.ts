import { z } from "zod";
import { calendarDate } from "../kernel/calendar-date.js";
import { BILLING_RANGE_WORDS } from "../kernel/time-range.js";
import { jsonDecimal } from "../kernel/decimal-schemas.js";
import { dateText, instantText, urlText } from "../kernel/text-formats.js";
import { paymentSchema } from "./collections/collection-schemas.js";
import { INVOICE_STATUSES } from "./invoice-states.js";

const billingPeriodSchema = z.object({ start: dateText(), end: dateText() }).meta({ id: "BillingPeriod" });

const lineTierSchema = z
  .object({
    up_to: jsonDecimal.nullable().describe("The tier's upper bound (inclusive); null on the last tier"),
    unit_amount: jsonDecimal.describe("The tier's price per unit"),
    flat_amount: jsonDecimal.nullable().describe("The tier's flat amount; null when it has none"),
    quantity: jsonDecimal.describe("The line's quantity in this tier"),
    amount: jsonDecimal.describe("The line's exact amount in this tier (12 decimals, not rounded to the minor unit)"),
  })
  .meta({ id: "InvoiceLineTier" });

const lineItemSchema = z
  .object({
    description: z.string(),
    quantity: jsonDecimal,
    unit_price: jsonDecimal,
    amount: jsonDecimal,
    kind: z
      .enum(["subscription", "one_time", "usage", "fee", "minimum", "credit"])
      .describe("`credit`: what a credit grant covers of the month's usage, negative"),
    rule_id: z.string().nullable(),
    metric: z.string().nullable(),
    tiers: z
      .array(lineTierSchema)
      .optional()
      .describe(
        "Graduated and volume rules' lines only: each tier reached, in tier order. The tier amounts (plus cap_adjustment) sum exactly to the line's charge total before it is rounded to `amount`.",
      ),
    cap_adjustment: jsonDecimal
      .optional()
      .describe(
        "With tiers, when the rule's monthly cap cut the line: the exact (negative) amount that brings the tier amounts to the line's charge total",
      ),
    minimum: z
      .object({
        commitment: jsonDecimal.describe(
          "The monthly commitment (the minimum rules that count the same charges, summed)",
        ),
        counted: jsonDecimal.describe("What of the month's charges counted toward it (before credits)"),
        top_up: jsonDecimal.describe("commitment − counted: the line's amount"),
      })
      .optional()
      .describe("Minimum lines only: what the line tops up"),
    pass_through: z
      .literal(true)
      .optional()
      .describe("A pass-through rule's line (collected for a third party): no minimum counts it, no credit pays it"),
    event_count: z
      .number()
      .int()
      .optional()
      .describe(
        "Usage lines, on GET /v1/billing/invoices/{number}: how many usage events the line bills (a percentage line's transactions; its `quantity` is their volume). Absent where the events are not on the invoice (a void invoice's moved to its reissue)",
      ),
    uncapped_amount: jsonDecimal
      .optional()
      .describe(
        "Usage lines whose rule's monthly cap cut them, on GET /v1/billing/invoices/{number}: what the line's events cost before the cap, in the currency's minor unit; `amount` is what was charged",
      ),
  })
  .meta({ id: "InvoiceLineItem" });

/**
 * A draft's month as it will bill if nothing else arrives (docs/api.md, "Invoices", the live draft): the draft
 * brought up to date as projection would bring it, computed when it is read, stored nowhere.
 */
const projectedFiguresSchema = z
  .object({
    subscriptions: jsonDecimal.describe("The subscription rules' lines, each at its monthly amount"),
    one_time_fees: jsonDecimal.describe("The one-time rules not billed on another invoice of the contract"),
    minimum_top_up: jsonDecimal.describe(
      'The "Monthly minimum" line that would result: what the month falls short of the minimum; 0 when it does not',
    ),
    subtotal: jsonDecimal,
    tax: jsonDecimal,
    total: jsonDecimal.describe("What the month will bill if no other usage arrives"),
    line_items: z
      .array(lineItemSchema)
      .describe("The lines projection puts on the draft: subscriptions, one-time fees, the minimum top-up"),
  })
  .meta({ id: "InvoiceProjectedFigures" });
export type ProjectedFigures = z.infer<typeof projectedFiguresSchema>;

/** An invoice without its lines, as lists answer it; `InvoiceSummary` in the OpenAPI document. */
export const invoiceSchema = z
  .object({
    object: z.literal("invoice"),
    number: z.string(),
    contract: z.string(),
    customer: z.string().describe("The id of the contract's customer"),
    customer_name: z.string().describe("The customer's name"),
    status: z.enum(INVOICE_STATUSES).describe("draft → issued → paid; issued → void. Only a draft changes."),
    subtotal: jsonDecimal,
    tax: jsonDecimal,
    total: jsonDecimal,
    amount_paid: jsonDecimal.describe("The sum of its payments"),
    amount_credited: jsonDecimal.describe("The sum of its credit notes"),
    amount_due: jsonDecimal.describe(
      "What is still owed: total − amount_paid − amount_credited, never below 0; 0 on a draft or a void invoice",
    ),
    projected: projectedFiguresSchema
      .nullable()
      .describe(
        "Drafts only: the month as it will bill if nothing else arrives (subscriptions, one-time fees, the minimum's top-up), beside the lines the draft holds now; null on issued, paid and void invoices",
      ),
    currency: z.string(),
    billing_period: billingPeriodSchema,
    reissue_of: z
      .string()
      .nullable()
      .describe("A reissued invoice: the number of the void invoice whose period and usage it took over"),
    reissued_as: z
      .string()
      .nullable()
      .describe("A void invoice: the number of the invoice that took over its period and usage (its reissue)"),
    issued_date: dateText(),
    due_date: dateText(),
    paid_date: dateText().nullable(),
    hosted_url: urlText()
      .nullable()
      .describe(
        "The invoice's page for its customer, no sign-in needed (HTML, with its PDF and usage statement); null on drafts. Revoking it gives a new one.",
      ),
    metrics: z.array(z.string()),
    created_at: instantText(),
    updated_at: instantText(),
  })
  .meta({ id: "InvoiceSummary" });
export type Invoice = z.infer<typeof invoiceSchema>;

/** An invoice with its line items; `Invoice` in the OpenAPI document. */
export const invoiceWithLinesSchema = invoiceSchema
  .extend({
    line_items: z.array(lineItemSchema),
    payments: z.array(paymentSchema).describe("Its payments, oldest first"),
  })
  .meta({ id: "Invoice" });
export type InvoiceWithLines = z.infer<typeof invoiceWithLinesSchema>;

const date = calendarDate();

export const projectInvoiceInput = z
  .object({
    external_contract_id: z.string().min(1).max(255),
    billing_period_start: date.describe(`First day of a calendar month, a billing month ${BILLING_RANGE_WORDS}`),
    billing_period_end: date.describe("Last day of the same month"),
  })
  .strict();

export const invoiceProjectionSchema = z
  .object({
    object: z.literal("invoice"),
    number: z.string(),
    contract: z.string(),
    status: z.string(),
    is_new: z.boolean().describe("true when the draft was created rather than updated"),
    subtotal: jsonDecimal,
    tax: jsonDecimal,
    total: jsonDecimal,
    currency: z.string(),
    billing_period: billingPeriodSchema,
  })
  .meta({ id: "InvoiceProjection" });
export type InvoiceProjection = z.infer<typeof invoiceProjectionSchema>;

/**
 * What an invoice list's `status` filter takes: a status, or `open` (issued, not paid: status issued) or
 * `overdue` (open and due before today, UTC). The one list of them: the API, the dashboard and MCP.
 */
export const INVOICE_LIST_STATUSES = [...INVOICE_STATUSES, "open", "overdue"] as const;
export type InvoiceListStatus = (typeof INVOICE_LIST_STATUSES)[number];
const invoiceListStatus = z
  .enum(INVOICE_LIST_STATUSES, { error: `must be one of ${INVOICE_LIST_STATUSES.join(", ")}` })
  .describe(
    "A status (draft, issued, paid, void), or `open` (issued and not paid yet) or `overdue` (open and its due_date before today, UTC)",
  );

/** The filters of an invoice list (GET /v1/billing/invoices, the dashboard's Invoices page, MCP list_invoices). */
export const invoiceListFilters = z.object({
  contract: z.string().min(1).max(255).optional(),
  status: invoiceListStatus.optional(),
  from: calendarDate().optional().describe("Billing period start on or after"),
  to: calendarDate().optional().describe("Billing period end on or before"),
});

export const invoiceNumberParams = z.object({ number: z.string().min(1).max(64) });

/** POST /v1/billing/invoices/{number}/pay: the date it was paid, by default the service's today (UTC). */
export const payInvoiceInput = z
  .object({
    paid_date: calendarDate()
      .optional()
      .describe(
        "The day the payment was received (UTC); defaults to today. Not before issued_date, not in the future.",
      ),
  })
  .strict();

/** An invoice as a pricing preview shows it: its figures and lines (`number` and `status` of the stored one, if any). */
const previewInvoiceSchema = z
  .object({
    number: z
      .string()
      .nullable()
      .describe("The period's invoice; null when it has none (actual) and always on the preview"),
    status: z.enum(INVOICE_STATUSES).nullable().describe("The period's invoice's status; null as for `number`"),
    subtotal: jsonDecimal,
    tax: jsonDecimal,
    total: jsonDecimal,
    line_items: z.array(lineItemSchema),
  })
  .meta({ id: "PricingPreviewInvoice" });
export type PreviewInvoice = z.infer<typeof previewInvoiceSchema>;

const previewLineDifference = z
  .object({
    kind: lineItemSchema.shape.kind,
    description: z.string(),
    actual_amount: jsonDecimal,
    preview_amount: jsonDecimal,
    difference: jsonDecimal.describe("preview_amount − actual_amount"),
  })
  .meta({ id: "PricingPreviewLineDifference" });

/** POST …/pricing/preview: the period priced as it is and as it would be, side by side. Nothing is stored. */
export const pricingPreviewSchema = z
  .object({
    object: z.literal("pricing_preview"),
    contract: z.string(),
    currency: z.string(),
    billing_period: billingPeriodSchema,
    events: z.number().int().describe("The period's stored events the preview priced (voided events are left out)"),
    unpriced_events: z
      .number()
      .int()
      .describe("Events that no rule of the previewed program prices (their metric has no rule): not in `preview`"),
    actual: previewInvoiceSchema.describe(
      "The period's invoice as it stands: a draft brought up to date as projection would, an issued one as issued",
    ),
    preview: previewInvoiceSchema.describe("The invoice the previewed program gives the same events"),
    difference: z.object({
      subtotal: jsonDecimal,
      total: jsonDecimal,
      charges: jsonDecimal.describe(
        "What the pricing changes: the difference of every line but credits (the charges before credits)",
      ),
      credits: jsonDecimal.describe(
        "What the credits change: the difference of the credit lines (a grant made after the month's usage, a charge it now covers)",
      ),
      lines: z
        .array(previewLineDifference)
        .describe("Per line (kind and description), the amounts of both invoices; lines of either, in invoice order"),
    }),
  })
  .meta({ id: "PricingPreview" });
export type PricingPreview = z.infer<typeof pricingPreviewSchema>;

/** The aging buckets of receivables, by whole days past the due date (UTC) at the report's `as_of`. */
export const AGING_BUCKETS = ["current", "1_30", "31_60", "61_90", "over_90"] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

const agingAmounts = {
  current: jsonDecimal.describe("Owed on invoices not yet past due (due today or later)"),
  "1_30": jsonDecimal.describe("Owed on invoices 1 to 30 days past due"),
  "31_60": jsonDecimal.describe("Owed on invoices 31 to 60 days past due"),
  "61_90": jsonDecimal.describe("Owed on invoices 61 to 90 days past due"),
  over_90: jsonDecimal.describe("Owed on invoices more than 90 days past due"),
  total: jsonDecimal.describe("The sum of the buckets: all that is owed"),
  invoices: z.number().int().describe("How many issued invoices owe something"),
};

const receivablesRowSchema = z
  .object({
    customer: z.string().describe("The customer's id"),
    customer_name: z.string(),
    currency: z.string(),
    ...agingAmounts,
  })
  .meta({ id: "ReceivablesRow" });
export type ReceivablesRow = z.infer<typeof receivablesRowSchema>;

/** GET /v1/billing/reports/receivables: what issued invoices still owe, per customer and currency, aged. */
export const receivablesReportSchema = z
  .object({
    object: z.literal("receivables_report"),
    as_of: dateText().describe("The day the invoices are aged at: today (UTC)"),
    data: z
      .array(receivablesRowSchema)
      .describe("One row per customer and currency with something owed, by customer name, then id, then currency"),
    totals: z
      .array(z.object({ currency: z.string(), ...agingAmounts }).meta({ id: "ReceivablesTotal" }))
      .describe("The rows summed per currency, by currency"),
  })
  .meta({ id: "ReceivablesReport" });
export type ReceivablesReport = z.infer<typeof receivablesReportSchema>;

export const receivablesQuery = z.object({
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be a three-letter ISO 4217 code in capitals")
    .optional()
    .describe("Only invoices in this currency"),
});
