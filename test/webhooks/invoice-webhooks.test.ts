/**
 * Invoice webhooks (docs/webhooks.md, "Event types"): `invoice.issued`, `invoice.paid` and `invoice.voided` are
 * opt-in. An endpoint receives them only when its `events` names them; one created without `events`, or naming
 * the two original types, receives customer.created and contract.created only, as before invoice events
 * existed. Each is recorded once, when the transition happens (finalize by hand or by the invoice worker, pay,
 * void), with the invoice as `GET /v1/billing/invoices/{number}` answers it; a repeated action that answers the
 * invoice unchanged records nothing. Test events of the new types carry sample objects.
 *
 * The first suite's clock starts at the real time, so that Stripe's and Standard Webhooks' verifiers (300 s
 * tolerance) check the signatures. The worker's suite moves its clock to a month's end: its signatures are
 * checked by the documented scheme instead (hex HMAC-SHA256 of `<t>.<raw body>`).
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { it } from "node:test";
import { invoiceWithLinesSchema } from "../../src/domain/invoices/invoice-schemas.js";
import { JsonNumber } from "../../src/platform/exact-json.js";
import {
  ENDPOINTS,
  INVOICES,
  companyWithContract,
  createCustomer,
  createEndpoint,
  createSampleContract,
  getInvoice,
  invoiceFor,
  invoicesOf,
  listDeliveries,
  patchEndpoint,
  submitAccepted,
  usageEvent,
  type Contract,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { assertSigned, receiverPool, type ReceivedRequest, type Receiver } from "../support/webhook-receiver.js";

const INVOICE_EVENTS = ["invoice.issued", "invoice.paid", "invoice.voided"] as const;
const ALLOW_PRIVATE = { BILLING_WEBHOOK_ALLOW_PRIVATE: "true" };

const action = (t: TestApp, key: string, number: string, verb: "finalize" | "pay" | "void") =>
  t.call({ method: "POST", url: `${INVOICES}/${encodeURIComponent(number)}/${verb}`, key });

/** POSTs an invoice action, asserting 200; returns the answer's raw body and its parse. */
async function act(t: TestApp, key: string, number: string, verb: "finalize" | "pay" | "void") {
  const res = await action(t, key, number, verb);
  expectStatus(res, 200);
  return { raw: res.body, invoice: res.json() };
}

const typesOf = (receiver: Receiver): string[] => receiver.requests.map((r) => String(r.headers["service-event-type"]));

/** The types received, sorted: the deliveries of one worker round may arrive in any order (at least once, unordered). */
const receivedTypes = (receiver: Receiver): string[] => typesOf(receiver).sort();

const eventOf = (request: ReceivedRequest) => JSON.parse(request.body);

/** The raw body of GET /v1/billing/invoices/{number}. */
async function rawInvoice(t: TestApp, key: string, number: string): Promise<string> {
  const res = await t.call({ method: "GET", url: `${INVOICES}/${encodeURIComponent(number)}`, key });
  expectStatus(res, 200);
  return res.body;
}

/**
 * Asserts the event's `data.object` is the invoice GET answers, to the byte (exact decimals included): the
 * body ends with `"data":{"object":<GET's body>}}`.
 */
async function assertCarriesInvoice(t: TestApp, key: string, request: ReceivedRequest, number: string) {
  const get = await rawInvoice(t, key, number);
  assert.ok(
    request.body.endsWith(`"data":{"object":${get}}}`),
    `data.object is the invoice as GET answers it:\n${request.body}\n${get}`,
  );
  const event = eventOf(request);
  assert.equal(event.data.object.object, "invoice");
  assert.equal(event.data.object.number, number);
  assert.ok(event.data.object.line_items.length > 0, "with its line items");
}

/** A draft of a new sample contract with one usage event of now on it. */
async function draftOf(t: TestApp, key: string): Promise<{ contract: Contract; number: string }> {
  const customer = await createCustomer(t, key, { name: `Invoice Hooks ${Math.random().toString(16).slice(2, 8)}` });
  const contract = await createSampleContract(t, key, customer.id);
  await submitAccepted(t, key, [usageEvent(contract.id, { timestamp: t.clock.now().toISOString(), quantity: 3 })]);
  const invoices = await invoicesOf(t, key, contract.id);
  assert.equal(invoices.length, 1, "the month's draft");
  assert.equal(invoices[0]!.status, "draft");
  return { contract, number: invoices[0]!.number };
}

describeEachEngine(
  "invoice webhooks",
  (t) => {
    const receivers = receiverPool();

    it("an endpoint that names invoice.issued receives it on finalize, signed, with the invoice and its lines as GET answers them", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url, events: ["invoice.issued"] });
      assert.deepEqual(endpoint.events, ["invoice.issued"]);
      const { number } = await draftOf(t(), key);
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 0, "customer.created and contract.created are not named: not sent");

      const finalized = await act(t(), key, number, "finalize");
      assert.equal(receiver.requests.length, 0, "nothing is sent before the worker runs");
      await t().app.worker.drain();

      assert.equal(receiver.requests.length, 1);
      const request = receiver.requests[0]!;
      assert.equal(request.method, "POST");
      assert.equal(request.headers["service-event-type"], "invoice.issued");
      assert.equal(request.headers["user-agent"], "Service-Webhooks/1.0");
      assertSigned(request, endpoint.secret);
      const event = eventOf(request);
      assert.match(event.id, /^evt_[0-9a-f]{32}$/);
      assert.equal(request.headers["service-event-id"], event.id);
      assert.equal(event.object, "event");
      assert.equal(event.type, "invoice.issued");
      assert.equal(event.test, false);
      assert.equal(event.created_at, t().clock.now().toISOString());
      assert.deepEqual(Object.keys(event).sort(), ["created_at", "data", "id", "object", "test", "type"]);
      await assertCarriesInvoice(t(), key, request, number);
      assert.ok(request.body.endsWith(`"data":{"object":${finalized.raw}}}`), "and as finalize answered it");
      assert.equal(event.data.object.status, "issued");
      assert.equal(event.data.object.issued_date, t().clock.now().toISOString().slice(0, 10));

      const deliveries = await listDeliveries(t(), key, endpoint.id);
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0]!.event_type, "invoice.issued");
      assert.equal(deliveries[0]!.event_id, event.id);
      assert.equal(deliveries[0]!.status, "succeeded");
      assert.equal(JSON.stringify(deliveries[0]!.payload), JSON.stringify(JSON.parse(request.body)));
    });

    it("a repeated finalize, pay or void answers the invoice unchanged and emits no second event", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url, events: [...INVOICE_EVENTS] });
      const paid = await draftOf(t(), key);
      const voided = await draftOf(t(), key);

      const first = await act(t(), key, paid.number, "finalize");
      assert.equal((await act(t(), key, paid.number, "finalize")).raw, first.raw, "answered unchanged");
      await act(t(), key, voided.number, "finalize");
      await act(t(), key, voided.number, "finalize");
      const payment = await act(t(), key, paid.number, "pay");
      assert.equal((await act(t(), key, paid.number, "pay")).raw, payment.raw);
      // Finalizing a paid invoice answers it unchanged too.
      await act(t(), key, paid.number, "finalize");
      const voiding = await act(t(), key, voided.number, "void");
      assert.equal((await act(t(), key, voided.number, "void")).raw, voiding.raw);
      await t().app.worker.drain();

      assert.deepEqual(receivedTypes(receiver), ["invoice.issued", "invoice.issued", "invoice.paid", "invoice.voided"]);
      const about = (number: string) =>
        receiver.requests
          .filter((r) => eventOf(r).data.object.number === number)
          .map((r) => eventOf(r).type)
          .sort();
      assert.deepEqual(about(paid.number), ["invoice.issued", "invoice.paid"]);
      assert.deepEqual(about(voided.number), ["invoice.issued", "invoice.voided"]);
      assert.equal((await listDeliveries(t(), key, endpoint.id)).length, 4);
    });

    it("invoice.paid and invoice.voided carry the invoice as paid or voided, as GET answers it", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, {
        url: receiver.url,
        events: ["invoice.paid", "invoice.voided"],
      });
      const paid = await draftOf(t(), key);
      const voided = await draftOf(t(), key);
      await act(t(), key, paid.number, "finalize");
      await act(t(), key, voided.number, "finalize");
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 0, "invoice.issued is not named: not sent");

      const payment = await act(t(), key, paid.number, "pay");
      await t().app.worker.drain();
      assert.deepEqual(typesOf(receiver), ["invoice.paid"]);
      const paidRequest = receiver.requests[0]!;
      assertSigned(paidRequest, endpoint.secret);
      await assertCarriesInvoice(t(), key, paidRequest, paid.number);
      assert.ok(paidRequest.body.endsWith(`"data":{"object":${payment.raw}}}`));
      assert.equal(eventOf(paidRequest).data.object.status, "paid");
      assert.equal(eventOf(paidRequest).data.object.paid_date, t().clock.now().toISOString().slice(0, 10));

      const voiding = await act(t(), key, voided.number, "void");
      await t().app.worker.drain();
      assert.deepEqual(typesOf(receiver), ["invoice.paid", "invoice.voided"]);
      const voidRequest = receiver.requests[1]!;
      assertSigned(voidRequest, endpoint.secret);
      assert.equal(voidRequest.headers["service-event-type"], "invoice.voided");
      await assertCarriesInvoice(t(), key, voidRequest, voided.number);
      assert.ok(voidRequest.body.endsWith(`"data":{"object":${voiding.raw}}}`));
      assert.equal(eventOf(voidRequest).data.object.status, "void");
      for (const d of await listDeliveries(t(), key, endpoint.id)) assert.equal(d.status, "succeeded");
    });

    it("an endpoint created without events, or naming the two original types, gets no invoice event but still customer.created and contract.created", async () => {
      const { key } = await t().newCompany();
      const unnamed = await receivers.start();
      const original = await receivers.start();
      const invoices = await receivers.start();
      const unnamedEndpoint = await createEndpoint(t(), key, { url: unnamed.url });
      assert.deepEqual(
        unnamedEndpoint.events,
        ["customer.created", "contract.created"],
        "the default: the two originals",
      );
      const originalEndpoint = await createEndpoint(t(), key, {
        url: original.url,
        events: ["customer.created", "contract.created"],
      });
      await createEndpoint(t(), key, { url: invoices.url, events: [...INVOICE_EVENTS] });
      // Read back as stored, too.
      const stored = await t().call({ method: "GET", url: `${ENDPOINTS}/${unnamedEndpoint.id}`, key });
      assert.deepEqual(stored.json().events, ["customer.created", "contract.created"]);

      const paid = await draftOf(t(), key);
      const voided = await draftOf(t(), key);
      await act(t(), key, paid.number, "finalize");
      await act(t(), key, voided.number, "finalize");
      await act(t(), key, paid.number, "pay");
      await act(t(), key, voided.number, "void");
      await t().app.worker.drain();

      const originals = ["contract.created", "contract.created", "customer.created", "customer.created"];
      assert.deepEqual(receivedTypes(unnamed), originals);
      assert.deepEqual(receivedTypes(original), originals);
      assert.deepEqual(receivedTypes(invoices), ["invoice.issued", "invoice.issued", "invoice.paid", "invoice.voided"]);
      assert.deepEqual((await listDeliveries(t(), key, unnamedEndpoint.id)).map((d) => d.event_type).sort(), originals);
      assert.equal((await listDeliveries(t(), key, originalEndpoint.id)).length, 4);

      // Naming an invoice event later subscribes to it from the next event on.
      await patchEndpoint(t(), key, unnamedEndpoint.id, { events: ["customer.created", "invoice.issued"] });
      const next = await draftOf(t(), key);
      await act(t(), key, next.number, "finalize");
      await t().app.worker.drain();
      assert.deepEqual(typesOf(unnamed).slice(4).sort(), ["customer.created", "invoice.issued"]);
      for (const request of unnamed.requests.slice(4)) assertSigned(request, unnamedEndpoint.secret);
    });

    it("an endpoint stored before invoice events existed keeps its event types, and receives no invoice event", async () => {
      const { key, companyId } = await t().newCompany();
      const receiver = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url, events: ["customer.created"] });
      // As the earlier release stored an endpoint created without `events`: both types it knew, explicitly.
      await t().app.db.query("UPDATE webhook_endpoints SET events = $3 WHERE company_id = $1 AND id = $2", [
        companyId,
        endpoint.id,
        ["customer.created", "contract.created"],
      ]);
      const { number } = await draftOf(t(), key);
      await act(t(), key, number, "finalize");
      await act(t(), key, number, "pay");
      await t().app.worker.drain();
      assert.deepEqual(receivedTypes(receiver), ["contract.created", "customer.created"]);
      const got = await t().call({ method: "GET", url: `${ENDPOINTS}/${endpoint.id}`, key });
      assert.deepEqual(got.json().events, ["customer.created", "contract.created"]);
    });

    it("a test event of each new type is signed, marked test, and carries a sample object of the type's shape", async () => {
      const { key } = await t().newCompany();
      const receiver = await receivers.start();
      // A test event goes to the endpoint whatever its event types.
      const endpoint = await createEndpoint(t(), key, { url: receiver.url });
      const { number } = await draftOf(t(), key);
      const real = await getInvoice(t(), key, (await act(t(), key, number, "finalize")).invoice.number);
      const expected = {
        "invoice.issued": ["invoice", "issued"],
        "invoice.paid": ["invoice", "paid"],
        "invoice.voided": ["invoice", "void"],
        "invoice.payment_recorded": ["invoice_payment", undefined],
        "credit_note.created": ["credit_note", undefined],
      } as const;
      for (const [type, [object, status]] of Object.entries(expected)) {
        const res = await t().call({ method: "POST", url: `${ENDPOINTS}/${endpoint.id}/test`, key, payload: { type } });
        expectStatus(res, 200);
        assert.equal(res.json().status, "succeeded");
        const request = receiver.requests.at(-1)!;
        assertSigned(request, endpoint.secret);
        assert.equal(request.headers["service-event-type"], type);
        const event = eventOf(request);
        assert.equal(event.type, type);
        assert.equal(event.test, true);
        assert.equal(event.data.object.object, object, type);
        if (object === "invoice") {
          const sample = event.data.object;
          assert.equal(sample.status, status);
          assert.deepEqual(Object.keys(sample).sort(), Object.keys(real).sort(), "the keys of a real invoice");
          const parsed = invoiceWithLinesSchema.safeParse(asAnswered(sample));
          assert.ok(parsed.success, `${type}'s sample is an invoice as the API describes it: ${parsed.error}`);
          assert.equal(sample.paid_date === null, type !== "invoice.paid");
          assert.match(request.body, /"total":1000\.00/, "money with the currency's minor unit, as the API writes it");
        } else if (object === "invoice_payment") {
          assert.deepEqual(event.data.object, {
            object: "invoice_payment",
            id: "pay_0123456789abcdef",
            invoice: "INV-000001",
            amount: 100,
            currency: "USD",
            paid_on: "2026-03-15",
            method: "bank_transfer",
            reference: null,
            created_at: t().clock.now().toISOString(),
          });
          assert.match(request.body, /"amount":100\.00/);
        } else {
          const note = event.data.object;
          assert.deepEqual(Object.keys(note).sort(), [
            "amount",
            "applied_to_due",
            "created_at",
            "currency",
            "customer",
            "invoice",
            "issued_date",
            "lines",
            "number",
            "object",
            "reason",
            "to_balance",
          ]);
          assert.equal(note.number, "CN-000001");
          assert.deepEqual(note.lines, [{ line: null, description: "Credit on the invoice", amount: 10 }]);
          assert.match(request.body, /"amount":10\.00/);
        }
      }
      assert.equal(receiver.requests.length, 5, "only the test events: no invoice event is named by this endpoint");
    });
  },
  { env: ALLOW_PRIVATE, clockStart: new Date() },
);

/** A parsed JSON value with its numbers as the service answers them (JsonNumber), for its response schemas. */
function asAnswered(value: unknown): unknown {
  if (typeof value === "number") return new JsonNumber(String(value));
  if (Array.isArray(value)) return value.map(asAnswered);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asAnswered(v)]));
  return value;
}

/** Verifies Service-Signature by the documented scheme, at the suite's clock rather than the real time. */
function assertSignedAt(request: ReceivedRequest, secret: string, at: Date): void {
  const header = String(request.headers["service-signature"]);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  assert.ok(match, header);
  assert.equal(Number(match[1]), Math.floor(at.getTime() / 1000));
  const expected = createHmac("sha256", secret).update(`${match[1]}.${request.body}`, "utf8").digest("hex");
  assert.equal(match[2], expected, "signed with the endpoint's secret");
}

describeEachEngine(
  "invoice webhooks of the invoice worker",
  (t) => {
    const receivers = receiverPool();

    it("the worker's automatic issue emits invoice.issued once, with the invoice as GET answers it", async () => {
      t().clock.set(new Date("2026-03-20T12:00:00.000Z"));
      const { key, contract } = await companyWithContract(t());
      const receiver = await receivers.start();
      const unnamed = await receivers.start();
      const endpoint = await createEndpoint(t(), key, { url: receiver.url, events: ["invoice.issued"] });
      await createEndpoint(t(), key, { url: unnamed.url });
      await submitAccepted(t(), key, [usageEvent(contract.id)]);
      const march = await invoiceFor(t(), key, contract.id);
      assert.equal(march.status, "draft");

      const worker = t().app.invoiceWorker!;
      assert.ok(worker, "BILLING_INVOICE_GRACE=3d runs the invoice worker");
      t().clock.set(new Date("2026-04-04T00:00:00.000Z"));
      assert.ok((await worker.runOnce()) >= 1);
      assert.equal((await getInvoice(t(), key, march.number)).status, "issued");
      await worker.runOnce();
      // A finalize by hand afterwards answers it unchanged: still one event.
      expectStatus(await action(t(), key, march.number, "finalize"), 200);
      await t().app.worker.drain();

      assert.deepEqual(typesOf(receiver), ["invoice.issued"]);
      const request = receiver.requests[0]!;
      assertSignedAt(request, endpoint.secret, t().clock.now());
      await assertCarriesInvoice(t(), key, request, march.number);
      const event = eventOf(request);
      assert.equal(event.created_at, "2026-04-04T00:00:00.000Z");
      assert.equal(event.data.object.issued_date, "2026-04-04");
      assert.equal(event.test, false);
      assert.deepEqual(typesOf(unnamed), [], "an endpoint created without events gets no invoice event");
    });
  },
  { env: { ...ALLOW_PRIVATE, BILLING_INVOICE_GRACE: "3d" } },
);
