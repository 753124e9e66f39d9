import { z } from "zod";
import { boundedText, paymentTermsDaysInput } from "../customers/customer-schemas.js";
import { supportedLocale } from "../kernel/document-format.js";
import { instantText } from "../kernel/text-formats.js";

/** The papers an invoice's PDF is laid out on. */
export const PAPER_SIZES = ["letter", "a4"] as const;
export type PaperSize = (typeof PAPER_SIZES)[number];

/** The most bytes a logo may have: 1 MiB. */
export const MAX_LOGO_BYTES = 1024 * 1024;

const text = boundedText;

/** Reminder days: whole days from the due date, −365 to 365, each once, at most 10. */
const reminderDaysInput = z
  .array(z.number().int().min(-365).max(365))
  .max(10)
  .refine((days) => new Set(days).size === days.length, "each day at most once")
  .meta({ uniqueItems: true });

/**
 * PATCH /v1/billing/account: the seller's profile, as every invoice shows it. `null` clears a field. Several
 * lines (an address, bank details) are sent as one string with line breaks.
 */
export const updateAccountInput = z
  .object({
    legal_name: text(200).nullable().optional().describe("The seller's legal name; the company's name when null"),
    address: text(1000).nullable().optional().describe("Postal address, several lines"),
    tax_id: text(100).nullable().optional().describe("VAT, GST or EIN number"),
    payment_instructions: text(2000)
      .nullable()
      .optional()
      .describe("How to pay: bank name, account and routing numbers, IBAN and BIC, several lines"),
    invoice_footer: text(1000).nullable().optional().describe("Printed at the foot of every invoice"),
    paper_size: z.enum(PAPER_SIZES).optional().describe("The invoice PDF's paper; `letter` by default"),
    locale: z
      .string()
      .max(35)
      .refine((tag) => supportedLocale(tag) !== undefined, "must be a locale tag such as en-US, en-GB or de-DE")
      .optional()
      .describe("How invoices write dates and money (a BCP 47 tag: en-US, en-GB, de-DE, fr-FR); `en-US` by default"),
    payment_terms_days: paymentTermsDaysInput
      .optional()
      .describe("Default payment terms (days), for customers and contracts without their own; 30 by default"),
    reminder_days: reminderDaysInput
      .optional()
      .describe(
        "When unpaid invoices are reminded by email, in days from the due date (negative: before it), each day at most once; [-3, 1, 7] by default, [] for none",
      ),
  })
  .strict();
export type UpdateAccountInput = z.infer<typeof updateAccountInput>;

/** The seller's profile as the API answers it; `Account` in the OpenAPI document. */
export const accountSchema = z
  .object({
    object: z.literal("account"),
    id: z.string().uuid().describe("The company's id"),
    name: z.string().describe("The company's name"),
    legal_name: z.string().nullable(),
    address: z.string().nullable(),
    tax_id: z.string().nullable(),
    payment_instructions: z.string().nullable(),
    invoice_footer: z.string().nullable(),
    paper_size: z.enum(PAPER_SIZES),
    locale: z.string().describe("How invoices write dates and money (BCP 47); `en-US` by default"),
    payment_terms_days: z.number().int(),
    reminder_days: z
      .array(z.number().int())
      .describe("When unpaid invoices are reminded by email, in days from the due date, in order"),
    logo: z
      .object({
        content_type: z.enum(["image/png", "image/jpeg"]),
        size: z.number().int().describe("Bytes"),
        sha256: z.string().describe("Hex SHA-256 of the logo's bytes"),
        width: z.number().int(),
        height: z.number().int(),
      })
      .nullable()
      .describe("The logo printed on invoices; null when none. Its bytes: GET /v1/billing/account/logo"),
    updated_at: instantText().nullable(),
  })
  .meta({ id: "Account" });
export type Account = z.infer<typeof accountSchema>;

/** What invoices print about the seller, drawn from the profile (the PDF and the hosted page). */
export interface SellerProfile {
  name: string;
  address: string | null;
  taxId: string | null;
  paymentInstructions: string | null;
  invoiceFooter: string | null;
  paperSize: PaperSize;
  /** How documents write dates and money (BCP 47, supported by Intl). */
  locale: string;
  logo: { contentType: "image/png" | "image/jpeg"; bytes: Uint8Array } | null;
}
