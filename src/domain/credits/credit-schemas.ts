import { z } from "zod";
import { calendarDate } from "../kernel/calendar-date.js";
import { decimalText, jsonDecimal } from "../kernel/decimal-schemas.js";
import { dateText, instantText } from "../kernel/text-formats.js";

const CREDIT_TYPES = ["prepaid", "promotional"] as const;

/** POST /v1/billing/contracts/{id}/credits (docs/api.md, "Credits"). Cross-field rules are checked by the service. */
export const createCreditGrantInput = z
  .object({
    amount: decimalText.describe(
      "Money amount granted, more than 0, in the contract's currency with at most its minor-unit decimals",
    ),
    type: z
      .enum(CREDIT_TYPES)
      .describe("`prepaid`: bought by the customer, billed as a one-time line; `promotional`: given, not billed"),
    name: z.string().trim().min(1).max(200).optional().describe("Shown on invoice lines; defaults to the type's name"),
    currency: z.string().length(3).optional().describe("Defaults to, and must equal, the contract's"),
    starts_on: calendarDate().optional().describe("The first day (UTC) its usage may burn it; defaults to today"),
    expires_on: calendarDate()
      .optional()
      .describe(
        "The last day its usage may burn it, on or after `starts_on`; what is left is released after it. Without it: no expiry",
      ),
    metrics: z
      .array(
        z
          .string()
          .trim()
          .min(1)
          .max(100)
          .regex(/^[A-Za-z0-9_.:-]+$/, "may contain letters, digits, _ . : -"),
      )
      .min(1)
      .max(100)
      .optional()
      .describe(
        "The usage metrics it pays for, each a metric of the contract's program; without it, every usage metric",
      ),
    priority: z
      .number()
      .int()
      .min(0)
      .max(100)
      .optional()
      .describe("0 to 100, default 50: grants with a lower number burn first (then the one expiring first)"),
  })
  .strict();
export type CreateCreditGrantInput = z.output<typeof createCreditGrantInput>;

const ledgerEntrySchema = z
  .object({
    kind: z.enum(["grant", "burn", "void", "expiry"]),
    amount: jsonDecimal.describe(
      "Signed: a grant adds; a burn takes (or gives back when its month is priced again); a void gives back what a voided event took; an expiry takes what was left",
    ),
    invoice_number: z.string().nullable().describe("A burn or void: the invoice whose usage it is on"),
    created_at: instantText(),
  })
  .meta({ id: "CreditLedgerEntry" });

export const creditGrantSchema = z
  .object({
    object: z.literal("credit_grant"),
    id: z.string(),
    contract: z.string(),
    name: z.string(),
    type: z.enum(CREDIT_TYPES),
    amount: jsonDecimal,
    balance: jsonDecimal.describe("What is left: the sum of its ledger entries, exact"),
    currency: z.string(),
    starts_on: dateText(),
    expires_on: dateText().nullable(),
    metrics: z.array(z.string()).nullable(),
    priority: z.number().int(),
    status: z.enum(["active", "expired"]),
    invoice_number: z.string().nullable().describe("A prepaid grant: the invoice that bills it"),
    created_at: instantText(),
    ledger: z.array(ledgerEntrySchema).optional().describe("Every movement, oldest first (GET of one grant only)"),
    recredited_invoices: z
      .array(z.string())
      .optional()
      .describe(
        "The answer to its creation only: the open drafts its validity meets, their credits burned again with it (credits pay by the usage's date, whenever it arrived)",
      ),
    unchanged_invoices: z
      .array(
        z.object({
          number: z.string(),
          status: z.string(),
          billing_period: z.object({ start: dateText(), end: dateText() }),
        }),
      )
      .optional()
      .describe(
        "The answer to its creation only: invoices of months its validity meets that had left draft, left as they were issued",
      ),
  })
  .meta({ id: "CreditGrant" });
export type CreditGrant = z.infer<typeof creditGrantSchema>;
