/**
 * The API client of the suites: the public HTTP API through fastify.inject (`t.call`), as a client would call
 * it (customers, contracts, pricing, usage, invoices, webhook endpoints), except where a test needs a state
 * the API cannot make (a cancelled contract, a key with given scopes) or must look at storage (event counts).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import Big from "big.js";
import { ALL_SCOPES } from "../../src/domain/kernel/actor.js";
import { laneOf } from "../../src/domain/usage/batch-writer.js";
import { assertDecimal, expectStatus } from "./assertions.js";
import type { TestApp } from "./harness.js";
import type { components } from "../../src/client/api-schema.js";
import type { Decimal } from "../../src/client/decimal.js";

/** The API key scopes (docs/api.md, "Scopes per endpoint"), as the service knows them. */
export const ALL_SCOPE_NAMES = ALL_SCOPES;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The customers a key sees (first page of 100). */
export async function listCustomers(
  t: TestApp,
  key: string,
  query = "",
): Promise<{ id: string; name: string; external_id: string | null }[]> {
  const res = await t.call({ method: "GET", url: `/v1/billing/customers?limit=100${query ? `&${query}` : ""}`, key });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** How many rows the `events` table holds for a company. */
export async function eventCount(t: TestApp, companyId: string): Promise<number> {
  const { rows } = await t.app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE company_id = $1", [
    companyId,
  ]);
  return rows[0]!.n;
}

// Billing: contracts, pricing, usage, invoices.

const CUSTOMERS = "/v1/billing/customers";
export const CONTRACTS = "/v1/billing/contracts";
export const USAGE = "/v1/billing/usage";
export const INVOICES = "/v1/billing/invoices";
export const PROJECT = "/v1/billing/invoices/project";

/** Inside the sample term: the harness clock starts at 2026-03-15T12:00:00Z, the sample's start date. */
export const MARCH = "2026-03-20T10:00:00.000Z";
export const APRIL = "2026-04-10T10:00:00.000Z";

// The API's shapes as the OpenAPI document states them (the generated client's types): a test reads an
// answer as a client would, and a field the document drops or retypes breaks the tests that read it.
// res.json() reads with JSON.parse, so a decimal arrives as the nearest double, where the client hands over a
// Decimal (its exact text): the shapes here say `number` for them, and exact checks read res.body.
type AsParsed<T> = T extends Decimal
  ? number
  : T extends readonly (infer U)[]
    ? AsParsed<U>[]
    : T extends object
      ? { [K in keyof T]: AsParsed<T[K]> }
      : T;
type Schemas = { [K in keyof components["schemas"]]: AsParsed<components["schemas"][K]> };
export type Contract = Schemas["Contract"];
export type Rule = Schemas["PricingRule"];
export type UsageEvent = Schemas["UsageEvent"];
export type LineItem = Schemas["InvoiceLineItem"];
export type Invoice = Schemas["InvoiceSummary"] & { line_items?: LineItem[] };
export type SubmitResult = Schemas["SubmitUsageResult"];

/** An event id no other test uses. */
export function newEventId(prefix = "evt"): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/** A usage event for `contractId`: one domestic wire in March unless overridden. */
export function usageEvent(contractId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    external_contract_id: contractId,
    event_id: newEventId(),
    metric: "domestic_wire",
    quantity: 1,
    timestamp: MARCH,
    ...overrides,
  };
}

/**
 * POST /v1/billing/customers, asserting 201; returns the customer. The payload is sent as given, with a
 * name when it has none.
 */
export async function createCustomer(
  t: TestApp,
  key: string,
  payload: Record<string, unknown> = {},
): Promise<{ id: string; name: string; [field: string]: any }> {
  const res = await t.call({ method: "POST", url: CUSTOMERS, key, payload: { name: "Webhook Customer", ...payload } });
  expectStatus(res, 201);
  return res.json();
}

export async function createSampleContract(t: TestApp, key: string, customerId: string): Promise<Contract> {
  const res = await t.call({ method: "POST", url: CONTRACTS, key, payload: { customer_id: customerId } });
  expectStatus(res, 201);
  return res.json();
}

/** A new company with a full-access key, a customer and an active sample contract. */
export async function companyWithContract(
  t: TestApp,
  customerName = `Customer ${randomBytes(3).toString("hex")}`,
): Promise<{ key: string; companyId: string; customer: { id: string; name: string }; contract: Contract }> {
  const { key, companyId } = await t.newCompany();
  const customer = await createCustomer(t, key, { name: customerName });
  const contract = await createSampleContract(t, key, customer.id);
  return { key, companyId, customer, contract };
}

/** Another sample contract in the same company. */
export async function anotherContract(t: TestApp, key: string): Promise<Contract> {
  const customer = await createCustomer(t, key, { name: `Customer ${randomBytes(3).toString("hex")}` });
  return createSampleContract(t, key, customer.id);
}

export async function submit(t: TestApp, key: string, events: unknown[]): Promise<SubmitResult> {
  const res = await t.call({ method: "POST", url: USAGE, key, payload: { events } });
  expectStatus(res, 200);
  const body = res.json() as SubmitResult;
  assert.equal(body.events.length, events.length, "one answer per event, in order");
  return body;
}

/** Sends every batch at once; every request must answer 200. */
export async function submitInParallel(t: TestApp, key: string, batches: unknown[][]): Promise<SubmitResult[]> {
  const responses = await Promise.all(
    batches.map((events) => t.call({ method: "POST", url: USAGE, key, payload: { events } })),
  );
  return responses.map((res) => {
    expectStatus(res, 200);
    return res.json() as SubmitResult;
  });
}

/** Submits events that must all be accepted. */
export async function submitAccepted(t: TestApp, key: string, events: unknown[]): Promise<SubmitResult> {
  const body = await submit(t, key, events);
  assert.equal(body.rejected, 0, `all accepted: ${JSON.stringify(body.events.filter((e) => e.status !== "accepted"))}`);
  return body;
}

/** The one rejection of a single-event submit; asserts its code. */
export async function rejectionOf(
  t: TestApp,
  key: string,
  event: unknown,
  code: string,
): Promise<{ code: string; message: string }> {
  const body = await submit(t, key, [event]);
  assert.equal(body.accepted, 0, JSON.stringify(body));
  assert.equal(body.rejected, 1);
  const entry = body.events[0]!;
  assert.equal(entry.status, "rejected");
  assert.equal(entry.error?.code, code, JSON.stringify(entry));
  assert.equal(typeof entry.error?.message, "string");
  assert.ok(entry.error!.message.length > 0);
  return entry.error!;
}

export async function getEvent(t: TestApp, key: string, eventId: string): Promise<UsageEvent> {
  const res = await t.call({ method: "GET", url: `${USAGE}/${encodeURIComponent(eventId)}`, key });
  expectStatus(res, 200);
  return res.json();
}

/** Every usage event of a contract (all pages, newest first). */
export async function eventsOf(t: TestApp, key: string, contractId: string, query = ""): Promise<UsageEvent[]> {
  const events: UsageEvent[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const params = new URLSearchParams({ contract: contractId, limit: "100" });
    if (cursor) params.set("starting_after", cursor);
    const res = await t.call({ method: "GET", url: `${USAGE}?${params}${query ? `&${query}` : ""}`, key });
    expectStatus(res, 200);
    const body = res.json();
    events.push(...body.data);
    if (!body.has_more) return events;
    cursor = body.data.at(-1).id;
  }
  throw new Error("usage pagination never ended");
}

export async function getInvoice(
  t: TestApp,
  key: string,
  number: string,
): Promise<Invoice & { line_items: LineItem[] }> {
  const res = await t.call({ method: "GET", url: `${INVOICES}/${encodeURIComponent(number)}`, key });
  expectStatus(res, 200);
  return res.json();
}

/** Invoices of a contract, newest first (first page of 100). */
export async function invoicesOf(t: TestApp, key: string, contractId: string): Promise<Invoice[]> {
  const res = await t.call({
    method: "GET",
    url: `${INVOICES}?contract=${encodeURIComponent(contractId)}&limit=100`,
    key,
  });
  expectStatus(res, 200);
  return res.json().data;
}

/** The one invoice of a contract's month, with its lines. */
export async function invoiceFor(t: TestApp, key: string, contractId: string, periodStart = "2026-03-01") {
  const found = (await invoicesOf(t, key, contractId)).filter((i) => i.billing_period.start === periodStart);
  assert.equal(found.length, 1, `one invoice for ${contractId} in the month of ${periodStart}`);
  return getInvoice(t, key, found[0]!.number);
}

export async function getPricing(
  t: TestApp,
  key: string,
  contractId: string,
): Promise<{ object: string; contract: string; version: number; effective_date: string; rules: Rule[] }> {
  const res = await t.call({ method: "GET", url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing`, key });
  expectStatus(res, 200);
  return res.json();
}

export async function addRule(
  t: TestApp,
  key: string,
  contractId: string,
  rule: Record<string, unknown>,
): Promise<{ object: string; contract: string; version: number; rule: Rule }> {
  const res = await t.call({
    method: "POST",
    url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing-rules`,
    key,
    payload: rule,
  });
  expectStatus(res, 201);
  return res.json();
}

export async function updateRule(
  t: TestApp,
  key: string,
  contractId: string,
  ruleId: string,
  fields: Record<string, unknown>,
): Promise<{ object: string; contract: string; version: number; rule: Rule }> {
  const res = await t.call({
    method: "PUT",
    url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing-rules/${encodeURIComponent(ruleId)}`,
    key,
    payload: fields,
  });
  expectStatus(res, 200);
  return res.json();
}

export async function project(t: TestApp, key: string, contractId: string, start = "2026-03-01", end = "2026-03-31") {
  const res = await t.call({
    method: "POST",
    url: PROJECT,
    key,
    payload: { external_contract_id: contractId, billing_period_start: start, billing_period_end: end },
  });
  expectStatus(res, 200);
  return res.json() as {
    object: string;
    number: string;
    contract: string;
    status: string;
    is_new: boolean;
    total: number;
    subtotal: number;
    tax: number;
    currency: string;
    billing_period: { start: string; end: string };
  };
}

/** A key of the company with only these scopes. */
export async function keyWithScopes(t: TestApp, companyId: string, scopes: string[]): Promise<string> {
  return (await t.app.services.access.createApiKey(companyId, { scopes })).key;
}

/** Sets a contract's status directly: the API has no transition for it. */
export async function setContractStatus(
  t: TestApp,
  companyId: string,
  contractId: string,
  status: string,
): Promise<void> {
  const result = await t.app.db.query("UPDATE contracts SET status = $3 WHERE company_id = $1 AND id = $2", [
    companyId,
    contractId,
    status,
  ]);
  assert.equal(result.rowCount, 1);
}

/** Exact decimal sum of JSON numbers (each read as the decimal it prints as). */
export function sum(values: readonly number[]): Big {
  return values.reduce((acc, v) => acc.plus(new Big(v)), new Big(0));
}

/** Half-even rounding to cents (docs/decisions.md, "Money"). */
const toCents = (value: Big): Big => value.round(2, Big.roundHalfEven);

/**
 * The invariants of docs/decisions.md, "Money" and "Invoices", on every invoice of a contract: totals are the sum of
 * the lines, and each usage or fee line is the half-even rounded sum of the rated amounts of its events.
 * Returns the invoices checked, with lines.
 */
export async function assertInvoicesMatchEvents(t: TestApp, key: string, contractId: string) {
  const events = await eventsOf(t, key, contractId);
  const invoices = await invoicesOf(t, key, contractId);
  const checked = [];
  for (const summary of invoices) {
    const invoice = await getInvoice(t, key, summary.number);
    const lines = invoice.line_items;
    assertDecimal(
      invoice.subtotal,
      sum(lines.map((l) => l.amount)),
      `${invoice.number} subtotal is the sum of its lines`,
    );
    assertDecimal(
      invoice.total,
      new Big(invoice.subtotal).plus(invoice.tax),
      `${invoice.number} total = subtotal + tax`,
    );
    assertDecimal(invoice.tax, 0, "tax is 0 until a tax rule exists");
    const mine = events.filter((e) => e.invoice_number === invoice.number && e.status !== "voided");
    for (const e of mine) {
      assert.equal(e.service_period_start, invoice.billing_period.start, `event ${e.id} is in the invoice's period`);
    }
    const usageLines = lines.filter((l) => l.kind === "usage" || l.kind === "fee");
    const covered = new Set<string>();
    for (const line of usageLines) {
      const ofLine = mine.filter((e) =>
        line.kind === "fee"
          ? e.fee_amount !== undefined && e.metric === line.metric
          : e.fee_amount === undefined &&
            e.rule_id === line.rule_id &&
            // A graduated, volume or package rule's events carry no rate: its one line has them all.
            (e.applied_rate === null || new Big(e.applied_rate).eq(new Big(line.unit_price))),
      );
      for (const e of ofLine) covered.add(e.id);
      assert.ok(ofLine.length > 0, `line '${line.description}' of ${invoice.number} has events`);
      assertDecimal(line.amount, toCents(sum(ofLine.map((e) => e.rated_amount))), `line '${line.description}' amount`);
      assertDecimal(line.quantity, sum(ofLine.map((e) => e.quantity)), `line '${line.description}' quantity`);
      if (line.kind === "fee" && line.quantity !== 0) {
        const expected = new Big(line.amount).div(new Big(line.quantity)).round(12, Big.roundHalfEven);
        assertDecimal(line.unit_price, expected, `fees line '${line.description}' unit_price = amount / quantity`);
      }
    }
    assert.equal(covered.size, mine.length, `every event of ${invoice.number} is on exactly one of its lines`);
    checked.push(invoice);
  }
  const billed = new Set(invoices.map((i) => i.number));
  for (const e of events) assert.ok(billed.has(e.invoice_number), `event ${e.id} names an invoice of its contract`);
  return checked;
}

/** What billing verify finds wrong with a company's stored data (nothing: `[]`). */
export const verifyProblems = async (t: TestApp, companyId: string): Promise<string[]> =>
  (await t.app.services.invariants.verify(companyId)).problems;

/** The line of an invoice with this description (exactly one). */
/** The words of a USD invoice's minimum true-up line: the commitment and what counted toward it ("1,000.00"). */
export const minimumWords = (committed: string, counted: string): string =>
  `Monthly minimum: $${committed} committed, $${counted} counted`;

export function lineNamed(invoice: { line_items: LineItem[] }, description: string): LineItem {
  const found = invoice.line_items.filter((l) => l.description === description);
  assert.equal(
    found.length,
    1,
    `one line '${description}' in ${JSON.stringify(invoice.line_items.map((l) => l.description))}`,
  );
  return found[0]!;
}

/** The path of an absolute URL the service printed (fastify.inject takes paths). */
export const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** A company with a contract in each of two lanes of `lanes` (a hash of the contract id picks the lane). */
export async function contractsInBothLanes(
  t: TestApp,
  lanes: number,
): Promise<{ key: string; companyId: string; byLane: [Contract, Contract] }> {
  const { key, companyId, contract } = await companyWithContract(t);
  const byLane: (Contract | undefined)[] = [undefined, undefined];
  byLane[laneOf(contract.id, lanes)] = contract;
  for (let guard = 0; guard < 40 && (!byLane[0] || !byLane[1]); guard++) {
    const next = await anotherContract(t, key);
    byLane[laneOf(next.id, lanes)] ??= next;
  }
  assert.ok(byLane[0] && byLane[1], "contracts in both lanes");
  return { key, companyId, byLane: byLane as [Contract, Contract] };
}

// Webhook endpoints and their deliveries.

export const ENDPOINTS = "/v1/webhook-endpoints";

export type EndpointBody = Schemas["WebhookEndpoint"];
/** A delivery, its payload loosened for tests that read into it. */
export type DeliveryBody = Omit<Schemas["WebhookDelivery"], "payload"> & { payload: Record<string, any> };

/** POST /v1/webhook-endpoints, asserting 201; the answer includes the secret. */
export async function createEndpoint(
  t: TestApp,
  key: string,
  payload: Record<string, unknown>,
): Promise<EndpointBody & { secret: string }> {
  const res = await t.call({ method: "POST", url: ENDPOINTS, key, payload });
  expectStatus(res, 201);
  const body = res.json();
  assert.equal(typeof body.secret, "string");
  return body;
}

export async function patchEndpoint(
  t: TestApp,
  key: string,
  id: string,
  payload: Record<string, unknown>,
): Promise<EndpointBody> {
  const res = await t.call({ method: "PATCH", url: `${ENDPOINTS}/${id}`, key, payload });
  expectStatus(res, 200);
  return res.json();
}

export async function rotateSecret(t: TestApp, key: string, id: string): Promise<string> {
  const res = await t.call({ method: "POST", url: `${ENDPOINTS}/${id}/rotate-secret`, key });
  expectStatus(res, 200);
  const secret = res.json().secret;
  assert.equal(typeof secret, "string");
  return secret;
}

/** GET /v1/webhook-endpoints/{id}/deliveries, asserting 200 and the list envelope. */
export async function listDeliveries(t: TestApp, key: string, endpointId: string): Promise<DeliveryBody[]> {
  const res = await t.call({ method: "GET", url: `${ENDPOINTS}/${endpointId}/deliveries`, key });
  expectStatus(res, 200);
  const body = res.json();
  assert.equal(body.object, "list");
  assert.equal(body.total_count, body.data.length);
  return body.data;
}

export async function resend(t: TestApp, key: string, deliveryId: string): Promise<DeliveryBody> {
  const res = await t.call({ method: "POST", url: `${ENDPOINTS}/deliveries/${deliveryId}/resend`, key });
  expectStatus(res, 200);
  return res.json();
}

/** The delivery of an endpoint whose payload announces the resource with this id. */
export async function deliveryAbout(
  t: TestApp,
  key: string,
  endpointId: string,
  resourceId: string,
): Promise<DeliveryBody> {
  const found = (await listDeliveries(t, key, endpointId)).filter((d) => d.payload.data?.object?.id === resourceId);
  assert.equal(found.length, 1, `one delivery about ${resourceId} to ${endpointId}`);
  return found[0]!;
}
