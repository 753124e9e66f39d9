import { z } from "zod";
import { emailText, instantText } from "../kernel/text-formats.js";

/** Trimmed, non-empty, bounded text. PostgreSQL text cannot hold NUL, so it is refused here (400, not 500). */
export const noNul = (s: z.ZodString) => s.regex(/^[^\u0000]*$/, "must not contain NUL characters");
const text = (max: number) => noNul(z.string().trim().min(1).max(max));

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
    payment_terms_days: z.number().int().min(0).max(3650).optional().describe("Stored and shown as `Net {n}`"),
  })
  .strict();

export type CreateCustomerInput = z.infer<typeof createCustomerInput>;

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
    created_at: instantText(),
  })
  .meta({ id: "Customer" });

export type Customer = z.infer<typeof customerSchema>;

/** The days of stored payment terms (`Net 30` → 30); null when the customer has none (or they do not read so). */
export function paymentTermsDays(paymentTerms: string | null): number | null {
  const days = paymentTerms ? Number(paymentTerms.replace(/^Net /, "")) : NaN;
  return Number.isInteger(days) ? days : null;
}
