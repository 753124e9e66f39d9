import { z } from "zod";
import { jsonDecimal } from "../kernel/decimal-schemas.js";
import { emailText, instantText } from "../kernel/text-formats.js";

/** Trimmed, non-empty, bounded text. PostgreSQL text cannot hold NUL, so it is refused here (400, not 500). */
export const noNul = (s: z.ZodString) => s.regex(/^[^\u0000]*$/, "must not contain NUL characters");
/** Trimmed text of 1 to `max` characters, without NUL: every free-text field a client names (customers, the account, payments, credit notes). */
export const boundedText = (max: number) => noNul(z.string().trim().min(1).max(max));
const text = boundedText;

/** Days to pay an invoice (`Net {n}`): a customer's, a contract's, the account's default. */
export const paymentTermsDaysInput = z.number().int().min(0).max(3650);

/** How a customer's invoices reach it: emailed when issued, or not sent by the service. */
export const INVOICE_DELIVERIES = ["email", "none"] as const;
const invoiceDelivery = z.enum(INVOICE_DELIVERIES);

export const createCustomerInput = z
  .object({
    name: text(200).describe("Display name"),
    external_id: text(255).optional().describe("Your own id for the customer; unique per company"),
    email: z.string().trim().max(254).pipe(z.email()).meta({ format: "email" }).optional(),
    domain: z
      .string()
      .trim()
      .toLowerCase()
      .max(253)
      .regex(
        /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/,
        "must be a domain name such as example.com",
      )
      .optional(),
    country: text(100).optional(),
    address: text(1000).optional(),
    registration_number: text(100).optional().describe("Legal entity number; not used for matching"),
    payment_terms_days: paymentTermsDaysInput
      .optional()
      .describe("Days to pay its invoices (`Net {n}`); left out: the account's default. A contract's own terms win."),
    tax_id: text(100).optional().describe("Its tax id (VAT, GST, EIN...), printed on its invoices"),
    invoice_memo: text(500)
      .optional()
      .describe("Printed on each of its invoices when issued: a PO number, a reference it asked for"),
    invoice_delivery: invoiceDelivery
      .optional()
      .describe(
        "`email`: each invoice is emailed to `email` when issued, with reminders (needs `email`: 400 `email_required` without it); `none` (default): not sent",
      ),
  })
  .strict();

export type CreateCustomerInput = z.infer<typeof createCustomerInput>;

/**
 * PATCH /v1/billing/customers/{id}: the fields to change; `null` clears an optional one. `name` and
 * `external_id` cannot be cleared. Changing terms never changes an issued invoice (its dates are frozen).
 */
export const updateCustomerInput = z
  .object({
    name: createCustomerInput.shape.name.optional(),
    external_id: text(255).nullable().optional(),
    email: z.string().trim().max(254).pipe(z.email()).meta({ format: "email" }).nullable().optional(),
    domain: createCustomerInput.shape.domain.unwrap().nullable().optional(),
    country: text(100).nullable().optional(),
    address: text(1000).nullable().optional(),
    registration_number: text(100).nullable().optional(),
    payment_terms_days: paymentTermsDaysInput.nullable().optional(),
    tax_id: text(100).nullable().optional(),
    invoice_memo: text(500).nullable().optional(),
    invoice_delivery: invoiceDelivery.optional(),
  })
  .strict();
export type UpdateCustomerInput = z.infer<typeof updateCustomerInput>;

/** A customer as the API answers it; `Customer` in the OpenAPI document. */
export const customerSchema = z
  .object({
    object: z.literal("customer"),
    id: z.string().uuid(),
    name: z.string(),
    external_id: z.string().nullable(),
    email: emailText().nullable(),
    domain: z.string().nullable(),
    country: z.string().nullable(),
    address: z.string().nullable(),
    registration_number: z.string().nullable(),
    payment_terms_days: z.number().int().nullable(),
    payment_terms: z.string().nullable().describe("`Net {n}`"),
    tax_id: z.string().nullable(),
    invoice_memo: z.string().nullable(),
    invoice_delivery: invoiceDelivery,
    credit_balances: z
      .array(z.object({ currency: z.string(), amount: jsonDecimal }).meta({ id: "CustomerCreditBalance" }))
      .describe(
        "What credit notes on its paid invoices left it, per currency (credit notes' `to_balance`); empty when none",
      ),
    created_at: instantText(),
    updated_at: instantText().nullable().describe("When it was last changed; null when never"),
  })
  .meta({ id: "Customer" });

export type Customer = z.infer<typeof customerSchema>;
