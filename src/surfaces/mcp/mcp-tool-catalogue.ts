// The agent surface's tools (docs/mcp.md, "Tools"): for each, its name, the OAuth scope it needs, what it does
// in words an agent reads, its arguments (the API's own zod schemas) and the one service call it makes as the
// caller's company. No rule lives here; how a call is checked and answered is mcp-tools.ts. tools/list lists
// the tools in the order they are defined here.
import { z } from "zod";
import {
  CONTRACT_STATUSES,
  addPricingRuleInput,
  pricingPreviewInput,
  updatePricingRuleInput,
} from "../../domain/contracts/contract-schemas.js";
import { createCreditGrantInput } from "../../domain/credits/credit-schemas.js";
import { createCustomerInput } from "../../domain/customers/customer-schemas.js";
import {
  createCreditNoteInput,
  linesOrAmount,
  recordPaymentInput,
} from "../../domain/invoices/collections/collection-schemas.js";
import {
  invoiceListFilters,
  invoiceNumberParams,
  projectInvoiceInput,
  receivablesQuery,
} from "../../domain/invoices/invoice-schemas.js";
import { calendarDate } from "../../domain/kernel/calendar-date.js";
import { ValidationError } from "../../domain/kernel/errors.js";
import { USAGE_EVENT_STATUSES, voidUsageBody } from "../../domain/usage/usage-schemas.js";
import type { Tenancy } from "../../domain/kernel/tenancy.js";
import type { OAuthScope } from "../../domain/oauth/oauth-protocol.js";
import type { Services } from "../../domain/services.js";

/** Defines one tool: its name, the scope it needs, its description, its arguments, and what it runs. */
export type DefineTool = <Shape extends z.ZodRawShape>(
  name: string,
  scope: OAuthScope,
  description: string,
  inputSchema: Shape,
  run: (args: z.infer<z.ZodObject<Shape>>) => Promise<object>,
) => void;

const page = {
  limit: z.number().int().min(1).max(100).optional().describe("1 to 100, default 50"),
  starting_after: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Cursor: the id (or invoice number) of the last item of the previous page"),
};
const date = calendarDate();
const effectiveDate = date.optional().describe("The day (UTC) the change applies from; without it, from now on");

const list = <T>(page: { items: T[]; hasMore: boolean }) => ({
  object: "list",
  data: page.items,
  has_more: page.hasMore,
  total_count: page.items.length,
});

/** Every tool, in the order tools/list gives them, acting for `actor`; `publicUrl` makes the documents' links. */
export function defineTools(tool: DefineTool, services: Services, actor: Tenancy, publicUrl: string): void {
  const { contracts, customers, usage, invoices, credits } = services;

  tool(
    "list_contracts",
    "read:invoices",
    "Lists the company's contracts, newest first, optionally by status.",
    { status: z.enum(CONTRACT_STATUSES).optional() },
    async (a) => {
      const data = await contracts.list(actor, a.status);
      return { object: "list", data, has_more: false, total_count: data.length };
    },
  );
  tool(
    "get_contract",
    "read:invoices",
    "Gets one contract by its external id.",
    { contract_id: z.string().min(1).max(255) },
    (a) => contracts.get(actor, a.contract_id),
  );
  tool(
    "get_contract_pricing",
    "read:invoices",
    "Gets the active pricing program version of a contract, with its rules.",
    { contract_id: z.string().min(1).max(255) },
    (a) => contracts.getPricing(actor, a.contract_id),
  );
  tool(
    "create_sample_contract",
    "write:invoices",
    "Creates an active sample test contract for a customer: metrics domestic_wire (20/unit) and international_wire (30/unit), a 1000 USD monthly minimum.",
    { customer_id: z.string().min(1).max(100) },
    (a) => contracts.createSample(actor, a.customer_id),
  );
  tool(
    "add_pricing_rule",
    "write:invoices",
    "Adds a pricing rule to a contract (a new program version). A usage rule needs a metric. Models: flat (amount per unit); percentage (rate as a fraction: 0.0235 = 2.35 %, above 1 only with allow_rate_above_one; optional fixed_fee, min_fee, max_fee per event); graduated and volume (tiers [{up_to, unit_amount, flat_amount?}], up_to null on the last); package (package_size and amount per started package). monthly_cap works with every model. effective_date (YYYY-MM-DD, optional) makes it apply from that day: events from then on are priced by it and an open draft's events from that day are priced again; without it, it applies to every event rated from now on.",
    { contract_id: z.string().min(1).max(255), rule: addPricingRuleInput, effective_date: effectiveDate },
    (a) => contracts.addRule(actor, a.contract_id, { fields: a.rule, effectiveDate: a.effective_date ?? null }),
  );
  tool(
    "update_pricing_rule",
    "write:invoices",
    "Merges fields into a pricing rule (a new program version); null clears a field. effective_date (YYYY-MM-DD) schedules the change from that day, as for add_pricing_rule.",
    {
      contract_id: z.string().min(1).max(255),
      rule_id: z.string().min(1).max(64),
      fields: updatePricingRuleInput,
      effective_date: effectiveDate,
    },
    (a) =>
      contracts.updateRule(actor, a.contract_id, a.rule_id, {
        fields: a.fields,
        effectiveDate: a.effective_date ?? null,
      }),
  );
  tool(
    "grant_credit",
    "write:invoices",
    "Grants prepaid or promotional credit on a contract: {amount, type: prepaid|promotional, name?, starts_on?, expires_on?, metrics?, priority? (0-100, lower burns first)}. Usage burns it as it is rated; a prepaid grant is billed as a one-time line on this month's draft.",
    { contract_id: z.string().min(1).max(255), ...createCreditGrantInput.shape },
    ({ contract_id, ...grant }) => credits.grant(actor, contract_id, grant),
  );
  tool(
    "list_credit_grants",
    "read:invoices",
    "Lists a contract's credit grants with their balances, oldest first.",
    { contract_id: z.string().min(1).max(255) },
    async (a) => list({ items: await credits.list(actor, a.contract_id), hasMore: false }),
  );
  tool(
    "preview_pricing",
    "read:invoices",
    "Prices a month's stored usage under a whole pricing program as it would be (rules shaped as for add_pricing_rule) and answers that invoice beside the month's invoice as it stands, with the difference per line and in total. Nothing is stored.",
    { contract_id: z.string().min(1).max(255), ...pricingPreviewInput.shape },
    (a) =>
      usage.previewPricing(actor, a.contract_id, {
        rules: a.rules,
        periodStart: a.billing_period_start,
        periodEnd: a.billing_period_end,
        effectiveDate: a.effective_date ?? null,
      }),
  );
  tool(
    "submit_usage",
    "write:invoices",
    "Submits 1 to 100 usage events (external_contract_id, event_id, metric, quantity, timestamp; optional fee_amount, applied_rate, counterparty). Each is judged on its own; an event_id already stored is accepted again and billed once.",
    { events: z.array(z.record(z.string(), z.unknown())).min(1).max(100) },
    (a) => usage.submit(actor, a.events),
  );
  tool(
    "list_usage_events",
    "read:invoices",
    "Lists usage events, newest first, filtered by contract, metric, service-period dates (YYYY-MM-DD) or status.",
    {
      contract: z.string().min(1).max(255).optional(),
      metric: z.string().min(1).max(100).optional(),
      from: date.optional(),
      to: date.optional(),
      status: z.enum(USAGE_EVENT_STATUSES).optional(),
      ...page,
    },
    async (a) =>
      list(
        await usage.list(
          actor,
          { contractId: a.contract, metric: a.metric, from: a.from, to: a.to, status: a.status },
          { limit: a.limit ?? 50, startingAfter: a.starting_after },
        ),
      ),
  );
  tool(
    "get_usage_event",
    "read:invoices",
    "Gets one usage event with its charge, rule and invoice.",
    { event_id: z.string().min(1).max(255) },
    (a) => usage.get(actor, a.event_id),
  );
  tool(
    "void_usage_event",
    "write:invoices",
    "Voids a usage event of an open period: its draft invoice is priced again without it; the event stays, status voided. An event on an issued invoice is refused (period_closed).",
    { event_id: z.string().min(1).max(255), ...voidUsageBody.shape },
    (a) => usage.void(actor, a.event_id, a.reason ?? null),
  );
  tool(
    "list_invoices",
    "read:invoices",
    "Lists invoices, newest first, each with its customer's id and name (customer, customer_name), by contract, status (draft, issued, paid or void; open: issued and not paid yet; overdue: open and due before today, UTC) or billing-period dates (YYYY-MM-DD). A draft's `projected.total` is what its month will bill if nothing else arrives.",
    { ...invoiceListFilters.shape, ...page },
    async (a) =>
      list(
        await invoices.list(
          actor,
          { contractId: a.contract, status: a.status, from: a.from, to: a.to },
          { limit: a.limit ?? 50, startingAfter: a.starting_after },
        ),
      ),
  );
  tool(
    "get_invoice",
    "read:invoices",
    "Gets an invoice with its line items and its customer's id and name (customer, customer_name). A draft also has `projected`: what its month will bill if nothing else arrives (subscriptions, one-time fees, the minimum's top-up, total); null once issued.",
    invoiceNumberParams.shape,
    (a) => invoices.get(actor, a.number),
  );
  tool(
    "get_receivables",
    "read:invoices",
    "Receivables aging: what issued invoices still owe, per customer and currency, in buckets by days past due today (UTC): current (not yet due), 1_30, 31_60, 61_90, over_90, with the total; and the same per currency. Optionally of one currency.",
    receivablesQuery.shape,
    (a) => invoices.receivables(actor, { currency: a.currency }),
  );
  tool(
    "get_invoice_documents",
    "read:invoices",
    "Gives the links to an invoice's PDF and to its usage statement (CSV, one row per event, with a SHA-256 Content-Digest). Both are API URLs: fetch them with an API key that has invoices:read.",
    invoiceNumberParams.shape,
    async (a) => {
      const invoice = await invoices.get(actor, a.number);
      const base = `${publicUrl}/v1/billing/invoices/${encodeURIComponent(invoice.number)}`;
      return {
        number: invoice.number,
        status: invoice.status,
        pdf_url: `${base}/pdf`,
        usage_statement_url: `${base}/usage.csv`,
      };
    },
  );
  tool(
    "finalize_invoice",
    "write:invoices",
    "Issues a draft invoice: brings it up to date as projection does, then freezes its lines and totals and sets its issued and due dates. It cannot be undone (an issued invoice can only be paid or voided), so it needs confirm: true, which should follow the user's explicit approval. Finalizing an issued invoice answers it unchanged.",
    {
      ...invoiceNumberParams.shape,
      confirm: z.literal(true).describe("true: the user has approved issuing this invoice"),
    },
    (a) => invoices.finalize(actor, a.number),
  );
  tool(
    "record_payment",
    "write:invoices",
    "Records a payment received on an issued invoice: its amount (at most the invoice's amount_due, in its currency), the day it was received, how (bank_transfer, ach, wire, card, check, cash, other) and your reference. The invoice becomes paid when nothing is left due. The service moves no money. Needs confirm: true, after the user's explicit approval.",
    {
      ...invoiceNumberParams.shape,
      ...recordPaymentInput.shape,
      confirm: z.literal(true).describe("true: the user has approved recording this payment"),
    },
    ({ number, confirm: _confirm, ...payment }) => invoices.recordPayment(actor, number, payment),
  );
  tool(
    "void_invoice",
    "write:invoices",
    "Voids an issued invoice that has no payments or credit notes, and reissues it: a new draft for the same contract and month takes over its usage, to be corrected and finalized again. It cannot be undone, so it needs confirm: true, after the user's explicit approval. An invoice with payments is corrected with a credit note instead.",
    {
      ...invoiceNumberParams.shape,
      confirm: z.literal(true).describe("true: the user has approved voiding this invoice"),
    },
    (a) => invoices.void(actor, a.number),
  );
  tool(
    "create_credit_note",
    "write:invoices",
    "Issues a credit note on an issued or paid invoice: either lines (each {line: index in line_items, amount}) or one amount off the whole, with a reason. It lowers what is due; on a paid invoice it leaves a credit balance on the customer. It cannot be undone, so it needs confirm: true, after the user's explicit approval.",
    {
      ...invoiceNumberParams.shape,
      ...createCreditNoteInput.shape,
      confirm: z.literal(true).describe("true: the user has approved issuing this credit note"),
    },
    ({ number, confirm: _confirm, ...note }) => {
      // The tool's arguments are the input's fields: its rule across fields is the API's.
      if (!linesOrAmount(note)) {
        throw new ValidationError("Send either lines or amount, not both", "invalid_request");
      }
      return invoices.createCreditNote(actor, number, note);
    },
  );
  tool(
    "list_credit_notes",
    "read:invoices",
    "Lists an invoice's credit notes, oldest first.",
    invoiceNumberParams.shape,
    async (a) => list({ items: await invoices.listCreditNotes(actor, a.number), hasMore: false }),
  );
  tool(
    "project_invoice",
    "write:invoices",
    "Creates or updates the draft invoice of a contract for one calendar month: subscription lines, usage, and the monthly-minimum true-up.",
    projectInvoiceInput.shape,
    (a) =>
      invoices.project(actor, {
        contractId: a.external_contract_id,
        periodStart: a.billing_period_start,
        periodEnd: a.billing_period_end,
      }),
  );
  tool(
    "create_customer",
    "write:invoices",
    "Creates a customer (name required; external_id unique per company).",
    createCustomerInput.shape,
    (a) => customers.create(actor, a),
  );
  tool(
    "list_customers",
    "read:invoices",
    "Lists customers, newest first, optionally the one with an external_id.",
    { external_id: z.string().min(1).max(255).optional(), ...page },
    async (a) =>
      list(
        await customers.list(
          actor,
          { externalId: a.external_id },
          { limit: a.limit ?? 50, startingAfter: a.starting_after },
        ),
      ),
  );
}
