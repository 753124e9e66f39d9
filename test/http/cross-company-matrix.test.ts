/**
 * The cross-company matrix (docs/architecture.md, "Tenancy"): for every operation of the OpenAPI document as
 * served that takes the id of a company-owned resource (a path parameter, or a body or query field that names
 * another resource), company B, with its own full-scope key, sends company A's ids. Each answer must be the
 * answer to an id that does not exist at all (404 `not_found` where the operation documents it; an empty list,
 * an `invalid_cursor`, an event rejected inside the 200 where that is what an unknown id gets), and A's data
 * must not change: A's resources as A's own calls read them, and every row the database holds for A (its
 * webhook events and deliveries included), before and after each operation; A's webhook receiver gets nothing.
 *
 * The matrix is driven by the document: an operation the table below does not know fails, as does one listed
 * as taking no ids while it has path parameters. Each case is filled once with A's ids and once with ids that
 * exist nowhere, and the two answers are compared, the ids themselves aside.
 */
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { after, before, it } from "node:test";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import {
  CONTRACTS,
  ENDPOINTS,
  INVOICES,
  MARCH,
  USAGE,
  createCustomer,
  createEndpoint,
  createSampleContract,
  getPricing,
  invoiceFor,
  listDeliveries,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { multipart, plainPdf } from "../support/uploads.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";

type Json = Record<string, any>; // the served document and A's resources, read as JSON

/** The ids of A's resources that a request may carry; the matrix fills them with A's, then with unknown ones. */
interface Ids {
  customer: string;
  customerExternalId: string;
  contract: string;
  rule: string;
  event: string;
  draftInvoice: string;
  issuedInvoice: string;
  creditNote: string;
  endpoint: string;
  delivery: string;
}

/** Ids of the same shapes that no company has. */
const UNKNOWN: Ids = {
  customer: randomUUID(),
  customerExternalId: "matrix-no-such-customer",
  contract: "matrix-no-such-contract",
  rule: "matrix_no_such_rule",
  event: "evt-matrix-no-such-event",
  draftInvoice: "INV-999998",
  issuedInvoice: "INV-999999",
  creditNote: "CN-999999",
  endpoint: randomUUID(),
  delivery: randomUUID(),
};

/** B's own resources. */
interface Own {
  contract: string;
}

/** A request to one operation: its path parameters, query, and a JSON payload or a raw body with its headers. */
interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  payload?: unknown;
  body?: Buffer;
  headers?: Record<string, string>;
}

interface Case {
  /** What A's id is, in the request. */
  what: string;
  /** The ids the request carries (the answers are compared with these replaced by their names). */
  uses: (keyof Ids)[];
  /** The request, with A's ids or unknown ones; `own` are B's resources, for a request that pairs them with A's. */
  call: (ids: Ids, own: Own) => Call | Promise<Call>;
  /**
   * `not_found`: 404 `not_found`, as for an unknown id. `as_unknown`: whatever an unknown id gets, where the
   * document answers an unknown id otherwise (a filter: an empty list; a cursor: 400 invalid_cursor; a usage
   * event: rejected inside the 200).
   */
  expect: "not_found" | "as_unknown";
}

/** How the matrix fills one operation: the cases with A's ids, or why the operation takes none. */
type Entry = { cases: Case[] } | { takesNoIds: string };

const notFound = (what: string, uses: (keyof Ids)[], call: Case["call"]): Case => ({
  what,
  uses,
  call,
  expect: "not_found",
});

const asUnknown = (what: string, uses: (keyof Ids)[], call: Case["call"]): Case => ({
  what,
  uses,
  call,
  expect: "as_unknown",
});

/** Each of A's invoices, a draft and an issued one, on an operation taking `{number}`. */
const eachInvoice = (call: (number: string) => Call): Case[] => [
  notFound("A's draft invoice", ["draftInvoice"], (ids) => call(ids.draftInvoice)),
  notFound("A's issued invoice", ["issuedInvoice"], (ids) => call(ids.issuedInvoice)),
];

/** The matrix: every operation of the served document, by operationId. */
const MATRIX: Record<string, Entry> = {
  createCustomer: { takesNoIds: "creates a customer from scratch; its external_id is the company's own namespace" },
  listCustomers: {
    cases: [
      asUnknown("external_id filter: A's customer's external id", ["customerExternalId"], (ids) => ({
        query: { external_id: ids.customerExternalId },
      })),
      asUnknown("starting_after: A's customer", ["customer"], (ids) => ({ query: { starting_after: ids.customer } })),
      asUnknown("search: A's customer's external id", ["customerExternalId"], (ids) => ({
        query: { search: ids.customerExternalId },
      })),
    ],
  },
  getCustomer: { cases: [notFound("A's customer", ["customer"], (ids) => ({ params: { id: ids.customer } }))] },
  updateCustomer: {
    cases: [
      notFound("A's customer", ["customer"], (ids) => ({
        params: { id: ids.customer },
        payload: { name: "Renamed by B" },
      })),
      notFound("A's customer, an empty change", ["customer"], (ids) => ({ params: { id: ids.customer }, payload: {} })),
    ],
  },
  getAccount: { takesNoIds: "the caller's own company's profile; no id is sent" },
  updateAccount: { takesNoIds: "the caller's own company's profile; no id is sent" },
  putAccountLogo: { takesNoIds: "the caller's own company's logo; the body is an image" },
  getAccountLogo: { takesNoIds: "the caller's own company's logo" },
  deleteAccountLogo: { takesNoIds: "the caller's own company's logo" },
  listContracts: { takesNoIds: "a list; its only filter is a status" },
  createSampleContract: {
    cases: [notFound("customer_id: A's customer", ["customer"], (ids) => ({ payload: { customer_id: ids.customer } }))],
  },
  uploadContract: {
    cases: [
      notFound("terms.customer.id: A's customer", ["customer"], async (ids) => {
        const { payload, headers } = await multipart([
          { name: "file", value: await plainPdf(), filename: "agreement.pdf" },
          {
            name: "terms",
            value: JSON.stringify({
              customer: { id: ids.customer },
              contract_id: "matrix-upload",
              start_date: "2026-01-01",
              currency: "USD",
              rules: [{ name: "Wire", type: "usage", metric: "domestic_wire", amount: "1" }],
            }),
          },
        ]);
        return { body: payload, headers };
      }),
    ],
  },
  extractContract: { takesNoIds: "reads the file it is sent; names no customer, contract or other resource" },
  getContractAgreement: {
    cases: [notFound("A's contract", ["contract"], (ids) => ({ params: { ext_id: ids.contract } }))],
  },
  getContract: { cases: [notFound("A's contract", ["contract"], (ids) => ({ params: { ext_id: ids.contract } }))] },
  getContractPricing: {
    cases: [notFound("A's contract", ["contract"], (ids) => ({ params: { ext_id: ids.contract } }))],
  },
  createCreditGrant: {
    cases: [
      notFound("A's contract", ["contract"], (ids) => ({
        params: { ext_id: ids.contract },
        payload: { amount: "10", type: "promotional" },
      })),
    ],
  },
  listCreditGrants: {
    cases: [notFound("A's contract", ["contract"], (ids) => ({ params: { ext_id: ids.contract } }))],
  },
  getCreditGrant: {
    cases: [
      notFound("A's contract and a grant id", ["contract"], (ids) => ({
        params: { ext_id: ids.contract, grant_id: "cg_0000000000000000" },
      })),
    ],
  },
  previewContractPricing: {
    cases: [
      notFound("A's contract", ["contract"], (ids) => ({
        params: { ext_id: ids.contract },
        payload: { rules: [], billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" },
      })),
    ],
  },
  addPricingRule: {
    cases: [
      notFound("A's contract", ["contract"], (ids) => ({
        params: { ext_id: ids.contract },
        payload: { name: "Matrix fee", type: "subscription", amount: "5" },
      })),
    ],
  },
  updatePricingRule: {
    cases: [
      notFound("A's contract and its rule", ["contract", "rule"], (ids) => ({
        params: { ext_id: ids.contract, rule_id: ids.rule },
        payload: { name: "Renamed by B" },
      })),
      notFound("B's own contract, A's rule", ["rule"], (ids, own) => ({
        params: { ext_id: own.contract, rule_id: ids.rule },
        payload: { name: "Renamed by B" },
      })),
    ],
  },
  submitUsage: {
    cases: [
      asUnknown("external_contract_id: A's contract", ["contract"], (ids) => ({
        payload: { events: [usageEvent(ids.contract, { event_id: "evt-matrix-1" })] },
      })),
      asUnknown("external_contract_id and event_id: A's contract and A's event", ["contract", "event"], (ids) => ({
        payload: { events: [usageEvent(ids.contract, { event_id: ids.event })] },
      })),
      // A refused event whose id is stored already answers accepted (docs/decisions.md, "Rating an event" 8): stored by A
      // is not stored. B's own contract, before its term, refuses it without storing anything in B.
      asUnknown("event_id: A's event, on B's own contract before its term", ["event"], (ids, own) => ({
        payload: { events: [usageEvent(own.contract, { event_id: ids.event, timestamp: "2026-01-10T10:00:00.000Z" })] },
      })),
    ],
  },
  listUsageEvents: {
    cases: [
      asUnknown("contract filter: A's contract", ["contract"], (ids) => ({ query: { contract: ids.contract } })),
      asUnknown("starting_after: A's event", ["event"], (ids) => ({ query: { starting_after: ids.event } })),
    ],
  },
  getUsageEvent: { cases: [notFound("A's event", ["event"], (ids) => ({ params: { event_id: ids.event } }))] },
  voidUsageEvent: {
    cases: [notFound("A's event", ["event"], (ids) => ({ params: { event_id: ids.event }, payload: { reason: "B" } }))],
  },
  listInvoices: {
    cases: [
      asUnknown("contract filter: A's contract", ["contract"], (ids) => ({ query: { contract: ids.contract } })),
      asUnknown("starting_after: A's invoice", ["issuedInvoice"], (ids) => ({
        query: { starting_after: ids.issuedInvoice },
      })),
    ],
  },
  projectInvoice: {
    cases: [
      notFound("external_contract_id: A's contract", ["contract"], (ids) => ({
        payload: {
          external_contract_id: ids.contract,
          billing_period_start: "2026-03-01",
          billing_period_end: "2026-03-31",
        },
      })),
    ],
  },
  getReceivablesReport: {
    takesNoIds: "a report over the caller's own issued invoices; its only filter is a currency code",
  },
  getInvoice: { cases: eachInvoice((number) => ({ params: { number } })) },
  getInvoicePdf: { cases: eachInvoice((number) => ({ params: { number } })) },
  getInvoiceUsageStatement: { cases: eachInvoice((number) => ({ params: { number } })) },
  finalizeInvoice: { cases: eachInvoice((number) => ({ params: { number } })) },
  payInvoice: { cases: eachInvoice((number) => ({ params: { number }, payload: { paid_date: "2026-03-15" } })) },
  voidInvoice: { cases: eachInvoice((number) => ({ params: { number } })) },
  recordInvoicePayment: {
    cases: eachInvoice((number) => ({ params: { number }, payload: { amount: "1", method: "ach" } })),
  },
  createCreditNote: { cases: eachInvoice((number) => ({ params: { number }, payload: { amount: "1", reason: "x" } })) },
  listInvoiceCreditNotes: { cases: eachInvoice((number) => ({ params: { number } })) },
  getCreditNote: {
    cases: [notFound("A's credit note", ["creditNote"], (ids) => ({ params: { number: ids.creditNote } }))],
  },
  getCreditNotePdf: {
    cases: [notFound("A's credit note", ["creditNote"], (ids) => ({ params: { number: ids.creditNote } }))],
  },
  listInvoiceMessages: { cases: eachInvoice((number) => ({ params: { number } })) },
  sendInvoice: { cases: eachInvoice((number) => ({ params: { number } })) },
  revokeInvoiceHostedLink: { cases: eachInvoice((number) => ({ params: { number } })) },
  createWebhookEndpoint: { takesNoIds: "creates an endpoint from scratch" },
  listWebhookEndpoints: { takesNoIds: "a list without filters" },
  getWebhookEndpoint: { cases: [notFound("A's endpoint", ["endpoint"], (ids) => ({ params: { id: ids.endpoint } }))] },
  updateWebhookEndpoint: {
    cases: [
      notFound("A's endpoint", ["endpoint"], (ids) => ({
        params: { id: ids.endpoint },
        payload: { description: "changed by B", enabled: false },
      })),
    ],
  },
  deleteWebhookEndpoint: {
    cases: [notFound("A's endpoint", ["endpoint"], (ids) => ({ params: { id: ids.endpoint } }))],
  },
  rotateWebhookEndpointSecret: {
    cases: [notFound("A's endpoint", ["endpoint"], (ids) => ({ params: { id: ids.endpoint } }))],
  },
  testWebhookEndpoint: {
    cases: [
      notFound("A's endpoint", ["endpoint"], (ids) => ({
        params: { id: ids.endpoint },
        payload: { type: "customer.created" },
      })),
    ],
  },
  listWebhookDeliveries: {
    cases: [notFound("A's endpoint", ["endpoint"], (ids) => ({ params: { id: ids.endpoint } }))],
  },
  resendWebhookDelivery: {
    cases: [notFound("A's delivery", ["delivery"], (ids) => ({ params: { id: ids.delivery } }))],
  },
};

interface Operation {
  id: string;
  method: string;
  path: string;
  pathParameters: string[];
}

/** The operations of the served document, in its order. */
function operationsOf(doc: Json): Operation[] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, operation]) => ({
      id: String(operation.operationId),
      method: method.toUpperCase(),
      path,
      pathParameters: ((operation.parameters ?? []) as Json[]).filter((p) => p.in === "path").map((p) => p.name),
    })),
  );
}

function requestOf(operation: Operation, call: Call, key: string): InjectOptions & { key: string } {
  const url = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = call.params?.[name];
    assert.ok(value !== undefined, `${operation.id}: the matrix fills {${name}}`);
    return encodeURIComponent(value);
  });
  const query = call.query ? `?${new URLSearchParams(call.query)}` : "";
  return {
    method: operation.method as InjectOptions["method"],
    url: `${url}${query}`,
    key,
    ...(call.payload !== undefined ? { payload: call.payload as InjectOptions["payload"] } : {}),
    ...(call.body !== undefined ? { payload: call.body } : {}),
    ...(call.headers ? { headers: call.headers } : {}),
  };
}

/** An answer as compared: status, content type and body, each id it was sent replaced by the id's name. */
function comparable(res: LightMyRequestResponse, ids: Ids, uses: (keyof Ids)[]) {
  let body = res.body;
  // Longest first, so an id that contains another is replaced whole.
  for (const name of [...uses].sort((x, y) => ids[y].length - ids[x].length)) {
    body = body.split(ids[name]).join(`{${name}}`);
    body = body.split(encodeURIComponent(ids[name])).join(`{${name}}`);
  }
  return { status: res.statusCode, contentType: res.headers["content-type"], body };
}

const digest = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

/** The tables holding company data: every table with a `company_id` column. */
async function companyTables(t: TestApp): Promise<string[]> {
  const { rows } = await t.app.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'company_id' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

/** Every row the database holds for the company, table by table, in a stable order. */
async function storedRows(t: TestApp, tables: string[], companyId: string): Promise<Record<string, string[]>> {
  const snapshot: Record<string, string[]> = {};
  const { rows: company } = await t.app.db.query<{ row: string }>(
    "SELECT row_to_json(c)::text AS row FROM companies c WHERE id = $1",
    [companyId],
  );
  snapshot.companies = company.map((r) => r.row);
  for (const table of tables) {
    const { rows } = await t.app.db.query<{ row: string }>(
      `SELECT row_to_json(r)::text AS row FROM ${table} r WHERE company_id = $1`,
      [companyId],
    );
    snapshot[table] = rows.map((r) => r.row).sort();
  }
  return snapshot;
}

/** A's resources as A's own calls read them. */
async function readAll(t: TestApp, key: string): Promise<Record<string, unknown>> {
  const get = async (url: string) => {
    const res = await t.call({ method: "GET", url, key });
    expectStatus(res, 200);
    return res;
  };
  const json = async (url: string) => (await get(url)).json();
  const seen: Record<string, unknown> = {};
  seen.customers = await json("/v1/billing/customers?limit=100");
  const contracts = await json(CONTRACTS);
  seen.contracts = contracts;
  for (const contract of contracts.data as Json[]) {
    const at = `${CONTRACTS}/${encodeURIComponent(contract.id)}`;
    seen[at] = await json(at);
    seen[`${at}/pricing`] = await json(`${at}/pricing`);
    seen[`${at}/agreement.pdf`] = digest((await get(`${at}/agreement.pdf`)).rawPayload);
  }
  const usage = await json(`${USAGE}?limit=100`);
  seen.usage = usage;
  for (const event of usage.data as Json[]) {
    const at = `${USAGE}/${encodeURIComponent(event.id)}`;
    seen[at] = await json(at);
  }
  const invoices = await json(`${INVOICES}?limit=100`);
  seen.invoices = invoices;
  for (const invoice of invoices.data as Json[]) {
    const at = `${INVOICES}/${encodeURIComponent(invoice.number)}`;
    seen[at] = await json(at);
    seen[`${at}/usage.csv`] = (await get(`${at}/usage.csv`)).body;
    seen[`${at}/messages`] = await json(`${at}/messages`);
  }
  const endpoints = await json(ENDPOINTS);
  seen.endpoints = endpoints;
  for (const endpoint of endpoints.data as Json[]) {
    const at = `${ENDPOINTS}/${endpoint.id}`;
    seen[at] = await json(at);
    seen[`${at}/deliveries`] = await json(`${at}/deliveries`);
  }
  return seen;
}

describeEachEngine(
  "company B reaches none of company A's resources by id",
  (t) => {
    let doc: Json;
    let receiver: Receiver;
    let tables: string[];
    const a = { key: "", companyId: "" };
    const b = { key: "", companyId: "" };
    let ids: Ids;
    const own: Own = { contract: "" };

    /** What A has, read by A and straight from storage. */
    const snapshot = async () => ({
      api: await readAll(t(), a.key),
      stored: await storedRows(t(), tables, a.companyId),
      received: receiver.requests.length,
    });

    before(async () => {
      const res = await t().call({ method: "GET", url: "/v1/openapi.json" });
      expectStatus(res, 200);
      doc = res.json();
      receiver = await startReceiver();
      tables = await companyTables(t());

      // A: a webhook endpoint first (so A's events have deliveries, delivered to a local receiver), two customers
      // with a sample contract each, an event on each contract, and the first contract's invoice issued.
      Object.assign(a, await t().newCompany({ name: "Company A" }));
      const endpoint = await createEndpoint(t(), a.key, {
        url: receiver.url,
        events: ["customer.created", "contract.created"],
      });
      const customer = await createCustomer(t(), a.key, { name: "Alpha Corp", external_id: "alpha-1" });
      const contract = await createSampleContract(t(), a.key, customer.id);
      const second = await createSampleContract(
        t(),
        a.key,
        (await createCustomer(t(), a.key, { name: "Alpha Two" })).id,
      );
      const event = usageEvent(contract.id, { timestamp: MARCH });
      await submitAccepted(t(), a.key, [event, usageEvent(second.id, { timestamp: MARCH })]);
      const issued = await invoiceFor(t(), a.key, contract.id);
      const draft = await invoiceFor(t(), a.key, second.id);
      expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${issued.number}/finalize`, key: a.key }), 200);
      const note = await t().call({
        method: "POST",
        url: `${INVOICES}/${issued.number}/credit-notes`,
        key: a.key,
        payload: { amount: "1", reason: "Matrix" },
      });
      expectStatus(note, 201);
      const [rule] = (await getPricing(t(), a.key, contract.id)).rules;
      await t().app.worker.drain();
      const [delivery] = await listDeliveries(t(), a.key, endpoint.id);
      assert.ok(rule && delivery && receiver.requests.length > 0, "A has a rule, and its events were delivered");
      ids = {
        customer: customer.id,
        customerExternalId: "alpha-1",
        contract: contract.id,
        rule: rule.id,
        event: String(event.event_id),
        draftInvoice: draft.number,
        issuedInvoice: issued.number,
        creditNote: note.json().number,
        endpoint: endpoint.id,
        delivery: delivery.id,
      };

      // B: a full-scope key, a customer and a contract of its own (under another name, so another contract id),
      // and no invoice: invoice numbers are counted per company, so one of B's could bear the number of A's.
      Object.assign(b, await t().newCompany({ name: "Company B" }));
      own.contract = (
        await createSampleContract(t(), b.key, (await createCustomer(t(), b.key, { name: "Beta Ltd" })).id)
      ).id;
    });

    after(async () => {
      await receiver?.close();
    });

    it("every operation of the document is in the matrix, and only those", () => {
      const operations = operationsOf(doc);
      const problems = [
        ...operations.flatMap((op) => {
          const entry = MATRIX[op.id];
          const named = `${op.id} (${op.method} ${op.path})`;
          if (!entry)
            return [
              `${named} is not in the cross-company MATRIX (test/http/cross-company-matrix.test.ts): add how its ids of company-owned resources are filled, or why it takes none`,
            ];
          if ("takesNoIds" in entry && op.pathParameters.length > 0)
            return [
              `${named} has path parameters (${op.pathParameters.join(", ")}): it cannot be listed as taking no ids`,
            ];
          if ("cases" in entry && entry.cases.length === 0) return [`${named} has no case in the matrix`];
          return [];
        }),
        ...Object.keys(MATRIX)
          .filter((id) => !operations.some((op) => op.id === id))
          .map((id) => `${id} is in the matrix but not in the document`),
      ];
      assert.deepEqual(problems, []);
    });

    it("with A's ids, B gets what an unknown id gets, and A's data does not change", async (c) => {
      for (const operation of operationsOf(doc)) {
        const entry = MATRIX[operation.id];
        if (!entry || "takesNoIds" in entry) continue;
        for (const each of entry.cases) {
          await c.test(`${operation.id} (${operation.method} ${operation.path}): ${each.what}`, async () => {
            const was = await snapshot();
            const withA = await t().call(requestOf(operation, await each.call(ids, own), b.key));
            const withUnknown = await t().call(requestOf(operation, await each.call(UNKNOWN, own), b.key));
            assert.ok(withA.statusCode < 500, `not a server error: ${withA.statusCode} ${withA.body}`);
            if (each.expect === "not_found") {
              assert.equal(withA.statusCode, 404, withA.body);
              assert.equal(withA.json().code, "not_found", withA.body);
            }
            assert.deepEqual(
              comparable(withA, ids, each.uses),
              comparable(withUnknown, UNKNOWN, each.uses),
              "the answer to A's id is the answer to an id that does not exist",
            );
            await t().app.worker.drain();
            assert.deepEqual(await snapshot(), was, "A's data is as it was");
          });
        }
      }
    });
  },
  // A's webhook endpoint is a local receiver.
  { env: { BILLING_WEBHOOK_ALLOW_PRIVATE: "true" } },
);
