import { z } from "zod";
import { instantText } from "../../kernel/text-formats.js";

/** A message about an invoice, as its log shows it; `InvoiceMessage` in the OpenAPI document. */
export const invoiceMessageSchema = z
  .object({
    object: z.literal("invoice_message"),
    id: z.string().uuid(),
    invoice: z.string().describe("The invoice's number"),
    kind: z
      .enum(["issued", "reminder", "manual"])
      .describe(
        "`issued`: sent when the invoice was issued; `reminder`: around the due date; `manual`: sent again by hand",
      ),
    reminder_day: z
      .number()
      .int()
      .nullable()
      .describe("A reminder's day, counted from the due date (negative: before it); null on other kinds"),
    to: z.string().nullable().describe("The address it goes to: the customer's email when it was queued"),
    status: z
      .enum(["queued", "sent", "failed"])
      .describe("`queued`: waiting for its (next) attempt; `sent`: accepted by the SMTP server; `failed`: for good"),
    attempts: z.number().int(),
    last_error: z.string().nullable().describe("Why the last attempt failed (the SMTP server's reply, a timeout)"),
    next_attempt_at: instantText().nullable().describe("Queued: when it is (next) tried"),
    sent_at: instantText().nullable(),
    created_at: instantText(),
  })
  .meta({ id: "InvoiceMessage" });
export type InvoiceMessage = z.infer<typeof invoiceMessageSchema>;
