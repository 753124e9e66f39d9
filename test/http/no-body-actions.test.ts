/**
 * The actions that take no body, or only optional fields, on both engines (docs/api.md, "Conventions";
 * src/surfaces/http/action-body.ts): each takes no body, an empty body sent as `application/json`, and `{}`,
 * and refuses a field it does not know with 400 `invalid_request` naming it. One table over every such route
 * of the API (the admin API's included); the last test checks that the table misses none of the document's.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  ENDPOINTS,
  INVOICES,
  USAGE,
  createCustomer,
  createEndpoint,
  createSampleContract,
  invoiceFor,
  listDeliveries,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const ADMIN_TOKEN = "no-body-actions-admin-token-0123456789abcdef";

/** How a body may be left out, and a body with an unknown field. */
const EMPTY_BODIES: Array<{ name: string; payload?: string; json: boolean }> = [
  { name: "no body at all", json: false },
  { name: "an empty application/json body", payload: "", json: true },
  { name: "{}", payload: "{}", json: true },
];

interface Action {
  method: "POST" | "DELETE";
  /** The path as the document writes it. */
  path: string;
  /** A URL to call it on, and the headers to authenticate; called once per body, so a test may make a fresh target. */
  target: (t: TestApp, world: World) => Promise<{ url: string; headers: Record<string, string> }>;
  status: number;
}

interface World {
  key: string;
  companyId: string;
  contractId: string;
  /** Issued invoices by what they are used for (finalize gets a draft). */
  invoices: Record<"finalize" | "pay" | "void" | "delivery", string>;
  endpointId: string;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const invoiceAction = (verb: string, use: keyof World["invoices"], status = 200): Action => ({
  method: "POST",
  path: `/v1/billing/invoices/{number}/${verb}`,
  target: async (_t, w) => ({ url: `${INVOICES}/${w.invoices[use]}/${verb}`, headers: bearer(w.key) }),
  status,
});

const ACTIONS: Action[] = [
  invoiceAction("finalize", "finalize"),
  invoiceAction("pay", "pay"),
  invoiceAction("void", "void"),
  invoiceAction("send", "delivery", 202),
  invoiceAction("hosted-link/revoke", "delivery"),
  {
    method: "POST",
    path: "/v1/billing/usage/{event_id}/void",
    target: async (t, w) => {
      const event = usageEvent(w.contractId, { timestamp: "2026-07-10T10:00:00Z" });
      await submitAccepted(t, w.key, [event]);
      return { url: `${USAGE}/${event.event_id}/void`, headers: bearer(w.key) };
    },
    status: 200,
  },
  {
    method: "DELETE",
    path: "/v1/billing/account/logo",
    target: async (_t, w) => ({ url: "/v1/billing/account/logo", headers: bearer(w.key) }),
    status: 200,
  },
  {
    method: "POST",
    path: "/v1/webhook-endpoints/{id}/rotate-secret",
    target: async (_t, w) => ({ url: `${ENDPOINTS}/${w.endpointId}/rotate-secret`, headers: bearer(w.key) }),
    status: 200,
  },
  {
    method: "POST",
    path: "/v1/webhook-endpoints/deliveries/{id}/resend",
    target: async (t, w) => {
      const [delivery] = await listDeliveries(t, w.key, w.endpointId);
      assert.ok(delivery, "the endpoint has a delivery");
      return { url: `${ENDPOINTS}/deliveries/${delivery.id}/resend`, headers: bearer(w.key) };
    },
    status: 200,
  },
  {
    method: "DELETE",
    path: "/v1/webhook-endpoints/{id}",
    target: async (t, w) => {
      const endpoint = await createEndpoint(t, w.key, { url: "http://127.0.0.1:9/gone", events: ["customer.created"] });
      return { url: `${ENDPOINTS}/${endpoint.id}`, headers: bearer(w.key) };
    },
    status: 200,
  },
  {
    method: "DELETE",
    path: "/admin/v1/api-keys/{id}",
    target: async (t, w) => {
      const key = await t.app.services.access.createApiKey(w.companyId, {});
      return { url: `/admin/v1/api-keys/${key.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    },
    status: 200,
  },
  {
    method: "POST",
    path: "/admin/v1/companies/{id}/api-keys",
    target: async (_t, w) => ({
      url: `/admin/v1/companies/${w.companyId}/api-keys`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    }),
    status: 201,
  },
];

/** A company with a sample contract, four months of usage, a draft for March and issued invoices for April to June. */
async function world(t: TestApp): Promise<World> {
  t.clock.set(new Date("2026-03-01T08:00:00Z"));
  const { key, companyId } = await t.newCompany();
  const endpoint = await createEndpoint(t, key, { url: "http://127.0.0.1:9/hook", events: ["customer.created"] });
  const customer = await createCustomer(t, key, { name: "No Body Ltd" });
  const contract = await createSampleContract(t, key, customer.id);
  const months = ["2026-03", "2026-04", "2026-05", "2026-06"];
  for (const month of months) {
    t.clock.set(new Date(`${month}-12T08:00:00Z`));
    await submitAccepted(t, key, [usageEvent(contract.id, { timestamp: `${month}-10T10:00:00Z` })]);
  }
  t.clock.set(new Date("2026-07-15T09:00:00Z"));
  const numbers: string[] = [];
  for (const month of months) numbers.push((await invoiceFor(t, key, contract.id, `${month}-01`)).number);
  for (const number of numbers.slice(1))
    expectStatus(await t.call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key }), 200);
  const [finalize, pay, voided, delivery] = numbers as [string, string, string, string];
  return {
    key,
    companyId,
    contractId: contract.id,
    invoices: { finalize, pay, void: voided, delivery },
    endpointId: endpoint.id,
  };
}

describeEachEngine(
  "actions without a body",
  (t) => {
    let w: World;
    it("sets up a company with invoices in every state the actions need", async () => {
      w = await world(t());
    });

    for (const action of ACTIONS) {
      it(`${action.method} ${action.path} refuses an unknown field with 400 invalid_request naming it`, async () => {
        const { url, headers } = await action.target(t(), w);
        const res = await t().call({
          method: action.method,
          url,
          headers: { ...headers, "content-type": "application/json" },
          payload: '{"unknown_field":1}',
        });
        expectError(res, 400, "invalid_request");
        assert.match(res.body, /unknown_field/);
      });
      for (const body of EMPTY_BODIES) {
        it(`${action.method} ${action.path} takes ${body.name}`, async () => {
          const { url, headers } = await action.target(t(), w);
          const res = await t().call({
            method: action.method,
            url,
            headers: { ...headers, ...(body.json ? { "content-type": "application/json" } : {}) },
            ...(body.payload === undefined ? {} : { payload: body.payload }),
          });
          expectStatus(res, action.status);
        });
      }
    }

    it("the table holds every operation of the document that takes no required body", async () => {
      const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
      const listed = new Set(ACTIONS.map((action) => `${action.method} ${action.path}`));
      const missing: string[] = [];
      for (const [path, item] of Object.entries<Record<string, { requestBody?: { required?: boolean } }>>(
        document.paths,
      )) {
        for (const [method, operation] of Object.entries(item)) {
          if (!["post", "put", "patch", "delete"].includes(method)) continue;
          if (operation.requestBody?.required) continue;
          if (!listed.has(`${method.toUpperCase()} ${path}`)) missing.push(`${method.toUpperCase()} ${path}`);
        }
      }
      assert.deepEqual(missing, []);
    });
  },
  { env: { BILLING_ADMIN_TOKEN: ADMIN_TOKEN, BILLING_WEBHOOK_ALLOW_PRIVATE: "true", BILLING_WORKER: "false" } },
);
