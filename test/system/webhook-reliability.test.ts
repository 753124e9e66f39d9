/**
 * Webhook delivery across real service processes on one PostgreSQL (docs/decisions.md, "Webhooks": transactional
 * outbox, leased claims with FOR UPDATE SKIP LOCKED). Each test starts `node --import tsx src/main.ts`
 * children (serviceProcesses); skipped without TEST_DATABASE_URL. Every wait has a deadline; children are killed in `after`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.js";
import { createTestDatabase, postgresSkip, type TestDatabase } from "../support/harness.js";
import type { DeliveryBody } from "../support/api.js";
import { waitFor } from "../support/assertions.js";
import { kill, type ServiceProcess as Service, serviceProcesses } from "../support/service-process.js";
import { assertSigned, startReceiver, type Receiver } from "../support/webhook-receiver.js";

const skip = postgresSkip();

describe("webhook delivery across service processes [postgres]", { skip }, () => {
  const procs = serviceProcesses(); // every child is killed after the suite, before the databases are dropped
  const databases: TestDatabase[] = [];
  const receivers: Receiver[] = [];
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    for (const database of databases) await database.drop();
  });

  const apiKey = `sk_test_reliability_${randomBytes(8).toString("hex")}`;

  async function newDatabase(): Promise<string> {
    const database = await createTestDatabase("postgres");
    databases.push(database);
    if (database.storage.kind !== "postgres") throw new Error("expected a PostgreSQL database");
    return database.storage.url;
  }

  /** Starts the service on a free port and waits until /healthz answers (serviceProcesses). */
  function startService(databaseUrl: string, env: Record<string, string> = {}): Promise<Service> {
    return procs.start({
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: "5",
      BILLING_BOOTSTRAP_COMPANY: "Reliability Co",
      BILLING_BOOTSTRAP_API_KEY: apiKey,
      BILLING_WEBHOOK_ALLOW_PRIVATE: "true",
      BILLING_WEBHOOK_POLL_INTERVAL: "100ms",
      ...env,
    });
  }

  async function api(
    service: Service,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: any }> {
    const res = await fetch(`${service.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  }

  async function deliveries(service: Service, endpointId: string): Promise<DeliveryBody[]> {
    const res = await api(service, "GET", `/v1/webhook-endpoints/${endpointId}/deliveries`);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.data;
  }

  it("a delivery in flight when its service is killed is delivered by the next service process", async () => {
    const databaseUrl = await newDatabase();
    const receiver = await startReceiver();
    receivers.push(receiver);
    // The first request is held open without an answer; later ones get 200.
    receiver.answer = (_request, index) => (index === 0 ? "hang" : { status: 200 });
    // Timeout 2 s with the default retry schedule (1 min): had the first process lived to see the timeout,
    // the next attempt would be a minute away. A lease of 3 s (instead of timeout*3+30s) keeps the test short.
    const env = { BILLING_WEBHOOK_TIMEOUT: "2s", BILLING_WEBHOOK_LEASE: "3s" };

    const first = await startService(databaseUrl, env);
    const endpoint = await api(first, "POST", "/v1/webhook-endpoints", { url: receiver.url });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.json));
    const customer = await api(first, "POST", "/v1/billing/customers", { name: "Crash Test Dummy Ltd" });
    assert.equal(customer.status, 201, JSON.stringify(customer.json));

    await waitFor("the receiver to hold the first attempt", () => receiver.requests.length === 1);
    await kill(first);
    assert.equal(first.child.signalCode, "SIGKILL");
    await waitFor("the killed sender's connection to close", () => receiver.requests[0]!.closedAt !== undefined);
    assert.equal(receiver.requests.length, 1);

    const second = await startService(databaseUrl, env);
    await waitFor("the event to be delivered again", () => receiver.requests.length >= 2);
    const [held, again] = receiver.requests as [Receiver["requests"][0], Receiver["requests"][0]];
    assert.equal(again.headers["service-event-id"], held.headers["service-event-id"], "the same event id");
    assert.equal(again.body, held.body, "the same body");
    assert.equal(JSON.parse(again.body).data.object.id, customer.json.id);
    assertSigned(again, endpoint.json.secret);

    let delivery: DeliveryBody | undefined;
    await waitFor("the delivery to be recorded succeeded", async () => {
      [delivery] = await deliveries(second, endpoint.json.id);
      return delivery?.status === "succeeded";
    });
    assert.equal(delivery!.attempts, 2, "the attempt lost with the first process counts");
    assert.equal(delivery!.last_status_code, 200);
    assert.equal(delivery!.last_error, null);
    assert.notEqual(delivery!.delivered_at, null);
    assert.equal(receiver.requests.length, 2, "delivered once more, not more");
  });

  it("two service processes on one database share the deliveries without sending any attempt twice", async () => {
    const databaseUrl = await newDatabase();
    const receiver = await startReceiver();
    receivers.push(receiver);
    const [a, b] = await Promise.all([startService(databaseUrl), startService(databaseUrl)]);
    const endpoint = await api(a, "POST", "/v1/webhook-endpoints", { url: receiver.url, events: ["customer.created"] });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.json));

    const created: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api(i % 2 === 0 ? a : b, "POST", "/v1/billing/customers", { name: `Customer ${batch}-${i}` }),
        ),
      );
      for (const res of results) {
        assert.equal(res.status, 201, JSON.stringify(res.json));
        created.push(res.json.id);
      }
    }

    const eventIds = () => new Set(receiver.requests.map((r) => String(r.headers["service-event-id"])));
    await waitFor("50 events to be received", () => eventIds().size === 50);
    let listed: DeliveryBody[] = [];
    await waitFor("every delivery to be recorded succeeded", async () => {
      listed = await deliveries(b, endpoint.json.id);
      return listed.length === 50 && listed.every((d) => d.status === "succeeded");
    });

    const perEvent = new Map<string, number>();
    for (const r of receiver.requests) {
      const id = String(r.headers["service-event-id"]);
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
    }
    assert.deepEqual(
      [...perEvent].filter(([, count]) => count > 1),
      [],
      "no event id was received twice",
    );
    assert.equal(receiver.requests.length, 50);
    for (const d of listed) assert.equal(d.attempts, 1, `${d.event_id} took one attempt`);
    assert.deepEqual(
      new Set(receiver.requests.map((r) => JSON.parse(r.body).data.object.id)),
      new Set(created),
      "one event per customer created, through either process",
    );
  });
});

describe("BILLING_WEBHOOK_LEASE", () => {
  const base = { BILLING_DATA_DIR: "memory://" };

  it("is unset by default (the worker then leases for timeout*3+30s) and takes a duration", () => {
    assert.equal(loadConfig(base).webhooks.leaseMs, undefined);
    assert.equal(loadConfig({ ...base, BILLING_WEBHOOK_LEASE: "90s" }).webhooks.leaseMs, 90_000);
    assert.equal(
      loadConfig({ ...base, BILLING_WEBHOOK_TIMEOUT: "2s", BILLING_WEBHOOK_LEASE: "3s" }).webhooks.leaseMs,
      3_000,
    );
  });

  it("must be longer than the timeout, and a duration", () => {
    assert.throws(() => loadConfig({ ...base, BILLING_WEBHOOK_LEASE: "10s" }), ConfigError);
    assert.throws(
      () => loadConfig({ ...base, BILLING_WEBHOOK_TIMEOUT: "2s", BILLING_WEBHOOK_LEASE: "1s" }),
      ConfigError,
    );
    assert.throws(() => loadConfig({ ...base, BILLING_WEBHOOK_LEASE: "soon" }), ConfigError);
  });
});
