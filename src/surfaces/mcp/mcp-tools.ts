import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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
import { DomainError, ValidationError } from "../../domain/kernel/errors.js";
import { USAGE_EVENT_STATUSES, voidUsageBody } from "../../domain/usage/usage-schemas.js";
import { unstorableTextError } from "../../domain/kernel/storable-text.js";
import type { Tenancy } from "../../domain/kernel/tenancy.js";
import type { OAuthScope } from "../../domain/oauth/oauth-protocol.js";
import type { Services } from "../../domain/services.js";
import { toHttpError } from "../http/error-handler.js";
import { stringifyJson } from "../../platform/exact-json.js";
import type { Logger } from "../../platform/logger.js";
import { argumentsProblem, INVALID_PARAMS, internalRpcError, RpcError, toolCallProblem } from "./mcp-errors.js";

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

const ok = (value: object): CallToolResult => ({
  content: [{ type: "text", text: stringifyJson(value) }],
  structuredContent: value as Record<string, unknown>,
});

/** A refusal by the domain (not found, conflict, a scope, text it cannot store) is a tool error in the API's `{ error, code }`. */
const failure = (body: { error: string; code: string; [k: string]: unknown }): CallToolResult => ({
  content: [{ type: "text", text: stringifyJson(body) }],
  structuredContent: body,
  isError: true,
});

const list = <T>(page: { items: T[]; hasMore: boolean }) => ({
  object: "list",
  data: page.items,
  has_more: page.hasMore,
  total_count: page.items.length,
});

/** Who calls the tools: an OAuth token's grant, or an API key. */
export interface McpCaller {
  /** The company the tools act for, with its API scopes (an OAuth token's stand for its OAuth scopes). */
  actor: Tenancy;
  /**
   * An OAuth token's scopes (`read:invoices`, `write:invoices`), checked before a tool runs so that its
   * refusal names the scope the token lacks. Null for an API key: the domain services check its own API
   * scopes (`invoices:read`, …), and their refusal names the one it lacks.
   */
  oauthScopes: readonly string[] | null;
}

/**
 * The MCP server for one request (stateless: any process answers any request). Every tool parses its
 * arguments, calls one service function as the caller's company, and presents: no rule lives here.
 * Every caller is offered every tool (docs/mcp.md, "API keys"): what it may do is decided per call.
 */
export function buildMcpServer(
  services: Services,
  caller: McpCaller,
  links: { publicUrl: string; logger: Logger },
): McpServer {
  const server = new McpServer({ name: "usage-billing", version: "1.0.0" }, { capabilities: { tools: {} } });
  const { actor, oauthScopes } = caller;
  const tools = new Map<string, { schema: z.ZodObject; call: (args: never) => Promise<CallToolResult> }>();

  function tool<Shape extends z.ZodRawShape>(
    name: string,
    scope: OAuthScope,
    description: string,
    inputSchema: Shape,
    run: (args: z.infer<z.ZodObject<Shape>>) => Promise<object>,
  ) {
    // Strict, like the API's bodies: an unknown (or misspelt) argument is refused, not silently dropped.
    const schema = z.strictObject(inputSchema);
    const call = async (args: z.infer<z.ZodObject<Shape>>): Promise<CallToolResult> => {
      if (oauthScopes && !oauthScopes.includes(scope)) {
        return failure({ error: `This token lacks the required scope: ${scope}`, code: "insufficient_scope" });
      }
      // The API refuses such text in every body before any route sees it (http-app.ts); so do the tools.
      const refusal = unstorableTextError(args);
      if (refusal) return failure(toHttpError(refusal).body);
      try {
        return ok(await run(args));
      } catch (error) {
        if (error instanceof DomainError) return failure(toHttpError(error).body);
        // Anything else is a fault of ours: logged whole, answered without a word of it (mcp-errors.ts).
        links.logger.error({ err: error, tool: name }, "mcp tool failed");
        throw internalRpcError();
      }
    };
    // Registered with the SDK for tools/list (its JSON Schema, annotations); calls go through `callTool` below.
    server.registerTool(
      name,
      {
        description: `${description} Needs scope ${scope}.`,
        inputSchema: schema,
        annotations: { readOnlyHint: scope === "read:invoices" },
      },
      call as never,
    );
    tools.set(name, { schema, call: call as (args: never) => Promise<CallToolResult> });
  }

  /**
   * tools/call, answered here rather than by the SDK's handler, which answers every failure (a refused
   * argument, our own fault with its message) as a tool result. Here: a malformed call, an unknown tool or
   * refused arguments are JSON-RPC Invalid params with one sentence; a domain refusal is a tool error in
   * the API's shape; anything else is an internal error that says nothing of itself (docs/mcp.md, "Tools").
   */
  async function callTool(params: {
    name: string;
    arguments?: Record<string, unknown> | undefined;
  }): Promise<CallToolResult> {
    const found = tools.get(params.name);
    if (!found)
      throw new RpcError(INVALID_PARAMS, `Unknown tool: ${params.name.slice(0, 100)}. tools/list names the tools`);
    const parsed = await found.schema.safeParseAsync(params.arguments ?? {});
    if (!parsed.success)
      throw new RpcError(INVALID_PARAMS, argumentsProblem(params.name, parsed.error.issues, params.arguments ?? {}));
    return found.call(parsed.data as never);
  }

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
    "Lists invoices, newest first, each with its customer's id and name (customer, customer_name), by contract, status (draft, issued, paid or void; open: issued and not paid yet; overdue: open and due before today, UTC) or billing-period dates (YYYY-MM-DD).",
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
    "Gets an invoice with its line items and its customer's id and name (customer, customer_name).",
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
      const base = `${links.publicUrl}/v1/billing/invoices/${encodeURIComponent(invoice.number)}`;
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

  // The request's params are checked by a transform that throws: a zod issue would be answered as the SDK's
  // internal error with the validator's output, a thrown RpcError is answered as it is.
  const callRequest = z.looseObject({
    method: z.literal("tools/call"),
    params: z.unknown().transform((params) => {
      const problem = toolCallProblem(params);
      if (problem !== undefined) throw new RpcError(INVALID_PARAMS, problem);
      return params as { name: string; arguments?: Record<string, unknown> };
    }),
  });
  server.server.setRequestHandler(callRequest, (request) => callTool(request.params));
  return server;
}
