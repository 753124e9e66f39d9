/**
 * Webhook delivery (docs/webhooks.md, "What arrives" and "Delivery rules") against real local receivers: what
 * arrives and how it is signed (checked with Stripe's and Standard Webhooks' own verifiers), event
 * filtering, rotation, disable/enable, resend, test events, the deliveries list, and every row of the
 * delivery state table on a short retry schedule. The worker is driven by hand (`drain`, `runOnce`); the
 * test clock is fixed, so a retry becomes due only when the test advances it.
 *
 * The clock starts at the real time: the verifiers compare the signature timestamp with their own clock
 * (300 s tolerance).
 */
import assert from "node:assert/strict";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { after, it } from "node:test";
import { createApp, type App } from "../../src/app.js";
import { describeEachEngine, testConfig, type TestApp } from "../support/harness.js";
import {
  UUID_RE,
  createCustomer,
  createEndpoint,
  deliveryAbout,
  ENDPOINTS,
  listDeliveries,
  patchEndpoint,
  resend,
  rotateSecret,
  type DeliveryBody,
} from "../support/api.js";
import { expectError, waitFor } from "../support/assertions.js";
import {
  assertNotSignedWith,
  assertSigned,
  closedPort,
  msBetween,
  receiverPool,
  requestsAbout,
  type Receiver,
} from "../support/webhook-receiver.js";

const SCHEDULE = [50, 100];
const ATTEMPTS = SCHEDULE.length + 1;
/**
 * "Long after the last retry was due" on this schedule. Kept short because the verifiers refuse signature
 * timestamps more than 300 s away from the real time, and the suite's clock only moves forward.
 */
const LATER = 10_000;
/** The default timeout (10 s) and so the default lease (timeout*3+30s = 60 s). */
const ENV_QUEUED = { BILLING_WEBHOOK_ALLOW_PRIVATE: "true", BILLING_WEBHOOK_RETRY_SCHEDULE: "50ms,100ms" };
const now = (t: () => TestApp) => t().clock.now().toISOString();

describeEachEngine(
  "webhook delivery",
  (t) => {
    const receivers = receiverPool();

    async function setup(endpointPayload: Record<string, unknown> = {}) {
      const { key, companyId } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url, ...endpointPayload });
      return { key, companyId, receiver, endpoint };
    }

    it("delivers customer.created as a signed POST with the documented headers, and records it succeeded", async () => {
      const { key, receiver, endpoint } = await setup();
      const customer = await createCustomer(t(), key, {
        name: "Initech",
        external_id: "cus-ini",
        payment_terms_days: 30,
      });
      assert.equal(receiver.requests.length, 0, "nothing is sent before the worker runs");
      await t().app.worker.drain();

      assert.equal(receiver.requests.length, 1);
      const request = receiver.requests[0]!;
      assert.equal(request.method, "POST");
      assert.equal(request.path, "/hook");
      assert.match(String(request.headers["content-type"]), /^application\/json/);
      assert.equal(request.headers["user-agent"], "Service-Webhooks/1.0");
      const event = JSON.parse(request.body);
      assert.match(event.id, /^evt_[0-9a-f]+$/);
      assert.equal(request.headers["service-event-id"], event.id);
      assert.equal(request.headers["service-event-type"], "customer.created");
      assert.match(String(request.headers["service-signature"]), /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.equal(
        String(request.headers["service-signature"]).slice(2).split(",")[0],
        String(Math.floor(t().clock.now().getTime() / 1000)),
      );
      assertSigned(request, endpoint.secret);

      assert.equal(event.object, "event");
      assert.equal(event.type, "customer.created");
      assert.equal(event.test, false);
      assert.equal(event.created_at, customer.created_at);
      assert.deepEqual(event.data.object, customer, "data.object is the customer as the API returned it");

      const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(delivery.object, "webhook_delivery");
      assert.match(delivery.id, UUID_RE);
      assert.equal(delivery.endpoint_id, endpoint.id);
      assert.equal(delivery.event_id, event.id);
      assert.equal(delivery.event_type, "customer.created");
      assert.equal(delivery.status, "succeeded");
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.last_status_code, 200);
      assert.equal(delivery.last_error, null);
      assert.equal(delivery.next_attempt_at, null);
      assert.equal(delivery.delivered_at, now(t));
      assert.equal(delivery.created_at, customer.created_at);
      assert.equal(delivery.test, false);
      assert.equal(JSON.stringify(delivery.payload), request.body, "payload is the exact body received");

      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1, "a succeeded delivery is not sent again");
    });

    it("delivers contract.created with the contract as the API returned it", async () => {
      const { key, receiver, endpoint } = await setup({ events: ["contract.created"] });
      const customer = await createCustomer(t(), key, { name: "Umbrella" });
      const res = await t().call({
        method: "POST",
        url: "/v1/billing/contracts",
        key,
        payload: { customer_id: customer.id },
      });
      assert.equal(res.statusCode, 201, res.body);
      const contract = res.json();
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1);
      const request = receiver.requests[0]!;
      assert.equal(request.headers["service-event-type"], "contract.created");
      assertSigned(request, endpoint.secret);
      const event = JSON.parse(request.body);
      assert.equal(event.type, "contract.created");
      assert.deepEqual(event.data.object, contract);
      for (const field of ["customer_id", "contract_number", "pdf_url", "created_at"])
        assert.ok(field in event.data.object, field);
      assert.equal(event.data.object.customer_id, customer.id);
      const delivery = await deliveryAbout(t(), key, endpoint.id, contract.id);
      assert.equal(delivery.event_type, "contract.created");
      assert.equal(delivery.status, "succeeded");
    });

    it("sends each endpoint only the event types it subscribed to", async () => {
      const {
        key,
        receiver: contractsOnly,
        endpoint: contractsEndpoint,
      } = await setup({ events: ["contract.created"] });
      const everything = await receivers.start();
      const everythingEndpoint = await createEndpoint(t(), key, { url: everything.url });
      const customer = await createCustomer(t(), key);
      await t().app.worker.drain();
      assert.equal(contractsOnly.requests.length, 0, "no customer.created to a contract.created-only endpoint");
      assert.deepEqual(await listDeliveries(t(), key, contractsEndpoint.id), []);
      assert.deepEqual(
        everything.requests.map((r) => r.headers["service-event-type"]),
        ["customer.created"],
      );

      const contract = await t().call({
        method: "POST",
        url: "/v1/billing/contracts",
        key,
        payload: { customer_id: customer.id },
      });
      assert.equal(contract.statusCode, 201, contract.body);
      await t().app.worker.drain();
      assert.deepEqual(
        contractsOnly.requests.map((r) => r.headers["service-event-type"]),
        ["contract.created"],
      );
      assert.deepEqual(
        everything.requests.map((r) => r.headers["service-event-type"]),
        ["customer.created", "contract.created"],
      );
      assert.deepEqual(
        (await listDeliveries(t(), key, everythingEndpoint.id)).map((d) => d.event_type),
        ["contract.created", "customer.created"],
        "newest first",
      );

      // Changing the subscription applies to the next event.
      await patchEndpoint(t(), key, contractsEndpoint.id, { events: ["customer.created"] });
      await createCustomer(t(), key);
      await t().app.worker.drain();
      assert.deepEqual(
        contractsOnly.requests.map((r) => r.headers["service-event-type"]),
        ["contract.created", "customer.created"],
      );
    });

    it("sends another company's events to nobody but that company's endpoints", async () => {
      const { receiver } = await setup();
      const other = await t().newCompany();
      await createCustomer(t(), other.key);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 0);
    });

    it("after rotate-secret the next delivery verifies with the new secret and not with the old one", async () => {
      const { key, receiver, endpoint } = await setup();
      await createCustomer(t(), key);
      await t().app.worker.drain();
      assertSigned(receiver.requests[0]!, endpoint.secret);

      const newSecret = await rotateSecret(t(), key, endpoint.id);
      await createCustomer(t(), key);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 2);
      assertSigned(receiver.requests[1]!, newSecret);
      assertNotSignedWith(receiver.requests[1]!, endpoint.secret);
    });

    it("a retry of an event from before the rotation is signed with the new secret only", async () => {
      const { key, receiver, endpoint } = await setup();
      receiver.answerWith(500);
      await createCustomer(t(), key);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1);
      assertSigned(receiver.requests[0]!, endpoint.secret);

      const newSecret = await rotateSecret(t(), key, endpoint.id);
      receiver.answerWith(200);
      t().clock.advance(SCHEDULE[0]!);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 2);
      assert.equal(receiver.requests[1]!.body, receiver.requests[0]!.body, "same body on the retry");
      assertSigned(receiver.requests[1]!, newSecret);
      assertNotSignedWith(receiver.requests[1]!, endpoint.secret);
    });

    it("a test event is signed, carries test: true and sample data, and is recorded as a delivery", async () => {
      const { key, receiver, endpoint } = await setup();
      for (const type of ["customer.created", "contract.created"] as const) {
        const res = await t().call({ method: "POST", url: `${ENDPOINTS}/${endpoint.id}/test`, key, payload: { type } });
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.status, "succeeded");
        assert.equal(body.status_code, 200);
        assert.equal(body.error, null);
        const request = receiver.requests.at(-1)!;
        assertSigned(request, endpoint.secret);
        assert.equal(request.headers["service-event-type"], type);
        assert.equal(request.headers["user-agent"], "Service-Webhooks/1.0");
        const event = JSON.parse(request.body);
        assert.equal(event.type, type);
        assert.equal(event.test, true);
        assert.equal(event.id, body.event_id);
        assert.equal(request.headers["service-event-id"], event.id);
        assert.equal(event.data.object.object, type === "customer.created" ? "customer" : "contract");

        const delivery = (await listDeliveries(t(), key, endpoint.id))[0]!;
        assert.equal(delivery.id, body.id);
        assert.equal(delivery.event_id, event.id);
        assert.equal(delivery.test, true);
        assert.equal(delivery.status, "succeeded");
        assert.equal(delivery.attempts, 1);
        assert.equal(delivery.last_status_code, 200);
        assert.equal(delivery.delivered_at, now(t));
        assert.equal(JSON.stringify(delivery.payload), request.body);
      }
      assert.equal(receiver.requests.length, 2);
    });

    it("a failed test event answers status failed with the status code and error, and is not retried", async () => {
      const { key, receiver, endpoint } = await setup();
      receiver.answerWith(503);
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key,
        payload: { type: "customer.created" },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.status, "failed");
      assert.equal(body.status_code, 503);
      assert.equal(typeof body.error, "string");
      assert.match(body.error, /503/);

      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1, "a test event is sent once");
      const [delivery] = await listDeliveries(t(), key, endpoint.id);
      assert.equal(delivery!.status, "failed");
      assert.equal(delivery!.attempts, 1);
      assert.equal(delivery!.next_attempt_at, null);
    });

    it("a test event to an unreachable endpoint answers failed with a null status code", async () => {
      const { key } = await t().newCompany();
      const endpoint = await createEndpoint(t(), key, { url: `http://127.0.0.1:${await closedPort()}/hook` });
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key,
        payload: { type: "contract.created" },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.status, "failed");
      assert.equal(body.status_code, null);
      assert.equal(body.error, "connection refused");
    });

    it("a disabled endpoint receives nothing; its pending retries end failed; enabling does not revive them; resend does", async () => {
      const { key, receiver, endpoint } = await setup();
      receiver.answerWith(500);
      const first = await createCustomer(t(), key);
      await t().app.worker.drain();
      const pending = await deliveryAbout(t(), key, endpoint.id, first.id);
      assert.equal(pending.status, "pending");
      assert.equal(pending.attempts, 1);

      const disabled = await patchEndpoint(t(), key, endpoint.id, { enabled: false });
      assert.equal(disabled.status, "disabled");
      const stopped = await deliveryAbout(t(), key, endpoint.id, first.id);
      assert.equal(stopped.status, "failed");
      assert.equal(stopped.last_error, "endpoint disabled");
      assert.equal(stopped.next_attempt_at, null);
      assert.equal(stopped.attempts, 1);
      assert.equal(stopped.last_status_code, 500, "the last attempt's status code is kept");

      receiver.answerWith(200);
      const whileDisabled = await createCustomer(t(), key);
      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1, "a disabled endpoint receives nothing");
      assert.equal(requestsAbout(receiver, whileDisabled.id).length, 0);
      expectError(
        await t().call({
          method: "POST",
          url: `${ENDPOINTS}/${endpoint.id}/test`,
          key,
          payload: { type: "customer.created" },
        }),
        409,
        "endpoint_disabled",
      );
      expectError(
        await t().call({ method: "POST", url: `${ENDPOINTS}/deliveries/${stopped.id}/resend`, key }),
        409,
        "endpoint_disabled",
      );
      assert.equal(receiver.requests.length, 1, "neither a test nor a resend reaches a disabled endpoint");

      assert.equal((await patchEndpoint(t(), key, endpoint.id, { enabled: true })).status, "enabled");
      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1, "enabling again does not revive the stopped delivery");
      const stillFailed = await deliveryAbout(t(), key, endpoint.id, first.id);
      assert.equal(stillFailed.status, "failed");
      assert.equal(stillFailed.last_error, "endpoint disabled");
      const all = await listDeliveries(t(), key, endpoint.id);
      assert.deepEqual(
        all.map((d) => d.id),
        [stopped.id],
        "the event that happened while disabled made no delivery",
      );

      const resent = await resend(t(), key, stopped.id);
      assert.equal(resent.status, "succeeded");
      assert.equal(resent.attempts, 2);
      assert.equal(resent.last_status_code, 200);
      assert.equal(resent.last_error, null);
      assert.equal(resent.delivered_at, now(t));
      assert.equal(receiver.requests.length, 2);
      assert.equal(receiver.requests[1]!.body, receiver.requests[0]!.body);
      assertSigned(receiver.requests[1]!, endpoint.secret);

      // After enabling, new events flow again.
      const afterEnable = await createCustomer(t(), key);
      await t().app.worker.drain();
      assert.equal(requestsAbout(receiver, afterEnable.id).length, 1);
    });

    it("resend sends the same event id and the same body as a new attempt, attempts + 1", async () => {
      const { key, receiver, endpoint } = await setup();
      const customer = await createCustomer(t(), key);
      await t().app.worker.drain();
      const delivered = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(delivered.attempts, 1);

      t().clock.advance(5_000);
      const resent = await resend(t(), key, delivered.id);
      assert.equal(resent.id, delivered.id);
      assert.equal(resent.event_id, delivered.event_id);
      assert.equal(resent.attempts, 2);
      assert.equal(resent.status, "succeeded");
      assert.equal(resent.delivered_at, now(t));
      assert.deepEqual(resent.payload, delivered.payload);

      assert.equal(receiver.requests.length, 2);
      const [original, again] = receiver.requests as [(typeof receiver.requests)[0], (typeof receiver.requests)[0]];
      assert.equal(again.headers["service-event-id"], delivered.event_id);
      assert.equal(again.body, original.body, "byte for byte the same body");
      assert.notEqual(
        again.headers["service-signature"],
        original.headers["service-signature"],
        "signed anew, with a new timestamp",
      );
      assertSigned(again, endpoint.secret);

      const listed = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(listed.attempts, 2);
      assert.equal((await listDeliveries(t(), key, endpoint.id)).length, 1, "a resend is not a new delivery");
    });

    it("a failed resend ends failed with its error and is not retried automatically", async () => {
      const { key, receiver, endpoint } = await setup();
      const customer = await createCustomer(t(), key);
      await t().app.worker.drain();
      const delivered = await deliveryAbout(t(), key, endpoint.id, customer.id);
      receiver.answerWith(502);
      const resent = await resend(t(), key, delivered.id);
      assert.equal(resent.status, "failed");
      assert.equal(resent.attempts, 2);
      assert.equal(resent.last_status_code, 502);
      assert.match(String(resent.last_error), /502/);
      assert.equal(resent.next_attempt_at, null);
      assert.equal(resent.delivered_at, delivered.delivered_at, "delivered_at keeps the earlier success");
      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 2);
    });

    it("a customer create answered 409 makes no event and no delivery (same transaction)", async () => {
      const { key, receiver, endpoint } = await setup();
      await createCustomer(t(), key, { external_id: "dup-1" });
      const conflict = await t().call({
        method: "POST",
        url: "/v1/billing/customers",
        key,
        payload: { name: "Again", external_id: "dup-1" },
      });
      assert.equal(conflict.statusCode, 409, conflict.body);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1);
      assert.equal((await listDeliveries(t(), key, endpoint.id)).length, 1);
    });

    it("the deliveries list shows the 50 most recent, newest first, each payload the exact body received", async () => {
      const { key, receiver, endpoint } = await setup({ events: ["customer.created"] });
      const customers: string[] = [];
      for (let i = 0; i < 55; i++) {
        customers.push((await createCustomer(t(), key, { name: `Customer ${i}` })).id);
        t().clock.advance(1);
      }
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 55);

      const deliveries = await listDeliveries(t(), key, endpoint.id);
      assert.equal(deliveries.length, 50);
      assert.deepEqual(
        deliveries.map((d) => d.payload.data.object.id),
        customers.slice(5).reverse(),
        "the 50 newest, newest first",
      );
      const bodyByEvent = new Map(receiver.requests.map((r) => [r.headers["service-event-id"], r.body]));
      for (const delivery of deliveries) {
        assert.equal(delivery.status, "succeeded");
        assert.equal(
          JSON.stringify(delivery.payload),
          bodyByEvent.get(delivery.event_id),
          `payload of ${delivery.event_id}`,
        );
      }
      assert.equal(new Set(deliveries.map((d) => d.event_id)).size, 50);
    });

    // --- the delivery state table, row by row -------------------------------------------------------

    /**
     * Walks a delivery through every attempt against a receiver that keeps failing, checking the fields
     * after each: pending with the schedule's next time until the last attempt, then failed.
     */
    async function walkFailures(
      key: string,
      endpointId: string,
      resourceId: string,
      expected: { statusCode: number | null; error: string | RegExp },
      sent: () => number | Promise<number>,
    ): Promise<DeliveryBody> {
      await t().app.worker.drain();
      let delivery!: DeliveryBody;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        delivery = await deliveryAbout(t(), key, endpointId, resourceId);
        const at = `after attempt ${attempt}`;
        assert.equal(await sent(), attempt, `${at}: attempts reached the receiver`);
        assert.equal(delivery.attempts, attempt, at);
        assert.equal(delivery.last_status_code, expected.statusCode, at);
        if (typeof expected.error === "string") assert.equal(delivery.last_error, expected.error, at);
        else assert.match(String(delivery.last_error), expected.error, at);
        assert.equal(delivery.delivered_at, null, at);
        if (attempt < ATTEMPTS) {
          const delay = SCHEDULE[attempt - 1]!;
          assert.equal(delivery.status, "pending", at);
          assert.equal(msBetween(now(t), delivery.next_attempt_at!), delay, `${at}: next attempt ${delay} ms later`);
          // Not a moment early.
          t().clock.advance(delay - 1);
          await t().app.worker.drain();
          assert.equal(await sent(), attempt, `${at}: nothing sent before the retry is due`);
          t().clock.advance(1);
          await t().app.worker.drain();
        }
      }
      assert.equal(delivery.status, "failed");
      assert.equal(delivery.next_attempt_at, null);
      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(await sent(), ATTEMPTS, "no attempt after the last one");
      return delivery;
    }

    function assertSameEventEveryTime(receiver: Receiver, secret: string): void {
      const ids = new Set(receiver.requests.map((r) => r.headers["service-event-id"]));
      assert.equal(ids.size, 1, "the event id is stable across retries");
      assert.equal(new Set(receiver.requests.map((r) => r.body)).size, 1, "the body is the same on every attempt");
      for (const request of receiver.requests) assertSigned(request, secret);
    }

    it("pending → 2xx → succeeded, delivered_at set (any 2xx counts)", async () => {
      for (const status of [200, 201, 202, 204, 299]) {
        const { key, receiver, endpoint } = await setup();
        receiver.answerWith(status);
        const customer = await createCustomer(t(), key);
        t().clock.advance(7);
        await t().app.worker.drain();
        const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
        assert.equal(delivery.status, "succeeded", `status ${status}`);
        assert.equal(delivery.last_status_code, status);
        assert.equal(delivery.last_error, null);
        assert.equal(delivery.delivered_at, now(t));
        assert.equal(delivery.next_attempt_at, null);
      }
    });

    it("pending → non-2xx → pending with the schedule, then failed after the last attempt; failed → resend → succeeded", async () => {
      const { key, receiver, endpoint } = await setup();
      receiver.answerWith(500);
      const customer = await createCustomer(t(), key);
      const failed = await walkFailures(
        key,
        endpoint.id,
        customer.id,
        { statusCode: 500, error: "receiver answered 500" },
        () => receiver.requests.length,
      );
      assertSameEventEveryTime(receiver, endpoint.secret);

      receiver.answerWith(200);
      const resent = await resend(t(), key, failed.id);
      assert.equal(resent.status, "succeeded");
      assert.equal(resent.attempts, ATTEMPTS + 1);
      assert.equal(resent.event_id, failed.event_id);
      assert.equal(resent.delivered_at, now(t));
      assert.equal(resent.last_status_code, 200);
      assert.equal(resent.last_error, null);
      assert.equal(receiver.requests.length, ATTEMPTS + 1);
      assertSameEventEveryTime(receiver, endpoint.secret);
    });

    it("4xx answers are retried like any other non-2xx", async () => {
      const { key, receiver, endpoint } = await setup();
      receiver.answerWith(410);
      const customer = await createCustomer(t(), key);
      await walkFailures(
        key,
        endpoint.id,
        customer.id,
        { statusCode: 410, error: "receiver answered 410" },
        () => receiver.requests.length,
      );
    });

    it("pending → failure, then 2xx on a retry → succeeded with the attempts used", async () => {
      const { key, receiver, endpoint } = await setup();
      receiver.answer = (_request, index) => ({ status: index === 0 ? 503 : 200 });
      const customer = await createCustomer(t(), key);
      await t().app.worker.drain();
      const first = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(first.status, "pending");
      assert.equal(first.last_status_code, 503);
      t().clock.advance(SCHEDULE[0]!);
      await t().app.worker.drain();
      const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(delivery.status, "succeeded");
      assert.equal(delivery.attempts, 2);
      assert.equal(delivery.last_status_code, 200);
      assert.equal(delivery.last_error, null);
      assert.equal(delivery.next_attempt_at, null);
      assert.equal(delivery.delivered_at, now(t));
      assertSameEventEveryTime(receiver, endpoint.secret);
    });

    it("a 3xx redirect is a failure, retried, and never followed: the Location target is never hit", async () => {
      const { key, receiver, endpoint } = await setup();
      const target = await receivers.start();
      receiver.answerWith(302, { location: target.url });
      const customer = await createCustomer(t(), key);
      await walkFailures(
        key,
        endpoint.id,
        customer.id,
        { statusCode: 302, error: "receiver answered 302" },
        () => receiver.requests.length,
      );
      assert.equal(target.requests.length, 0, "the redirect was not followed");
    });

    it("no kind of redirect is followed (301, 303, 307, 308), relative or absolute", async () => {
      for (const [status, relative] of [
        [301, false],
        [303, true],
        [307, false],
        [308, true],
      ] as const) {
        const { key, receiver, endpoint } = await setup();
        const target = await receivers.start();
        receiver.answerWith(status, { location: relative ? "/elsewhere" : target.url });
        const customer = await createCustomer(t(), key);
        await t().app.worker.drain();
        const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
        assert.equal(delivery.status, "pending", `${status}`);
        assert.equal(delivery.last_status_code, status);
        assert.equal(delivery.last_error, `receiver answered ${status}`);
        assert.deepEqual(
          receiver.requests.map((r) => r.path),
          ["/hook"],
          `${status}: the receiver saw one request, to the endpoint's path`,
        );
        assert.equal(target.requests.length, 0, `${status}: the Location target was not hit`);
      }
    });

    it("a refused connection is retried with last_status_code null and last_error 'connection refused'", async () => {
      const { key } = await t().newCompany();
      const endpoint = await createEndpoint(t(), key, { url: `http://127.0.0.1:${await closedPort()}/hook` });
      const customer = await createCustomer(t(), key);
      // Nothing listens, so the attempts counter is the only witness of what was tried.
      const attempts = async () => (await deliveryAbout(t(), key, endpoint.id, customer.id)).attempts;
      await walkFailures(key, endpoint.id, customer.id, { statusCode: null, error: "connection refused" }, attempts);
    });

    it("a connection reset before any answer is retried with last_status_code null", async () => {
      const { key } = await t().newCompany();
      const resetter = await startResetter();
      try {
        const endpoint = await createEndpoint(t(), key, { url: `http://127.0.0.1:${resetter.port}/hook` });
        const customer = await createCustomer(t(), key);
        await walkFailures(
          key,
          endpoint.id,
          customer.id,
          { statusCode: null, error: /^connection (reset|closed)$/ },
          () => resetter.connections(),
        );
      } finally {
        await resetter.close();
      }
    });
  },
  {
    env: {
      BILLING_WEBHOOK_ALLOW_PRIVATE: "true",
      BILLING_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(","),
    },
    clockStart: new Date(),
  },
);

/** A TCP server that accepts each connection and resets it at once, before any HTTP answer. */
async function startResetter(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  let count = 0;
  const server = createNetServer((socket) => {
    count++;
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describeEachEngine(
  "webhook delivery to slow receivers",
  (t) => {
    const receivers = receiverPool();

    it("a receiver that does not answer within the timeout is retried with last_error 'timeout', then failed", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      receiver.hang();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      const customer = await createCustomer(t(), key);
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const started = performance.now();
        await t().app.worker.drain();
        const took = performance.now() - started;
        assert.ok(took >= 250, `attempt ${attempt} waited for the timeout (${Math.round(took)} ms)`);
        assert.ok(took < 5_000, `attempt ${attempt} gave up soon after the timeout (${Math.round(took)} ms)`);
        assert.equal(receiver.requests.length, attempt);
        await waitFor(
          "the sender hung up on the hanging receiver",
          () => receiver.requests[attempt - 1]!.closedAt !== undefined,
          5_000,
        );
        const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
        assert.equal(delivery.attempts, attempt);
        assert.equal(delivery.last_status_code, null);
        assert.equal(delivery.last_error, "timeout");
        assert.equal(delivery.delivered_at, null);
        if (attempt < ATTEMPTS) {
          assert.equal(delivery.status, "pending");
          assert.equal(msBetween(now(t), delivery.next_attempt_at!), SCHEDULE[attempt - 1]);
          t().clock.advance(SCHEDULE[attempt - 1]!);
        } else {
          assert.equal(delivery.status, "failed");
          assert.equal(delivery.next_attempt_at, null);
        }
      }
      assert.equal(new Set(receiver.requests.map((r) => r.body)).size, 1);
      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, ATTEMPTS);
    });

    it("a status line sent too late counts as a timeout too", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      receiver.hang();
      const res = await t().call({
        method: "POST",
        url: `${ENDPOINTS}/${endpoint.id}/test`,
        key,
        payload: { type: "customer.created" },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual([res.json().status, res.json().status_code, res.json().error], ["failed", null, "timeout"]);
    });

    it("disabling an endpoint while an attempt is in flight stops the delivery: enabling again does not revive it", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      receiver.hang();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      const customer = await createCustomer(t(), key);
      const step = t().app.worker.runOnce();
      await waitFor("the receiver holds the attempt", () => receiver.requests.length === 1, 5_000);
      await patchEndpoint(t(), key, endpoint.id, { enabled: false });
      assert.equal(await step, 1);
      const stopped = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(
        stopped.status,
        "failed",
        "the attempt that timed out after the disable does not reschedule the delivery",
      );
      assert.equal(stopped.last_error, "endpoint disabled");
      assert.equal(stopped.next_attempt_at, null);
      assert.equal(stopped.attempts, 1);

      receiver.answerWith(200);
      await patchEndpoint(t(), key, endpoint.id, { enabled: true });
      t().clock.advance(LATER);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1, "nothing is sent after enabling again");
      assert.equal((await deliveryAbout(t(), key, endpoint.id, customer.id)).status, "failed");
    });

    it("an attempt that succeeds while the endpoint is being disabled is recorded as delivered", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      // Answer 200, but only once the test has disabled the endpoint.
      receiver.hang();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      const customer = await createCustomer(t(), key);
      const step = t().app.worker.runOnce();
      await waitFor("the receiver holds the attempt", () => receiver.requests.length === 1, 5_000);
      await patchEndpoint(t(), key, endpoint.id, { enabled: false });
      receiver.releaseHeld(200);
      assert.equal(await step, 1);
      const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(delivery.status, "succeeded", "the receiver did get it");
      assert.equal(delivery.last_status_code, 200);
      assert.equal(delivery.delivered_at, now(t));
    });

    it("a receiver that hangs does not stall deliveries to another endpoint", async () => {
      const { key } = await t().newCompany();
      const slow = await receivers.start();
      slow.hang();
      const good = await receivers.start();
      const slowEndpoint = await createEndpoint(t(), key, { url: slow.url });
      const goodEndpoint = await createEndpoint(t(), key, { url: good.url });
      const customers: string[] = [];
      for (let i = 0; i < 6; i++) customers.push((await createCustomer(t(), key, { name: `C${i}` })).id);

      // One worker step claims all twelve deliveries.
      const claimed = await t().app.worker.runOnce();
      assert.equal(claimed, 12);
      assert.equal(good.requests.length, 6, "every delivery to the answering endpoint went out in the same step");
      for (const id of customers) {
        const delivery = await deliveryAbout(t(), key, goodEndpoint.id, id);
        assert.equal(delivery.status, "succeeded");
        assert.equal(delivery.attempts, 1);
      }
      // ... and none of them waited for the hanging receiver: they had all arrived before it was given up on.
      await waitFor(
        "the sender hung up on every hanging request",
        () => slow.requests.every((r) => r.closedAt !== undefined),
        5_000,
      );
      const lastGood = Math.max(...good.requests.map((r) => r.receivedAt));
      const firstGiveUp = Math.min(...slow.requests.map((r) => r.closedAt ?? Infinity));
      assert.ok(slow.requests.length >= 1);
      assert.ok(lastGood < firstGiveUp, "the good endpoint was served while the hanging one was still waited on");
      for (const id of customers) {
        const delivery = await deliveryAbout(t(), key, slowEndpoint.id, id);
        assert.equal(delivery.status, "pending");
        assert.equal(delivery.last_error, "timeout");
      }
    });
  },
  {
    env: {
      BILLING_WEBHOOK_ALLOW_PRIVATE: "true",
      BILLING_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(","),
      BILLING_WEBHOOK_TIMEOUT: "300ms",
    },
    clockStart: new Date(),
  },
);

/**
 * One worker step claims up to 32 due deliveries but sends at most 4 at once per endpoint, so behind a slow
 * receiver the rest of the claim waits its turn. What a queued delivery finally sends must be what holds
 * when it is sent, not what held at the claim: the endpoint's current secret, nothing at all once the
 * endpoint is disabled, and nothing that another worker has meanwhile taken over.
 */
describeEachEngine(
  "webhook deliveries queued behind a slow receiver",
  (t) => {
    const receivers = receiverPool();
    const extraApps: App[] = [];
    after(async () => {
      for (const app of extraApps) await app.close();
    });

    /** A company, an endpoint whose receiver holds every request open, and `n` customers (so n deliveries). */
    async function backlog(n: number) {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      receiver.hang();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url, events: ["customer.created"] });
      const customers: string[] = [];
      for (let i = 0; i < n; i++) customers.push((await createCustomer(t(), key, { name: `Queued ${i}` })).id);
      return { key, receiver, endpoint, customers };
    }

    it("a delivery queued when the secret is rotated is signed with the new secret only", async () => {
      const { key, receiver, endpoint } = await backlog(5);
      const step = t().app.worker.runOnce();
      await waitFor("four attempts in flight", () => receiver.requests.length === 4, 5_000);
      const newSecret = await rotateSecret(t(), key, endpoint.id);
      receiver.answerWith(200);
      receiver.releaseHeld(200);
      assert.equal(await step, 5);
      assert.equal(receiver.requests.length, 5);
      for (const request of receiver.requests.slice(0, 4)) assertSigned(request, endpoint.secret);
      assertSigned(receiver.requests[4]!, newSecret);
      assertNotSignedWith(receiver.requests[4]!, endpoint.secret);
    });

    it("a delivery queued when the endpoint is disabled is not sent, and ends failed", async () => {
      const { key, receiver, endpoint, customers } = await backlog(5);
      const step = t().app.worker.runOnce();
      await waitFor("four attempts in flight", () => receiver.requests.length === 4, 5_000);
      await patchEndpoint(t(), key, endpoint.id, { enabled: false });
      receiver.answerWith(200);
      receiver.releaseHeld(200);
      await step;
      assert.equal(receiver.requests.length, 4, "the disabled endpoint received nothing more");
      const queued = await deliveryAbout(t(), key, endpoint.id, customers[4]!);
      assert.equal(queued.status, "failed");
      assert.equal(queued.last_error, "endpoint disabled");
      assert.equal(queued.next_attempt_at, null);
    });

    it("a second worker never sends an attempt the first is still making or is about to make", async () => {
      // Worker A claims 32 deliveries and works through them 4 at a time, each receiver answer taking 9 s of
      // (test) clock, under the 10 s timeout. After 7 rounds (63 s) the claim is older than the 60 s lease
      // (timeout*3+30s); worker B, another process on the same database, polls just then.
      const { key, receiver, endpoint } = await backlog(32);
      const other = await createApp(testConfig(ENV_QUEUED), { db: t().app.db, clock: t().clock });
      extraApps.push(other);

      const stepA = t().app.worker.runOnce();
      for (let round = 1; round <= 7; round++) {
        await waitFor(`round ${round} in flight`, () => receiver.requests.length === 4 * round, 5_000);
        t().clock.advance(9_000);
        if (round < 7) receiver.releaseHeld(200);
      }
      // Round 7 is still in flight, round 8 waits in A's queue; B now looks for due work.
      receiver.answerWith(200);
      await other.worker.runOnce();
      receiver.releaseHeld(200);
      assert.equal(await stepA, 32);
      await other.worker.drain();
      await t().app.worker.drain();

      const perEvent = new Map<string, number>();
      for (const r of receiver.requests)
        perEvent.set(
          String(r.headers["service-event-id"]),
          (perEvent.get(String(r.headers["service-event-id"])) ?? 0) + 1,
        );
      const twice = [...perEvent].filter(([, count]) => count > 1);
      assert.deepEqual(twice, [], "no event was sent twice");
      assert.equal(perEvent.size, 32);
      const deliveries = await listDeliveries(t(), key, endpoint.id);
      assert.equal(deliveries.length, 32);
      for (const d of deliveries) assert.equal(d.status, "succeeded", d.event_id);
    });
  },
  { env: ENV_QUEUED, clockStart: new Date() },
);
