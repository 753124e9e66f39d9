import { z } from "zod";
import { boundedText } from "../../customers/customer-schemas.js";
import { calendarDate } from "../../kernel/calendar-date.js";
import { decimalInput, jsonDecimal } from "../../kernel/decimal-schemas.js";
import { CHARGE_DP } from "../../kernel/money.js";
import { dateText, instantText } from "../../kernel/text-formats.js";

// Collecting and correcting an issued invoice (docs/api.md, "Payments" and "Credit notes").

const text = boundedText;

/** How a payment was made: recorded as told, the service moves no money. */
export const PAYMENT_METHODS = ["bank_transfer", "ach", "wire", "card", "check", "cash", "other"] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** POST /v1/billing/invoices/{number}/payments. */
export const recordPaymentInput = z
  .object({
    amount: decimalInput("amount", CHARGE_DP).describe(
      "The amount received, in the invoice's currency: more than 0, at most its amount_due, no more decimals than the currency has",
    ),
    paid_on: calendarDate()
      .optional()
      .describe("The day it was received (UTC); defaults to today. Not before issued_date, not in the future."),
    method: z.enum(PAYMENT_METHODS),
    reference: text(200).optional().describe("Your reference for it: a bank transfer's id, a check number"),
  })
  .strict();
export type RecordPaymentInput = z.output<typeof recordPaymentInput>;

export const paymentSchema = z
  .object({
    object: z.literal("invoice_payment"),
    id: z.string(),
    invoice: z.string(),
    amount: jsonDecimal,
    currency: z.string(),
    paid_on: dateText(),
    method: z.enum(PAYMENT_METHODS),
    reference: z.string().nullable(),
    created_at: instantText(),
  })
  .meta({ id: "InvoicePayment" });
export type Payment = z.infer<typeof paymentSchema>;

/** A credit note credits lines or an amount off the whole, exactly one of them (the API's and the MCP tool's rule). */
export const linesOrAmount = (input: { lines?: unknown; amount?: unknown }): boolean =>
  (input.lines === undefined) !== (input.amount === undefined);

/** POST /v1/billing/invoices/{number}/credit-notes: some lines, or one amount off the whole invoice. */
export const createCreditNoteInput = z
  .object({
    lines: z
      .array(
        z
          .object({
            line: z
              .number()
              .int()
              .min(0)
              .max(100_000)
              .describe("The line's index in the invoice's line_items (0 is the first)"),
            amount: decimalInput("amount", CHARGE_DP).describe(
              "What is credited of that line, at most what is left of it",
            ),
          })
          .strict(),
      )
      .min(1)
      .max(500)
      .optional()
      .describe("The lines credited, each line at most once; send `lines` or `amount`, not both"),
    amount: decimalInput("amount", CHARGE_DP)
      .optional()
      .describe("An amount off the whole invoice, instead of lines: at most what is left to credit"),
    reason: text(500).describe("Why: printed on the credit note"),
  })
  .strict()
  .refine(linesOrAmount, {
    message: "send either lines or amount, not both",
    path: ["lines"],
  })
  // Exactly one of the two, as the document says it (JSON Schema's oneOf over which field is present).
  .meta({
    oneOf: [
      { properties: { lines: {} }, required: ["lines"] },
      { properties: { amount: {} }, required: ["amount"] },
    ],
  });
export type CreateCreditNoteInput = z.output<typeof createCreditNoteInput>;

export const creditNoteSchema = z
  .object({
    object: z.literal("credit_note"),
    number: z.string().describe("CN-000001, numbered per company"),
    invoice: z.string(),
    customer: z.string(),
    currency: z.string(),
    amount: jsonDecimal,
    applied_to_due: jsonDecimal.describe("What it took off the invoice's amount_due"),
    to_balance: jsonDecimal.describe("What it left on the customer's credit balance (the invoice had less due)"),
    reason: z.string(),
    lines: z.array(
      z
        .object({
          line: z.number().int().nullable().describe("The invoice line's index; null for an amount off the whole"),
          description: z.string(),
          amount: jsonDecimal,
        })
        .meta({ id: "CreditNoteLine" }),
    ),
    issued_date: dateText(),
    created_at: instantText(),
  })
  .meta({ id: "CreditNote" });
export type CreditNote = z.infer<typeof creditNoteSchema>;

export const creditNoteNumberParams = z.object({ number: z.string().min(1).max(64) });
