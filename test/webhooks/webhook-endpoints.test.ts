/**
 * The webhook-endpoint calls (docs/api.md, "Webhook endpoints"): every call's answer, its 404 and 401,
 * 403 by scope, another company's ids, and the 400s for bad inputs. Deliveries themselves are in
 * webhook-delivery.test.ts, the SSRF refusals in webhook-ssrf.test.ts.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import type { InjectOptions } from "fastify";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  UUID_RE,
  createCustomer,
  createEndpoint,
  ENDPOINTS,
  listDeliveries,
  patchEndpoint,
  type EndpointBody,
} from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { receiverPool } from "../support/webhook-receiver.js";

const UNKNOWN_ID = "3b0c8f0e-8d6e-4c1a-9a52-7c1f0e6d2a11";

/** Every webhook path, with a valid body where one is needed. */
function everyCall(endpointId: string, deliveryId: string): (InjectOptions & { method: string; url: string })[] {
  return [
    { method: "POST", url: ENDPOINTS, payload: { url: "https://8.8.8.8/hook" } },
    { method: "GET", url: ENDPOINTS },
    { method: "GET", url: `${ENDPOINTS}/${endpointId}` },
    { method: "PATCH", url: `${ENDPOINTS}/${endpointId}`, payload: { description: "changed" } },
    { method: "POST", url: `${ENDPOINTS}/${endpointId}/rotate-secret` },
    { method: "DELETE", url: `${ENDPOINTS}/${endpointId}` },
    { method: "POST", url: `${ENDPOINTS}/${endpointId}/test`, payload: { type: "customer.created" } },
    { method: "GET", url: `${ENDPOINTS}/${endpointId}/deliveries` },
    { method: "POST", url: `${ENDPOINTS}/deliveries/${deliveryId}/resend` },
  ];
}

describeEachEngine(
  "webhook endpoints",
  (t) => {
    const receivers = receiverPool();

    /** A company with one endpoint on a local receiver and one delivered test event. */
    async function companyWithDelivery(): Promise<{
      key: string;
      endpoint: EndpointBody & { secret: string };
      deliveryId: string;
    }> {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key,
        payload: { type: "customer.created" },
      });
      assert.equal(res.statusCode, 200, res.body);
      return { key, endpoint, deliveryId: res.json().id };
    }

    async function getEndpoint(t: TestApp, key: string, id: string): Promise<EndpointBody> {
      const res = await t.call({ method: "GET", url: `${ENDPOINTS}/${id}`, key });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    it("POST creates an endpoint (201) with its secret; events left out subscribe to the two original types only", async () => {
      const { key } = await t().newCompany();
      const res = await t().call({
        method: "POST",
        url: ENDPOINTS,
        key,
        payload: { url: "https://8.8.8.8/billing", description: "ERP sync" },
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.equal(body.object, "webhook_endpoint");
      assert.match(body.id, UUID_RE);
      assert.equal(body.url, "https://8.8.8.8/billing");
      assert.equal(body.description, "ERP sync");
      assert.deepEqual(body.events, ["customer.created", "contract.created"], "invoice events are opt-in");
      assert.equal(body.status, "enabled");
      assert.equal(body.created_at, t().clock.now().toISOString());
      assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    });

    it("POST keeps the events asked for, and gives each endpoint a different secret", async () => {
      const { key } = await t().newCompany();
      const a = await createEndpoint(t(), key, { url: "https://8.8.8.8/a", events: ["contract.created"] });
      const b = await createEndpoint(t(), key, { url: "https://8.8.8.8/b", events: ["customer.created"] });
      assert.deepEqual(a.events, ["contract.created"]);
      assert.deepEqual(b.events, ["customer.created"]);
      assert.notEqual(a.secret, b.secret);
    });

    it("POST and PATCH take the invoice and credit note event types, once each", async () => {
      const { key } = await t().newCompany();
      const all = [
        "customer.created",
        "contract.created",
        "invoice.issued",
        "invoice.paid",
        "invoice.voided",
        "invoice.payment_recorded",
        "credit_note.created",
      ];
      const every = await createEndpoint(t(), key, { url: "https://8.8.8.8/all", events: all });
      assert.deepEqual(every.events, all);
      const invoices = await createEndpoint(t(), key, {
        url: "https://8.8.8.8/inv",
        events: ["invoice.issued", "invoice.issued", "credit_note.created"],
      });
      assert.deepEqual(invoices.events, ["invoice.issued", "credit_note.created"], "a repeated type is kept once");
      const patched = await patchEndpoint(t(), key, invoices.id, { events: ["invoice.payment_recorded"] });
      assert.deepEqual(patched.events, ["invoice.payment_recorded"]);
    });

    it("GET lists the company's endpoints, newest first, without secrets", async () => {
      const { key } = await t().newCompany();
      const first = await createEndpoint(t(), key, { url: "https://8.8.8.8/1" });
      const second = await createEndpoint(t(), key, { url: "https://8.8.8.8/2" });
      const res = await t().call({ method: "GET", url: ENDPOINTS, key });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.object, "list");
      assert.equal(body.has_more, false);
      assert.equal(body.total_count, 2);
      assert.deepEqual(
        body.data.map((e: EndpointBody) => e.id),
        [second.id, first.id],
      );
      for (const endpoint of body.data) assert.equal("secret" in endpoint, false, "list never shows the secret");
    });

    it("GET /{id} answers the endpoint without its secret; an unknown or malformed id is 404 Not found", async () => {
      const { key } = await t().newCompany();
      const created = await createEndpoint(t(), key, { url: "https://8.8.8.8/x", events: ["customer.created"] });
      const got = await getEndpoint(t(), key, created.id);
      const { secret: _secret, ...withoutSecret } = created;
      assert.deepEqual(got, withoutSecret);
      for (const id of [UNKNOWN_ID, "not-a-uuid"]) {
        const res = await t().call({ method: "GET", url: `${ENDPOINTS}/${id}`, key });
        assert.equal(expectError(res, 404).error, "Not found");
      }
    });

    it("PATCH changes url, events and description, answers the endpoint with its secret, and GET shows the change", async () => {
      const { key } = await t().newCompany();
      const created = await createEndpoint(t(), key, { url: "https://8.8.8.8/old", description: "old" });
      const patched = await patchEndpoint(t(), key, created.id, {
        url: "https://8.8.4.4/new",
        events: ["contract.created"],
        description: "new",
      });
      assert.equal(patched.url, "https://8.8.4.4/new");
      assert.deepEqual(patched.events, ["contract.created"]);
      assert.equal(patched.description, "new");
      assert.equal(patched.status, "enabled");
      assert.equal(patched.secret, created.secret, "the update response shape carries the (unchanged) secret");
      const got = await getEndpoint(t(), key, created.id);
      assert.equal(got.url, "https://8.8.4.4/new");
      assert.deepEqual(got.events, ["contract.created"]);
      assert.equal(got.description, "new");
    });

    it("PATCH enabled false disables the endpoint and enabled true enables it again", async () => {
      const { key } = await t().newCompany();
      const created = await createEndpoint(t(), key, { url: "https://8.8.8.8/x" });
      assert.equal((await patchEndpoint(t(), key, created.id, { enabled: false })).status, "disabled");
      assert.equal((await getEndpoint(t(), key, created.id)).status, "disabled");
      assert.equal((await patchEndpoint(t(), key, created.id, { enabled: true })).status, "enabled");
      assert.equal((await getEndpoint(t(), key, created.id)).status, "enabled");
    });

    it("PATCH of an unknown endpoint is 404", async () => {
      const { key } = await t().newCompany();
      const res = await t().call({
        method: "PATCH",
        url: `${ENDPOINTS}/${UNKNOWN_ID}`,
        key,
        payload: { enabled: false },
      });
      assert.equal(expectError(res, 404).error, "Not found");
    });

    it("rotate-secret answers a new secret, different from the old one; unknown endpoint is 404", async () => {
      const { key } = await t().newCompany();
      const created = await createEndpoint(t(), key, { url: "https://8.8.8.8/x" });
      const res = await t().call({ method: "POST", url: `${ENDPOINTS}/${created.id}/rotate-secret`, key });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.object, "webhook_endpoint");
      assert.equal(body.id, created.id);
      assert.match(body.secret, /^whsec_/);
      assert.notEqual(body.secret, created.secret);
      const again = await t().call({ method: "POST", url: `${ENDPOINTS}/${created.id}/rotate-secret`, key });
      assert.notEqual(again.json().secret, body.secret);
      const unknown = await t().call({ method: "POST", url: `${ENDPOINTS}/${UNKNOWN_ID}/rotate-secret`, key });
      assert.equal(expectError(unknown, 404).error, "Not found");
    });

    it("DELETE removes the endpoint and its deliveries; a second DELETE is 404", async () => {
      const { key, endpoint, deliveryId } = await companyWithDelivery();
      const res = await t().call({ method: "DELETE", url: `${ENDPOINTS}/${endpoint.id}`, key });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { object: "webhook_endpoint", id: endpoint.id, deleted: true });
      for (const request of [
        { method: "GET" as const, url: `${ENDPOINTS}/${endpoint.id}` },
        { method: "DELETE" as const, url: `${ENDPOINTS}/${endpoint.id}` },
        { method: "GET" as const, url: `${ENDPOINTS}/${endpoint.id}/deliveries` },
        { method: "POST" as const, url: `${ENDPOINTS}/deliveries/${deliveryId}/resend` },
      ]) {
        assert.equal(
          expectError(await t().call({ ...request, key }), 404).error,
          "Not found",
          `${request.method} ${request.url}`,
        );
      }
      const list = await t().call({ method: "GET", url: ENDPOINTS, key });
      assert.deepEqual(list.json().data, []);
    });

    it("test answers {id, status, status_code, error}; the deliveries list shows it; unknown endpoint is 404", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key,
        payload: { type: "contract.created" },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.match(body.id, UUID_RE);
      assert.equal(body.status, "succeeded");
      assert.equal(body.status_code, 200);
      assert.equal(body.error, null);
      assert.equal(receiver.requests.length, 1);
      const deliveries = await listDeliveries(t(), key, endpoint.id);
      assert.deepEqual(
        deliveries.map((d) => [d.id, d.event_type, d.test]),
        [[body.id, "contract.created", true]],
      );
      const unknown = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${UNKNOWN_ID}/test`,
        key,
        payload: { type: "contract.created" },
      });
      assert.equal(expectError(unknown, 404).error, "Not found");
    });

    it("test to a disabled endpoint is refused with 409 and sends nothing", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      await patchEndpoint(t(), key, endpoint.id, { enabled: false });
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key,
        payload: { type: "customer.created" },
      });
      expectError(res, 409, "endpoint_disabled");
      assert.equal(receiver.requests.length, 0);
      assert.deepEqual(await listDeliveries(t(), key, endpoint.id), []);
    });

    it("deliveries lists an endpoint's deliveries; an unknown endpoint is 404", async () => {
      const { key, endpoint, deliveryId } = await companyWithDelivery();
      const deliveries = await listDeliveries(t(), key, endpoint.id);
      assert.deepEqual(
        deliveries.map((d) => d.id),
        [deliveryId],
      );
      const res = await t().call({ method: "GET", url: `${ENDPOINTS}/${UNKNOWN_ID}/deliveries`, key });
      assert.equal(expectError(res, 404).error, "Not found");
    });

    it("resend answers the delivery with one more attempt; an unknown or malformed delivery id is 404", async () => {
      const { key, endpoint, deliveryId } = await companyWithDelivery();
      const res = await t().call({ method: "POST", url: `${ENDPOINTS}/deliveries/${deliveryId}/resend`, key });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.object, "webhook_delivery");
      assert.equal(body.id, deliveryId);
      assert.equal(body.endpoint_id, endpoint.id);
      assert.equal(body.attempts, 2);
      assert.equal(body.status, "succeeded");
      for (const id of [UNKNOWN_ID, "not-a-uuid"]) {
        const unknown = await t().call({ method: "POST", url: `${ENDPOINTS}/deliveries/${id}/resend`, key });
        assert.equal(expectError(unknown, 404).error, "Not found");
      }
    });

    it("answers 401 Missing API key on every webhook path, and Invalid API key for a wrong key", async () => {
      const { endpoint, deliveryId } = await companyWithDelivery();
      for (const call of everyCall(endpoint.id, deliveryId)) {
        const missing = await t().call(call);
        assert.equal(expectError(missing, 401).error, "Missing API key", `${call.method} ${call.url}`);
        const wrong = await t().call({ ...call, key: "sk_test_this_key_does_not_exist" });
        assert.equal(expectError(wrong, 401).error, "Invalid API key", `${call.method} ${call.url}`);
      }
    });

    it("answers 403 on every webhook path to a key with only usage:read, and changes nothing", async () => {
      const { companyId, key: fullKey } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), fullKey, { url: receiver.url });
      const test = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key: fullKey,
        payload: { type: "customer.created" },
      });
      const deliveryId = test.json().id as string;
      const readOnly = await t().app.services.access.createApiKey(companyId, { scopes: ["usage:read"] });
      for (const call of everyCall(endpoint.id, deliveryId)) {
        const res = await t().call({ ...call, key: readOnly.key });
        const body = expectError(res, 403);
        assert.match(body.error, /webhooks:/, `${call.method} ${call.url} names the scope`);
      }
      assert.equal(receiver.requests.length, 1, "no test or resend was sent");
      const list = await t().call({ method: "GET", url: ENDPOINTS, key: fullKey });
      assert.deepEqual(
        list.json().data.map((e: EndpointBody) => [e.id, e.description]),
        [[endpoint.id, null]],
        "no endpoint created, changed or deleted",
      );
    });

    it("a webhooks:read key reads endpoints and deliveries but may not change anything", async () => {
      const { companyId, key: fullKey } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), fullKey, { url: receiver.url });
      const test = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key: fullKey,
        payload: { type: "customer.created" },
      });
      const deliveryId = test.json().id as string;
      const reader = await t().app.services.access.createApiKey(companyId, { scopes: ["webhooks:read"] });
      for (const call of everyCall(endpoint.id, deliveryId)) {
        const res = await t().call({ ...call, key: reader.key });
        const reads = call.method === "GET";
        if (reads) assert.equal(res.statusCode, 200, `${call.method} ${call.url}: ${res.body}`);
        else expectError(res, 403);
      }
      assert.equal(receiver.requests.length, 1);
    });

    it("another company's endpoint or delivery is 404 on every call, and is left untouched", async () => {
      const owner = await companyWithDelivery();
      const { key: otherKey } = await t().newCompany();
      for (const call of everyCall(owner.endpoint.id, owner.deliveryId)) {
        if (call.url === ENDPOINTS) continue; // create and list name no id
        const res = await t().call({ ...call, key: otherKey });
        assert.equal(expectError(res, 404).error, "Not found", `${call.method} ${call.url}`);
      }
      const otherList = await t().call({ method: "GET", url: ENDPOINTS, key: otherKey });
      assert.deepEqual(otherList.json().data, [], "the other company lists none of the owner's endpoints");
      const got = await getEndpoint(t(), owner.key, owner.endpoint.id);
      assert.equal(got.description, null);
      assert.equal(got.status, "enabled");
      const deliveries = await listDeliveries(t(), owner.key, owner.endpoint.id);
      assert.deepEqual(
        deliveries.map((d) => [d.id, d.attempts]),
        [[owner.deliveryId, 1]],
        "no test was sent and no resend made on the owner's behalf",
      );
      // The secret did not rotate: PATCH (which shows it) still answers the original one.
      const patched = await patchEndpoint(t(), owner.key, owner.endpoint.id, {});
      assert.equal(patched.secret, owner.endpoint.secret);
    });

    it("the 'deliveries' segment is not taken for an endpoint id: GET /deliveries is 404, not a crash", async () => {
      const { key } = await t().newCompany();
      const res = await t().call({ method: "GET", url: `${ENDPOINTS}/deliveries`, key });
      assert.equal(expectError(res, 404).error, "Not found");
    });

    describeBadInputs(t);

    it("a customer created while no endpoint exists makes no delivery anywhere", async () => {
      const { key } = await t().newCompany();
      await createCustomer(t(), key);
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 0, "an endpoint gets only events that happen after it exists");
      assert.deepEqual(await listDeliveries(t(), key, endpoint.id), []);
    });
  },
  { env: { BILLING_WEBHOOK_ALLOW_PRIVATE: "true" } },
);

/** Bad inputs to every call that takes a body: 400 { error, code, details } and nothing changes. */
function describeBadInputs(t: () => TestApp): void {
  const longUrl = (length: number) => {
    const head = "https://8.8.8.8/";
    return head + "a".repeat(length - head.length);
  };

  it("create refuses bad inputs with 400 and creates nothing", async () => {
    const { key } = await t().newCompany();
    const cases: [string, unknown][] = [
      ["missing url", { events: ["customer.created"] }],
      ["url not a string", { url: 42 }],
      ["empty url", { url: "" }],
      ["unknown field", { url: "https://8.8.8.8/x", secret: "whsec_mine" }],
      ["unknown event type", { url: "https://8.8.8.8/x", events: ["invoice.created"] }],
      ["event type in other letter case", { url: "https://8.8.8.8/x", events: ["Customer.Created"] }],
      ["empty events array", { url: "https://8.8.8.8/x", events: [] }],
      ["events not an array", { url: "https://8.8.8.8/x", events: "customer.created" }],
      ["url too long", { url: longUrl(2049) }],
      ["description too long", { url: "https://8.8.8.8/x", description: "d".repeat(501) }],
      ["description not a string", { url: "https://8.8.8.8/x", description: 7 }],
      ["body not an object", ["https://8.8.8.8/x"]],
    ];
    for (const [what, payload] of cases) {
      const res = await t().call({ method: "POST", url: ENDPOINTS, key, payload: payload as object });
      assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
      expectError(res, 400);
    }
    const list = await t().call({ method: "GET", url: ENDPOINTS, key });
    assert.deepEqual(list.json().data, [], "nothing was created");
  });

  it("create accepts a URL of exactly 2048 characters", async () => {
    const { key } = await t().newCompany();
    const created = await createEndpoint(t(), key, { url: longUrl(2048) });
    assert.equal(created.url.length, 2048);
  });

  it("PATCH refuses bad inputs with 400 and leaves the endpoint as it was", async () => {
    const { key } = await t().newCompany();
    const created = await createEndpoint(t(), key, {
      url: "https://8.8.8.8/x",
      events: ["customer.created"],
      description: "kept",
    });
    const cases: [string, unknown][] = [
      ["unknown field", { status: "disabled" }],
      ["unknown field beside good ones", { description: "changed", secret: "whsec_mine" }],
      ["unknown event type", { events: ["customer.deleted"] }],
      ["empty events array", { events: [] }],
      ["enabled as a string", { enabled: "false" }],
      ["enabled as a number", { enabled: 0 }],
      ["enabled null", { enabled: null }],
      ["url too long", { url: longUrl(2049) }],
      ["url not a string", { url: ["https://8.8.8.8/x"] }],
      ["url not a URL", { url: "not a url" }],
      ["url with credentials", { url: "https://user:pass@8.8.8.8/x" }],
      ["url of another scheme", { url: "ftp://8.8.8.8/x" }],
    ];
    for (const [what, payload] of cases) {
      const res = await t().call({
        method: "PATCH",
        url: `${ENDPOINTS}/${created.id}`,
        key,
        payload: payload as object,
      });
      assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
      expectError(res, 400);
    }
    const got = await t().call({ method: "GET", url: `${ENDPOINTS}/${created.id}`, key });
    const body = got.json();
    assert.equal(body.url, "https://8.8.8.8/x");
    assert.deepEqual(body.events, ["customer.created"]);
    assert.equal(body.description, "kept");
    assert.equal(body.status, "enabled");
  });

  it("test refuses an unknown type, a missing type and unknown fields with 400, and sends nothing", async () => {
    const { key } = await t().newCompany();
    const created = await createEndpoint(t(), key, { url: "https://8.8.8.8/x" });
    const cases: [string, unknown][] = [
      ["unknown type", { type: "invoice.created" }],
      ["no type", {}],
      ["type not a string", { type: 1 }],
      ["unknown field", { type: "customer.created", test: false }],
    ];
    for (const [what, payload] of cases) {
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${created.id}/test`,
        key,
        payload: payload as object,
      });
      assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
      expectError(res, 400);
    }
    assert.deepEqual(await listDeliveries(t(), key, created.id), [], "no test event was recorded");
  });

  it("a body that is not JSON is 400 invalid_json on create and PATCH", async () => {
    const { key } = await t().newCompany();
    const created = await createEndpoint(t(), key, { url: "https://8.8.8.8/x" });
    for (const call of [
      { method: "POST" as const, url: ENDPOINTS },
      { method: "PATCH" as const, url: `${ENDPOINTS}/${created.id}` },
    ]) {
      const res = await t().call({
        ...call,
        key,
        headers: { "content-type": "application/json" },
        payload: "{not json",
      });
      expectError(res, 400, "invalid_json");
    }
  });
}
