/**
 * The MCP tools over POST /mcp (stateless, JSON responses): scopes per tool, every tool's happy path,
 * errors as tool errors with the API's codes, and company isolation.
 */
import assert from "node:assert/strict";
import { before, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import {
  MARCH,
  createCustomer,
  createSampleContract,
  newEventId,
  usageEvent,
  type Contract,
  type Invoice,
  type Rule,
  type SubmitResult,
  type UsageEvent,
} from "../support/api.js";
import {
  invalidParams,
  mcpRequest,
  newUser,
  obtainTokens,
  toolError,
  toolOk,
  type User,
} from "../support/mcp-client.js";

const READ_TOOLS = [
  "list_contracts",
  "get_contract",
  "get_contract_pricing",
  "preview_pricing",
  "list_credit_grants",
  "list_usage_events",
  "get_usage_event",
  "list_invoices",
  "get_invoice",
  "get_invoice_documents",
  "list_credit_notes",
  "get_receivables",
  "list_customers",
] as const;
const WRITE_TOOLS = [
  "create_sample_contract",
  "add_pricing_rule",
  "update_pricing_rule",
  "submit_usage",
  "void_usage_event",
  "grant_credit",
  "project_invoice",
  "finalize_invoice",
  "record_payment",
  "void_invoice",
  "create_credit_note",
  "create_customer",
] as const;

interface List<T> {
  object: "list";
  data: T[];
  has_more: boolean;
  total_count: number;
}
interface Program {
  object: "pricing_program";
  contract: string;
  version: number;
  rules: Rule[];
}

describeEachEngine("MCP tools", (t) => {
  let a: User;
  let b: User;
  let contract: Contract;
  let eventId: string;
  let invoiceNumber: string;
  const token: Record<"full" | "read" | "write" | "other", string> = { full: "", read: "", write: "", other: "" };

  before(async () => {
    a = await newUser(t());
    b = await newUser(t());
    const customer = await createCustomer(t(), a.key, { name: "Acme Corp" });
    contract = await createSampleContract(t(), a.key, customer.id);
    token.full = (await obtainTokens(t(), a)).access_token;
    token.read = (await obtainTokens(t(), a, ["read:invoices"])).access_token;
    token.write = (await obtainTokens(t(), a, ["write:invoices"])).access_token;
    token.other = (await obtainTokens(t(), b)).access_token;
    const submitted = await toolOk<SubmitResult>(t(), token.full, "submit_usage", {
      events: [usageEvent(contract.id, { quantity: 2 })],
    });
    assert.equal(submitted.accepted, 1, JSON.stringify(submitted));
    eventId = submitted.events[0]!.event_id!;
    invoiceNumber = (await toolOk<UsageEvent>(t(), token.full, "get_usage_event", { event_id: eventId }))
      .invoice_number;
  });

  /** Valid arguments for every tool, so that only the scope (or the company) decides. */
  const args = (): Record<(typeof READ_TOOLS)[number] | (typeof WRITE_TOOLS)[number], Record<string, unknown>> => ({
    list_contracts: {},
    get_contract: { contract_id: contract.id },
    get_contract_pricing: { contract_id: contract.id },
    preview_pricing: {
      contract_id: contract.id,
      rules: [{ metric: "domestic_wire", amount: "25.00" }],
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    },
    list_usage_events: { contract: contract.id },
    get_usage_event: { event_id: eventId },
    list_invoices: { contract: contract.id },
    get_invoice: { number: invoiceNumber },
    get_invoice_documents: { number: invoiceNumber },
    get_receivables: {},
    list_customers: {},
    create_sample_contract: { customer_id: contract.customer_id },
    add_pricing_rule: { contract_id: contract.id, rule: { metric: "card_volume", model: "percentage", rate: 0.029 } },
    update_pricing_rule: { contract_id: contract.id, rule_id: "any-rule", fields: { amount: "25.00" } },
    submit_usage: { events: [usageEvent(contract.id)] },
    void_usage_event: { event_id: "no-such-event", reason: "scope check" },
    grant_credit: { contract_id: contract.id, amount: "5", type: "promotional" },
    list_credit_grants: { contract_id: contract.id },
    project_invoice: {
      external_contract_id: contract.id,
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    },
    finalize_invoice: { number: invoiceNumber, confirm: true },
    record_payment: { number: invoiceNumber, amount: "1", method: "ach", confirm: true },
    void_invoice: { number: invoiceNumber, confirm: true },
    create_credit_note: { number: invoiceNumber, amount: "1", reason: "scope check", confirm: true },
    list_credit_notes: { number: invoiceNumber },
    create_customer: { name: "Scoped Out Ltd" },
  });

  it("records a payment, issues a credit note and voids an invoice only with confirm: true", async () => {
    const customer = await createCustomer(t(), a.key, { name: "Collect Ltd" });
    const own = await createSampleContract(t(), a.key, customer.id);
    await toolOk<SubmitResult>(t(), token.full, "submit_usage", { events: [usageEvent(own.id)] });
    const draft = (await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: own.id })).data[0]!;
    await toolError(
      t(),
      token.full,
      "record_payment",
      { number: draft.number, amount: "1", method: "ach", confirm: true },
      "invoice_is_draft",
    );
    const issued = await toolOk<Invoice>(t(), token.full, "finalize_invoice", { number: draft.number, confirm: true });
    assert.match(
      await invalidParams(t(), token.full, "record_payment", { number: issued.number, amount: "1", method: "ach" }),
      /confirm/,
    );
    const paid = await toolOk<Invoice & { amount_paid: number; payments: unknown[] }>(
      t(),
      token.full,
      "record_payment",
      {
        number: issued.number,
        amount: "10.50",
        method: "wire",
        reference: "FT-42",
        confirm: true,
      },
    );
    assert.equal(paid.amount_paid, 10.5);
    assert.equal(paid.payments.length, 1);
    await toolError(
      t(),
      token.other,
      "record_payment",
      { number: issued.number, amount: "1", method: "ach", confirm: true },
      "not_found",
    );
    await toolError(
      t(),
      token.full,
      "create_credit_note",
      { number: issued.number, amount: "1", lines: [{ line: 0, amount: "1" }], reason: "both", confirm: true },
      "invalid_request",
    );
    const note = await toolOk<{ number: string; amount: number }>(t(), token.full, "create_credit_note", {
      number: issued.number,
      amount: "2.25",
      reason: "Goodwill",
      confirm: true,
    });
    assert.match(note.number, /^CN-\d{6}$/);
    assert.equal(note.amount, 2.25);
    const notes = await toolOk<List<{ number: string }>>(t(), token.read, "list_credit_notes", {
      number: issued.number,
    });
    assert.deepEqual(
      notes.data.map((n) => n.number),
      [note.number],
    );
    await toolError(t(), token.full, "void_invoice", { number: issued.number, confirm: true }, "invoice_has_payments");
  });

  it("finalizes an invoice only with confirm: true, and lists invoices by status", async () => {
    const customer = await createCustomer(t(), a.key, { name: "Finalize Ltd" });
    const own = await createSampleContract(t(), a.key, customer.id);
    await toolOk<SubmitResult>(t(), token.full, "submit_usage", { events: [usageEvent(own.id)] });
    const draft = (await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: own.id, status: "draft" }))
      .data[0]!;
    for (const missing of [
      { number: draft.number },
      { number: draft.number, confirm: false },
      { number: draft.number, confirm: "yes" },
    ]) {
      assert.match(await invalidParams(t(), token.full, "finalize_invoice", missing), /confirm/);
    }
    assert.equal(
      (await toolOk<Invoice>(t(), token.full, "get_invoice", { number: draft.number })).status,
      "draft",
      "nothing issued without confirm",
    );
    // A draft says what its month will bill (the sample's 1000 minimum); an issued invoice has billed it.
    assert.equal(draft.projected?.total, 1000);
    assert.equal(
      (await toolOk<Invoice>(t(), token.read, "get_invoice", { number: draft.number })).projected?.total,
      1000,
    );
    await toolError(t(), token.other, "finalize_invoice", { number: draft.number, confirm: true }, "not_found");
    const issued = await toolOk<Invoice>(t(), token.full, "finalize_invoice", { number: draft.number, confirm: true });
    assert.equal(issued.status, "issued");
    assert.equal(issued.projected, null);
    assert.deepEqual(
      (await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: own.id, status: "issued" })).data.map(
        (i) => i.number,
      ),
      [draft.number],
    );
    assert.deepEqual(
      (await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: own.id, status: "draft" })).data,
      [],
    );

    const links = await toolOk<{ pdf_url: string; usage_statement_url: string; status: string }>(
      t(),
      token.read,
      "get_invoice_documents",
      { number: draft.number },
    );
    assert.equal(links.status, "issued");
    assert.equal(links.pdf_url, `http://localhost:8080/v1/billing/invoices/${draft.number}/pdf`);
    assert.equal(links.usage_statement_url, `http://localhost:8080/v1/billing/invoices/${draft.number}/usage.csv`);
    // The links work with an API key of the company.
    for (const url of [links.pdf_url, links.usage_statement_url]) {
      const res = await t().call({ method: "GET", url: new URL(url).pathname, key: a.key });
      assert.equal(res.statusCode, 200, url);
    }
    await toolError(t(), token.other, "get_invoice_documents", { number: draft.number }, "not_found");
    await toolError(t(), token.full, "get_invoice_documents", { number: "INV-999999" }, "not_found");
    for (const bad of [{}, { number: "" }, { number: "x".repeat(65) }, { number: draft.number, extra: 1 }]) {
      assert.match(await invalidParams(t(), token.full, "get_invoice_documents", bad), /number|extra/);
      assert.match(await invalidParams(t(), token.full, "finalize_invoice", { ...bad, confirm: true }), /number|extra/);
    }
    // open: issued and not paid; overdue: open and due before today. Each invoice names its customer.
    const open = await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: own.id, status: "open" });
    assert.deepEqual(
      open.data.map((i) => [i.number, i.customer, i.customer_name]),
      [[draft.number, customer.id, "Finalize Ltd"]],
    );
    assert.equal(
      (await toolOk<Invoice>(t(), token.full, "get_invoice", { number: draft.number })).customer_name,
      "Finalize Ltd",
    );
    assert.deepEqual(
      (await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: own.id, status: "overdue" })).data,
      [],
      "issued today (Net 30): not overdue",
    );
    assert.match(await invalidParams(t(), token.full, "list_invoices", { status: "unpaid" }), /status/);
    // The receivables report: this issued invoice, current, under its customer; nothing of company A for B.
    const report = await toolOk<{
      object: string;
      data: { customer: string; customer_name: string; current: number; total: number }[];
    }>(t(), token.read, "get_receivables", {});
    assert.equal(report.object, "receivables_report");
    const row = report.data.find((r) => r.customer === customer.id)!;
    assert.equal(row.customer_name, "Finalize Ltd");
    assert.equal(row.current, row.total);
    assert.deepEqual((await toolOk<{ data: unknown[] }>(t(), token.other, "get_receivables", {})).data, []);
    assert.match(await invalidParams(t(), token.full, "get_receivables", { currency: "usd" }), /currency/);

    // Voided through the API, it cannot be finalized again: the API's 409 code.
    assert.equal(
      (await t().call({ method: "POST", url: `/v1/billing/invoices/${draft.number}/void`, key: a.key })).statusCode,
      200,
    );
    await toolError(t(), token.full, "finalize_invoice", { number: draft.number, confirm: true }, "invoice_is_void");
  });

  it("answers tools/call without an initialize first (stateless) and lists every tool with its scope", async () => {
    const res = await mcpRequest(t(), token.read, "tools/list");
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers["content-type"]), /application\/json/);
    const tools = (
      res.json() as {
        result: {
          tools: { name: string; description: string; inputSchema: object; annotations?: { readOnlyHint?: boolean } }[];
        };
      }
    ).result.tools;
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [...READ_TOOLS, ...WRITE_TOOLS].sort());
    for (const tool of tools) {
      const read = (READ_TOOLS as readonly string[]).includes(tool.name);
      assert.ok(tool.description.includes(read ? "read:invoices" : "write:invoices"), tool.name);
      assert.equal(tool.annotations?.readOnlyHint, read, tool.name);
      assert.equal(
        (tool.inputSchema as { additionalProperties?: unknown }).additionalProperties,
        false,
        `${tool.name}: arguments are strict, like the API's bodies`,
      );
    }
  });

  it("refuses every write tool to a read:invoices token with insufficient_scope, and changes nothing", async () => {
    const customersBefore = await toolOk<List<unknown>>(t(), token.full, "list_customers");
    const versionBefore = (await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id }))
      .version;
    for (const name of WRITE_TOOLS) {
      const error = await toolError(t(), token.read, name, args()[name], "insufficient_scope");
      assert.ok(error.error.includes("write:invoices"), error.error);
    }
    assert.equal(
      (await toolOk<List<unknown>>(t(), token.full, "list_customers")).data.length,
      customersBefore.data.length,
    );
    assert.equal(
      (await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id })).version,
      versionBefore,
    );
  });

  it("lets a read:invoices token use every read tool", async () => {
    for (const name of READ_TOOLS) await toolOk(t(), token.read, name, args()[name]);
  });

  it("refuses every read tool to a write:invoices-only token with insufficient_scope", async () => {
    for (const name of READ_TOOLS) {
      const error = await toolError(t(), token.write, name, args()[name], "insufficient_scope");
      assert.ok(error.error.includes("read:invoices"), error.error);
    }
    const created = await toolOk<{ object: string; name: string }>(t(), token.write, "create_customer", {
      name: "Write Only Inc",
    });
    assert.equal(created.object, "customer");
  });

  it("lists and gets the company's contracts and pricing", async () => {
    const list = await toolOk<List<Contract>>(t(), token.full, "list_contracts");
    assert.equal(list.object, "list");
    assert.ok(list.data.some((c) => c.id === contract.id));
    assert.equal(
      (await toolOk<List<Contract>>(t(), token.full, "list_contracts", { status: "active" })).data.length,
      list.data.length,
    );
    assert.equal(
      (await toolOk<List<Contract>>(t(), token.full, "list_contracts", { status: "cancelled" })).data.length,
      0,
    );
    const got = await toolOk<Contract>(t(), token.full, "get_contract", { contract_id: contract.id });
    assert.equal(got.object, "contract");
    assert.equal(got.id, contract.id);
    assert.equal(got.customer_name, "Acme Corp");
    const program = await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id });
    assert.equal(program.object, "pricing_program");
    assert.equal(program.contract, contract.id);
    assert.ok(program.rules.some((r) => r.metric === "domestic_wire" && r.amount === "20.00"));
  });

  it("creates and lists customers, creates a sample contract, adds and updates a pricing rule", async () => {
    const customer = await toolOk<{ object: string; id: string; external_id: string }>(
      t(),
      token.full,
      "create_customer",
      {
        name: "Globex",
        external_id: "globex-1",
        email: "billing@globex.example",
      },
    );
    assert.equal(customer.object, "customer");
    assert.equal(customer.external_id, "globex-1");
    const byExternalId = await toolOk<List<{ id: string }>>(t(), token.full, "list_customers", {
      external_id: "globex-1",
    });
    assert.deepEqual(
      byExternalId.data.map((c) => c.id),
      [customer.id],
    );
    const page = await toolOk<List<{ id: string }>>(t(), token.full, "list_customers", { limit: 1 });
    assert.equal(page.data.length, 1);
    assert.equal(page.has_more, true);

    const sample = await toolOk<Contract>(t(), token.full, "create_sample_contract", { customer_id: customer.id });
    assert.equal(sample.object, "contract");
    assert.equal(sample.customer_id, customer.id);
    assert.equal(sample.sample, true);
    assert.equal(sample.status, "active");

    const added = await toolOk<{ object: string; version: number; rule: Rule }>(t(), token.full, "add_pricing_rule", {
      contract_id: sample.id,
      rule: { id: "card-fee", metric: "card_volume", model: "percentage", rate: 0.029 },
    });
    assert.equal(added.object, "pricing_rule");
    assert.equal(added.version, 2);
    assert.equal(added.rule.id, "card-fee");
    assert.equal(added.rule.rate, 0.029);
    const updated = await toolOk<{ version: number; rule: Rule }>(t(), token.full, "update_pricing_rule", {
      contract_id: sample.id,
      rule_id: "card-fee",
      fields: { rate: "0.03", name: "Card fee" },
    });
    assert.equal(updated.version, 3);
    assert.equal(updated.rule.rate, 0.03);
    assert.equal(updated.rule.name, "Card fee");
    const program = await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: sample.id });
    assert.equal(program.version, 3);
    assert.ok(program.rules.some((r) => r.id === "card-fee" && r.rate === 0.03));
  });

  it("adds a graduated rule with its tiers, and refuses a rate above 1 meant as a percentage", async () => {
    const customer = await toolOk<{ id: string }>(t(), token.full, "create_customer", { name: "Tiered Co" });
    const sample = await toolOk<Contract>(t(), token.full, "create_sample_contract", { customer_id: customer.id });
    const added = await toolOk<{ rule: Rule }>(t(), token.full, "add_pricing_rule", {
      contract_id: sample.id,
      rule: {
        metric: "api_calls",
        model: "graduated",
        tiers: [
          { up_to: 1000, unit_amount: "0.10" },
          { up_to: null, unit_amount: "0.08", flat_amount: 5 },
        ],
      },
    });
    assert.deepEqual(
      added.rule.tiers?.map((tier) => [tier.up_to, tier.unit_amount, tier.flat_amount]),
      [
        [1000, "0.10", null],
        [null, "0.08", "5.00"],
      ],
    );
    const refused = await toolError(
      t(),
      token.full,
      "add_pricing_rule",
      { contract_id: sample.id, rule: { metric: "card_volume", rate: 2.35 } },
      "invalid_pricing_rule",
    );
    assert.match(refused.error, /rate/);
  });

  it("submits, lists and gets usage events; lists and gets invoices; projects an invoice", async () => {
    const id = newEventId();
    const submitted = await toolOk<SubmitResult>(t(), token.full, "submit_usage", {
      events: [
        usageEvent(contract.id, { event_id: id, metric: "international_wire", quantity: 3 }),
        usageEvent(contract.id, { metric: "no_such_metric" }),
      ],
    });
    assert.equal(submitted.accepted, 1);
    assert.equal(submitted.rejected, 1);
    assert.equal(submitted.events[0]!.event_id, id);
    assert.equal(submitted.events[1]!.status, "rejected");

    const event = await toolOk<UsageEvent>(t(), token.full, "get_usage_event", { event_id: id });
    assert.equal(event.object, "usage_event");
    assert.equal(event.contract, contract.id);
    assert.equal(event.rated_amount, 90);
    const events = await toolOk<List<UsageEvent>>(t(), token.full, "list_usage_events", {
      contract: contract.id,
      metric: "international_wire",
    });
    assert.deepEqual(
      events.data.map((e) => e.id),
      [id],
    );
    assert.equal(
      (await toolOk<List<UsageEvent>>(t(), token.full, "list_usage_events", { from: "2026-04-01" })).data.length,
      0,
    );

    const invoices = await toolOk<List<Invoice>>(t(), token.full, "list_invoices", { contract: contract.id });
    assert.ok(invoices.data.some((i) => i.number === event.invoice_number));
    const invoice = await toolOk<Invoice>(t(), token.full, "get_invoice", { number: event.invoice_number });
    assert.equal(invoice.object, "invoice");
    assert.equal(invoice.contract, contract.id);
    assert.equal(invoice.status, "draft");
    assert.ok(invoice.line_items?.some((line) => line.metric === "international_wire" && line.amount === 90));

    const projected = await toolOk<{
      object: string;
      number: string;
      contract: string;
      billing_period: { start: string; end: string };
    }>(t(), token.full, "project_invoice", {
      external_contract_id: contract.id,
      billing_period_start: "2026-04-01",
      billing_period_end: "2026-04-30",
    });
    assert.equal(projected.object, "invoice");
    assert.equal(projected.contract, contract.id);
    assert.deepEqual(projected.billing_period, { start: "2026-04-01", end: "2026-04-30" });
    const april = await toolOk<List<Invoice>>(t(), token.full, "list_invoices", {
      contract: contract.id,
      from: "2026-04-01",
    });
    assert.ok(april.data.some((i) => i.number === projected.number));
  });

  it("previews a pricing program against the month's usage, then voids an event", async () => {
    const event = usageEvent(contract.id, { quantity: 4 });
    await toolOk<SubmitResult>(t(), token.full, "submit_usage", { events: [event] });
    const rules = (await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id })).rules;
    const program = rules.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)));
    const wire = program.find((r) => r.metric === "domestic_wire")!;
    wire.amount = "10.00";
    const preview = await toolOk<{
      object: string;
      actual: Invoice & { line_items: { metric: string | null; amount: number }[] };
      preview: { line_items: { metric: string | null; kind: string; amount: number }[] };
    }>(t(), token.read, "preview_pricing", {
      contract_id: contract.id,
      rules: program,
      billing_period_start: "2026-03-01",
      billing_period_end: "2026-03-31",
    });
    assert.equal(preview.object, "pricing_preview");
    const wires = (lines: { metric: string | null; kind: string; amount: number }[]) =>
      lines.find((l) => l.metric === "domestic_wire" && l.kind === "usage")!.amount;
    assert.equal(wires(preview.preview.line_items) * 2, wires(preview.actual.line_items as never));

    const voided = await toolOk<UsageEvent>(t(), token.write, "void_usage_event", {
      event_id: event.event_id as string,
      reason: "test meter",
    });
    assert.equal(voided.status, "voided");
    assert.equal(voided.void_reason, "test meter");

    const granted = await toolOk<{ object: string; id: string; balance: number }>(t(), token.write, "grant_credit", {
      contract_id: contract.id,
      amount: "15.00",
      type: "promotional",
    });
    assert.equal(granted.object, "credit_grant");
    const grants = await toolOk<List<{ id: string }>>(t(), token.read, "list_credit_grants", {
      contract_id: contract.id,
    });
    assert.ok(grants.data.some((g) => g.id === granted.id));
  });

  it("answers an unknown contract, event, invoice or rule with a not_found tool error", async () => {
    await toolError(t(), token.full, "get_contract", { contract_id: "no-such-contract" }, "not_found");
    await toolError(t(), token.full, "get_contract_pricing", { contract_id: "no-such-contract" }, "not_found");
    await toolError(t(), token.full, "get_usage_event", { event_id: "no-such-event" }, "not_found");
    await toolError(t(), token.full, "get_invoice", { number: "INV-999999" }, "not_found");
    await toolError(
      t(),
      token.full,
      "project_invoice",
      {
        external_contract_id: "no-such-contract",
        billing_period_start: "2026-03-01",
        billing_period_end: "2026-03-31",
      },
      "not_found",
    );
    await toolError(
      t(),
      token.full,
      "update_pricing_rule",
      { contract_id: contract.id, rule_id: "no-such-rule", fields: { amount: "1.00" } },
      "not_found",
    );
  });

  it("answers invalid arguments with JSON-RPC Invalid params and a sentence naming the argument, and the API's own codes otherwise", async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["get_contract", { contract_id: "" }, /^Invalid arguments for get_contract: contract_id: must not be empty$/],
      ["get_contract", {}, /^Invalid arguments for get_contract: contract_id is required$/],
      ["list_invoices", { limit: 0 }, /limit: must be at least 1/],
      ["list_usage_events", { from: "March 1st" }, /from: /],
      ["create_customer", { name: "X", unknown_field: 1 }, /unknown argument unknown_field/],
      ["submit_usage", { events: [] }, /events: must hold at least one item/],
      [
        "project_invoice",
        { billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" },
        /external_contract_id is required/,
      ],
      ["list_usage_events", { limit: "ten" }, /^Invalid arguments for list_usage_events: limit: must be a number$/],
      [
        "project_invoice",
        { external_contract_id: contract.id, billing_period_start: "March", billing_period_end: "2026-03-31" },
        /billing_period_start: /,
      ],
      ["create_customer", { name: 42 }, /name: must be a string/],
    ];
    for (const [name, args, sentence] of cases)
      assert.match(await invalidParams(t(), token.full, name, args), sentence, name);
    const rule = await mcpRequest(t(), token.full, "tools/call", {
      name: "add_pricing_rule",
      arguments: { contract_id: contract.id, rule: { metric: "m", model: "percentage" } },
    });
    const answer = rule.json() as {
      result?: { isError?: boolean; structuredContent?: { code?: string } };
      error?: { code: number; message: string };
    };
    // A rule's missing rate is the schema's refusal or the domain's, by where it is checked: either way a sentence.
    if (answer.error) assert.equal(answer.error.code, -32602, rule.body);
    else
      assert.ok(
        answer.result?.isError &&
          ["invalid_request", "invalid_pricing_rule"].includes(String(answer.result.structuredContent?.code)),
        rule.body,
      );
    await toolError(
      t(),
      token.full,
      "project_invoice",
      { external_contract_id: contract.id, billing_period_start: "2026-03-02", billing_period_end: "2026-03-31" },
      "invalid_billing_period",
    );
  });

  it("answers a malformed tools/call as Invalid params with a sentence, not an internal error with the validator's output", async () => {
    const malformed: Array<[string, unknown, RegExp]> = [
      ["arguments as a string", { name: "list_contracts", arguments: "x" }, /arguments must be an object/],
      ["arguments as an array", { name: "list_contracts", arguments: [1] }, /arguments must be an object/],
      ["no name", { arguments: {} }, /name is required/],
      ["a number for a name", { name: 5, arguments: {} }, /name is required/],
      ["an unknown tool", { name: "drop_database", arguments: {} }, /Unknown tool: drop_database/],
    ];
    for (const [what, params, sentence] of malformed)
      assert.match(await invalidParams(t(), token.full, "tools/call", undefined, params), sentence, what);
  });

  it("answers a duplicate customer external_id with customer_exists", async () => {
    await toolOk(t(), token.full, "create_customer", { name: "Initech", external_id: "initech" });
    const error = await toolError(
      t(),
      token.full,
      "create_customer",
      { name: "Initech again", external_id: "initech" },
      "customer_exists",
    );
    assert.match(error.error, /initech/);
  });

  it("answers a server fault as a JSON-RPC internal error that says nothing of it, and logs it with its stack", async () => {
    const { services, logger } = t().app;
    const list = services.customers.list;
    const logError = logger.error;
    const logged: unknown[][] = [];
    // A real database error, with PostgreSQL's own message naming a column and the statement.
    services.customers.list = async () => {
      await t().app.db.query("SELECT secret_column FROM customers WHERE company_id = $1", ["x"]);
      throw new Error("unreachable");
    };
    logger.error = ((...args: unknown[]) => void logged.push(args)) as typeof logger.error;
    try {
      const res = await mcpRequest(t(), token.full, "tools/call", { name: "list_customers", arguments: {} });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
      assert.deepEqual(body.error, { code: -32603, message: "Internal error" }, res.body);
      assert.doesNotMatch(res.body, /secret_column|SELECT|customers|does not exist/);
    } finally {
      services.customers.list = list;
      logger.error = logError;
    }
    const [entry] = logged;
    const err = (entry?.[0] as { err?: Error } | undefined)?.err;
    assert.ok(
      err instanceof Error && /secret_column/.test(err.message) && typeof err.stack === "string",
      `logged with its stack: ${JSON.stringify(logged)}`,
    );
    // The tool works again once the fault is gone.
    await toolOk(t(), token.full, "list_customers");
  });

  it("never shows company B's token company A's contracts, customers, usage or invoices", async () => {
    for (const name of ["list_contracts", "list_usage_events", "list_invoices", "list_customers"] as const) {
      const list = await toolOk<List<unknown>>(t(), token.other, name);
      assert.deepEqual(list.data, [], name);
    }
    await toolError(t(), token.other, "get_contract", { contract_id: contract.id }, "not_found");
    await toolError(t(), token.other, "get_contract_pricing", { contract_id: contract.id }, "not_found");
    await toolError(t(), token.other, "get_usage_event", { event_id: eventId }, "not_found");
    await toolError(t(), token.other, "get_invoice", { number: invoiceNumber }, "not_found");
    await toolError(t(), token.other, "preview_pricing", args().preview_pricing, "not_found");
    await toolError(t(), token.other, "list_credit_grants", args().list_credit_grants, "not_found");
    assert.deepEqual(
      (await toolOk<List<unknown>>(t(), token.other, "list_usage_events", { contract: contract.id })).data,
      [],
    );
    assert.deepEqual(
      (await toolOk<List<unknown>>(t(), token.other, "list_invoices", { contract: contract.id })).data,
      [],
    );
    assert.deepEqual(
      (await toolOk<List<unknown>>(t(), token.other, "list_customers", { external_id: "globex-1" })).data,
      [],
    );
  });

  it("never lets company B's token change company A's contracts, pricing or invoices", async () => {
    const versionBefore = (await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id }))
      .version;
    const invoiceBefore = await toolOk<Invoice>(t(), token.full, "get_invoice", { number: invoiceNumber });
    await toolError(t(), token.other, "create_sample_contract", { customer_id: contract.customer_id }, "not_found");
    await toolError(t(), token.other, "add_pricing_rule", args().add_pricing_rule, "not_found");
    const rules = (await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id })).rules;
    await toolError(
      t(),
      token.other,
      "update_pricing_rule",
      { contract_id: contract.id, rule_id: rules[0]!.id, fields: { amount: "0.01" } },
      "not_found",
    );
    await toolError(t(), token.other, "project_invoice", args().project_invoice, "not_found");
    const foreignId = newEventId();
    const submitted = await toolOk<SubmitResult>(t(), token.other, "submit_usage", {
      events: [usageEvent(contract.id, { event_id: foreignId, timestamp: MARCH })],
    });
    assert.equal(submitted.accepted, 0);
    assert.equal(submitted.events[0]!.error?.code, "contract_not_found");
    await toolError(t(), token.full, "get_usage_event", { event_id: foreignId }, "not_found");
    await toolError(t(), token.other, "void_usage_event", { event_id: eventId }, "not_found");
    await toolError(t(), token.other, "grant_credit", args().grant_credit, "not_found");
    assert.equal((await toolOk<UsageEvent>(t(), token.full, "get_usage_event", { event_id: eventId })).status, "rated");
    assert.equal(
      (await toolOk<Program>(t(), token.full, "get_contract_pricing", { contract_id: contract.id })).version,
      versionBefore,
    );
    assert.deepEqual(await toolOk<Invoice>(t(), token.full, "get_invoice", { number: invoiceNumber }), invoiceBefore);
    assert.equal((await toolOk<List<Contract>>(t(), token.other, "list_contracts")).data.length, 0);
  });
});
