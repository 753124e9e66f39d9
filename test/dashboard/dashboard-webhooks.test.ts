/**
 * The dashboard's webhook pages, black-box over fastify.inject: endpoints list and create (secret shown
 * once), edit, enable/disable, rotate, delete, test events, deliveries with their payload, resend; and the
 * refusals (bad input, another company's ids, a missing CSRF token). What a form changed is read back
 * through the public API with a key of the same company.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { createCustomer, ENDPOINTS, listDeliveries, type EndpointBody } from "../support/api.js";
import { alertOf, fieldErrorOf, signUp, type DashboardClient } from "../support/dashboard-client.js";
import { assertNotSignedWith, assertSigned, receiverPool } from "../support/webhook-receiver.js";

const SECRET_RE = /id="endpoint-secret">([^<]+)</;
const ONE_FIELD = "One field needs your attention: see the message beside it.";
const CHOOSE_EVENT =
  "Choose one of customer.created, contract.created, invoice.issued, invoice.paid, invoice.voided, invoice.payment_recorded, credit_note.created.";
/** What a refusal that BILLING_WEBHOOK_ALLOW_PRIVATE would lift adds: how to allow local development. */
const ALLOW_LOCAL =
  "For local development, whoever runs this billing service can allow http:// and private addresses by starting it with BILLING_WEBHOOK_ALLOW_PRIVATE=true (never in production: it lets the service send requests into its own network).";
const NOT_PUBLIC = (address: string) =>
  `${address} is a private or reserved address: use an address on the public internet, where our servers can reach it. ${ALLOW_LOCAL}`;

/** A signed-up company: its dashboard client and an API key made on its Settings page. */
async function company(t: () => TestApp) {
  const { client } = await signUp(t);
  const created = await client.post("/settings/api-keys", { name: "webhook tests" });
  assert.equal(created.statusCode, 200);
  const key = /id="new-api-key">([^<]+)</.exec(created.body)?.[1];
  assert.ok(key, "the new key is on the page");
  return { client, key };
}

async function apiEndpoints(t: () => TestApp, key: string): Promise<EndpointBody[]> {
  const res = await t().call({ method: "GET", url: ENDPOINTS, key });
  assert.equal(res.statusCode, 200);
  return res.json().data;
}

async function apiEndpoint(t: () => TestApp, key: string, id: string): Promise<LightMyRequestResponse> {
  return t().call({ method: "GET", url: `${ENDPOINTS}/${id}`, key });
}

/** Adds an endpoint through the form; returns its id (read back through the API) and the secret shown. */
async function addEndpoint(
  t: () => TestApp,
  client: DashboardClient,
  key: string,
  fields: Record<string, string | string[]>,
) {
  const before = new Set((await apiEndpoints(t, key)).map((e) => e.id));
  const res = await client.post("/webhooks", fields);
  assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
  const secret = SECRET_RE.exec(res.body)?.[1];
  assert.ok(secret, "the secret is in the answer to the form");
  const added = (await apiEndpoints(t, key)).filter((e) => !before.has(e.id));
  assert.equal(added.length, 1);
  return { id: added[0]!.id, secret, page: res };
}

function assertAlert(res: LightMyRequestResponse, status: number, message: RegExp): void {
  assert.equal(res.statusCode, status, res.body.slice(0, 2000));
  assert.match(res.headers["content-type"] as string, /text\/html/);
  const alert = /role="alert">([\s\S]*?)<\/(?:div|p)>/.exec(res.body)?.[1];
  assert.ok(alert, "the page has an alert");
  assert.match(alert, message);
}

describeEachEngine(
  "dashboard webhook pages",
  (t) => {
    const receivers = receiverPool();

    it("shows an empty state and a labelled create form with every event type, only the two original ones checked", async () => {
      const { client } = await company(t);
      const res = await client.get("/webhooks");
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /No webhook endpoints yet/);
      assert.match(res.body, /<label for="endpoint-url">/);
      assert.match(res.body, /<input id="endpoint-url" name="url"/);
      assert.match(res.body, /<label for="endpoint-description">/);
      assert.match(res.body, /<input type="checkbox" name="events" value="customer.created" checked>/);
      assert.match(res.body, /<input type="checkbox" name="events" value="contract.created" checked>/);
      // Invoice and credit note events are opt-in: offered, not checked.
      for (const type of [
        "invoice.issued",
        "invoice.paid",
        "invoice.voided",
        "invoice.payment_recorded",
        "credit_note.created",
      ])
        assert.match(res.body, new RegExp(`<input type="checkbox" name="events" value="${type.replace(".", "\\.")}">`));
      assert.match(res.body, /none checked: customer\.created and contract\.created; invoice events are opt-in/);
    });

    it("adds an endpoint and shows its signing secret once, in the answer to the form and never on a later page", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      const { id, secret, page } = await addEndpoint(t, client, key, {
        url: receiver.url,
        description: "<b>Ops</b> & co",
        events: ["customer.created"],
      });
      assert.match(secret, /^whsec_/);
      assert.match(page.body, /data-copy="endpoint-secret"/);
      assert.match(page.body, new RegExp(`href="/webhooks/${id}"`));
      assert.match(page.body, /shown only once/);

      const stored = await apiEndpoint(t, key, id);
      assert.equal(stored.statusCode, 200);
      assert.deepEqual(
        {
          url: stored.json().url,
          description: stored.json().description,
          events: stored.json().events,
          status: stored.json().status,
        },
        { url: receiver.url, description: "<b>Ops</b> & co", events: ["customer.created"], status: "enabled" },
      );

      const list = await client.get("/webhooks");
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /&lt;b&gt;Ops&lt;\/b&gt; &amp; co/);
      assert.doesNotMatch(list.body, /<b>Ops<\/b>/);
      assert.match(list.body, /class="badge ok">enabled</);
      assert.doesNotMatch(list.body, /endpoint-secret/);
      assert.ok(!list.body.includes(secret), "the list does not show the secret");
      const detail = await client.get(`/webhooks/${id}`);
      assert.equal(detail.statusCode, 200);
      assert.ok(!detail.body.includes(secret), "the endpoint page does not show the secret");

      // The secret shown is the one deliveries are signed with.
      const sent = await client.post(`/webhooks/${id}/test`, { type: "customer.created" });
      assert.equal(sent.statusCode, 303);
      assert.equal(receiver.requests.length, 1);
      assertSigned(receiver.requests[0]!, secret);
    });

    it("subscribes an endpoint to customer.created and contract.created only when no event type is checked", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/all" });
      assert.deepEqual((await apiEndpoint(t, key, id)).json().events.sort(), ["contract.created", "customer.created"]);
    });

    it("subscribes an endpoint to the invoice events checked, shows them checked on its edit form, and offers them as test events", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, {
        url: "https://8.8.8.8/invoices",
        events: ["invoice.issued", "invoice.paid"],
      });
      assert.deepEqual((await apiEndpoint(t, key, id)).json().events, ["invoice.issued", "invoice.paid"]);
      const page = await client.get(`/webhooks/${id}`);
      assert.equal(page.statusCode, 200);
      const edit = page.body.slice(page.body.indexOf('id="edit-endpoint"'));
      assert.match(edit, /value="invoice\.issued" checked>/);
      assert.match(edit, /value="invoice\.paid" checked>/);
      for (const type of ["customer.created", "contract.created", "invoice.voided"])
        assert.match(edit, new RegExp(`value="${type.replace(".", "\\.")}">`), `${type} unchecked`);
      for (const type of ["invoice.issued", "invoice.payment_recorded", "credit_note.created"])
        assert.match(
          page.body,
          new RegExp(`<option value="${type.replace(".", "\\.")}"`),
          `${type} offered as a test event`,
        );
    });

    it("refuses an unknown event type, a missing URL or a long description with a 400 page that says so beside the field, keeps the values, and stores nothing", async () => {
      const { client, key } = await company(t);
      const unknown = await client.post("/webhooks", {
        url: "https://8.8.8.8/hook",
        description: "kept <i>",
        events: ["invoice.created"],
      });
      assertAlert(unknown, 400, /needs your attention/);
      assert.equal(fieldErrorOf(unknown.body, "endpoint-events"), CHOOSE_EVENT);
      assert.equal(fieldErrorOf(unknown.body, "endpoint-url"), undefined);
      assert.match(unknown.body, /value="https:\/\/8\.8\.8\.8\/hook"/);
      assert.match(unknown.body, /value="kept &lt;i&gt;"/);
      assert.doesNotMatch(unknown.body, /endpoint-secret/);
      const missing = await client.post("/webhooks", { url: "", events: ["customer.created"] });
      assert.equal(missing.statusCode, 400);
      assert.equal(alertOf(missing.body), ONE_FIELD);
      assert.equal(fieldErrorOf(missing.body, "endpoint-url"), "This field is required.");
      assert.match(missing.body, /value="customer.created" checked/);
      const long = await client.post("/webhooks", { url: "https://8.8.8.8/hook", description: "d".repeat(501) });
      assert.equal(long.statusCode, 400);
      assert.equal(fieldErrorOf(long.body, "endpoint-description"), "Too long: at most 500 characters.");
      assert.deepEqual(await apiEndpoints(t, key), []);
    });

    it("edits the URL, description, event types and status, and the API shows the change", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/old", description: "before" });
      const form = await client.get(`/webhooks/${id}`);
      assert.match(form.body, /<label for="edit-url">/);
      assert.match(form.body, /value="https:\/\/8\.8\.8\.8\/old"/);

      const saved = await client.post(`/webhooks/${id}`, {
        url: "https://8.8.4.4/new",
        description: "",
        events: ["contract.created"],
        enabled: "false",
      });
      assert.equal(saved.statusCode, 303);
      assert.equal(saved.headers.location, `/webhooks/${id}?done=updated`);
      const stored = (await apiEndpoint(t, key, id)).json();
      assert.deepEqual(
        { url: stored.url, description: stored.description, events: stored.events, status: stored.status },
        { url: "https://8.8.4.4/new", description: null, events: ["contract.created"], status: "disabled" },
      );
      const after = await client.get(saved.headers.location as string);
      assert.equal(after.statusCode, 200);
      assert.match(after.body, /role="status">Endpoint saved\./);
      assert.match(after.body, /class="badge bad">disabled</);
      assert.match(after.body, /value="false" checked/);
    });

    it("refuses an edit with an unknown event type with a 400 page and changes nothing", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/keep", events: ["customer.created"] });
      const res = await client.post(`/webhooks/${id}`, {
        url: "https://8.8.8.8/changed",
        events: ["nope.happened"],
        enabled: "true",
      });
      assertAlert(res, 400, /needs your attention/);
      assert.equal(fieldErrorOf(res.body, "edit-events"), CHOOSE_EVENT);
      assert.match(res.body, /value="https:\/\/8\.8\.8\.8\/changed"/);
      const stored = (await apiEndpoint(t, key, id)).json();
      assert.equal(stored.url, "https://8.8.8.8/keep");
      assert.deepEqual(stored.events, ["customer.created"]);
    });

    it("shows no alert for a ?done= naming what every object inherits", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/proto" });
      for (const path of ["/webhooks", `/webhooks/${id}`]) {
        for (const done of ["constructor", "__proto__", "toString"]) {
          const res = await client.get(`${path}?done=${done}`);
          assert.equal(res.statusCode, 200, `${path}?done=${done}`);
          assert.doesNotMatch(res.body, /class="alert/, `${path}?done=${done}`);
        }
      }
    });

    it("disables and enables an endpoint with one button each", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/toggle" });
      const page = await client.get(`/webhooks/${id}`);
      assert.match(page.body, />Disable endpoint</);
      const off = await client.post(`/webhooks/${id}/status`, { enabled: "false" });
      assert.equal(off.statusCode, 303);
      assert.equal(off.headers.location, `/webhooks/${id}?done=disabled`);
      assert.equal((await apiEndpoint(t, key, id)).json().status, "disabled");
      const offPage = await client.get(off.headers.location as string);
      assert.match(offPage.body, /Endpoint disabled/);
      assert.match(offPage.body, />Enable endpoint</);
      const on = await client.post(`/webhooks/${id}/status`, { enabled: "true" });
      assert.equal(on.headers.location, `/webhooks/${id}?done=enabled`);
      assert.equal((await apiEndpoint(t, key, id)).json().status, "enabled");
    });

    it("sends a test event, shows the receiver's answer as a message, and lists it as a test delivery", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      const { id } = await addEndpoint(t, client, key, { url: receiver.url });
      const empty = await client.get(`/webhooks/${id}`);
      assert.match(empty.body, /No deliveries yet/);
      assert.match(empty.body, /<label for="test-type">Event type<\/label><select id="test-type" name="type">/);

      const sent = await client.post(`/webhooks/${id}/test`, { type: "contract.created" });
      assert.equal(sent.statusCode, 303);
      assert.match(sent.headers.location as string, new RegExp(`^/webhooks/${id}\\?done=test&delivery=[0-9a-f-]{36}$`));
      assert.equal(receiver.requests.length, 1);
      assert.equal(JSON.parse(receiver.requests[0]!.body).test, true);
      const page = await client.get(sent.headers.location as string);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /role="status">Test event: the receiver answered 200\./);
      assert.match(page.body, /<caption class="visually-hidden">Recent deliveries to /);
      assert.match(page.body, /<code>contract\.created<\/code>/);
      assert.match(page.body, /class="badge">test</);
      assert.match(page.body, /class="badge ok">succeeded</);
      const [delivery] = await listDeliveries(t(), key, id);
      assert.equal(delivery!.test, true);
      assert.match(page.body, new RegExp(`href="/webhooks/${id}/deliveries/${delivery!.id}"`));
    });

    it("shows a test event the receiver refused as an alert with its answer", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      receiver.answerWith(500);
      const { id } = await addEndpoint(t, client, key, { url: receiver.url });
      const sent = await client.post(`/webhooks/${id}/test`, { type: "customer.created" });
      assert.equal(sent.statusCode, 303);
      const page = await client.get(sent.headers.location as string);
      assertAlert(page, 200, /did not accept it: receiver answered 500/);
      assert.match(page.body, /class="badge bad">failed</);
      assert.match(page.body, /HTTP 500/);
    });

    it("refuses a test event to a disabled endpoint with a 409 page and sends nothing", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      const { id } = await addEndpoint(t, client, key, { url: receiver.url });
      await client.post(`/webhooks/${id}/status`, { enabled: "false" });
      const res = await client.post(`/webhooks/${id}/test`, { type: "customer.created" });
      assertAlert(res, 409, /disabled/);
      assert.equal(receiver.requests.length, 0);
      assert.deepEqual(await listDeliveries(t(), key, id), []);
    });

    it("refuses a test event of an unknown or missing type with a 400 page that says so beside the event type", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/t" });
      const res = await client.post(`/webhooks/${id}/test`, { type: "invoice.created" });
      assertAlert(res, 400, /needs your attention/);
      assert.equal(fieldErrorOf(res.body, "test-type"), CHOOSE_EVENT);
      const missing = await client.post(`/webhooks/${id}/test`, {});
      assert.equal(missing.statusCode, 400);
      assert.equal(fieldErrorOf(missing.body, "test-type"), CHOOSE_EVENT);
      assert.equal(fieldErrorOf(missing.body, "edit-url"), undefined, "the edit form is not blamed");
      assert.deepEqual(await listDeliveries(t(), key, id), []);
    });

    it("shows a delivery's payload escaped with its attempts, and resends the same event", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      const { id } = await addEndpoint(t, client, key, { url: receiver.url, events: ["customer.created"] });
      const customer = await createCustomer(t(), key, { name: "<script>alert(1)</script> & Sons" });
      await t().app.worker.drain();
      assert.equal(receiver.requests.length, 1);
      const [delivery] = await listDeliveries(t(), key, id);
      assert.equal(delivery!.status, "succeeded");

      const page = await client.get(`/webhooks/${id}/deliveries/${delivery!.id}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<pre class="payload" id="delivery-payload"/);
      assert.match(page.body, /&quot;name&quot;: &quot;&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; Sons&quot;/);
      assert.doesNotMatch(page.body, /<script>alert/);
      assert.ok(page.body.includes(customer.id), "the payload names the customer");
      assert.ok(page.body.includes(delivery!.event_id));
      assert.match(page.body, /<dt>Attempts<\/dt><dd>1<\/dd>/);
      assert.match(page.body, /HTTP 200/);
      assert.match(page.body, /class="badge ok">succeeded</);

      receiver.answerWith(503);
      const resent = await client.post(`/webhooks/${id}/deliveries/${delivery!.id}/resend`);
      assert.equal(resent.statusCode, 303);
      assert.equal(resent.headers.location, `/webhooks/${id}/deliveries/${delivery!.id}?done=resent`);
      assert.equal(receiver.requests.length, 2);
      assert.equal(JSON.parse(receiver.requests[1]!.body).id, delivery!.event_id, "the same event id");
      const after = await client.get(resent.headers.location as string);
      assertAlert(after, 200, /Event sent again, but the receiver did not accept it: receiver answered 503/);
      assert.match(after.body, /<dt>Attempts<\/dt><dd>2<\/dd>/);
      const [again] = await listDeliveries(t(), key, id);
      assert.deepEqual(
        { attempts: again!.attempts, status: again!.status, code: again!.last_status_code },
        { attempts: 2, status: "failed", code: 503 },
      );

      receiver.answerWith(200);
      const ok = await client.post(`/webhooks/${id}/deliveries/${delivery!.id}/resend`);
      const okPage = await client.get(ok.headers.location as string);
      assert.match(okPage.body, /role="status">Event sent again: the receiver answered 200\./);
    });

    it("asks before rotating the secret, then shows the new secret once and signs with it", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      const { id, secret: old } = await addEndpoint(t, client, key, { url: receiver.url });
      const confirm = await client.get(`/webhooks/${id}/rotate`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/webhooks/${id}/rotate"`));
      assert.match(confirm.body, />Cancel</);
      assert.match(confirm.body, /stops signing at once/);

      const rotated = await client.post(`/webhooks/${id}/rotate`);
      assert.equal(rotated.statusCode, 200);
      const secret = SECRET_RE.exec(rotated.body)?.[1];
      assert.ok(secret);
      assert.notEqual(secret, old);
      assert.match(rotated.body, /data-copy="endpoint-secret"/);
      const later = await client.get(`/webhooks/${id}`);
      assert.ok(!later.body.includes(secret), "a later page does not show the secret");

      await client.post(`/webhooks/${id}/test`, { type: "customer.created" });
      assertSigned(receiver.requests[0]!, secret);
      assertNotSignedWith(receiver.requests[0]!, old);
    });

    it("asks before deleting an endpoint, then deletes it", async () => {
      const { client, key } = await company(t);
      const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/gone", description: "to delete" });
      const confirm = await client.get(`/webhooks/${id}/delete`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/webhooks/${id}/delete"`));
      assert.match(confirm.body, /cannot be undone/);
      assert.equal((await apiEndpoint(t, key, id)).statusCode, 200, "the confirmation page deletes nothing");

      const deleted = await client.post(`/webhooks/${id}/delete`);
      assert.equal(deleted.statusCode, 303);
      assert.equal(deleted.headers.location, "/webhooks?done=deleted");
      assert.equal((await apiEndpoint(t, key, id)).statusCode, 404);
      const list = await client.get(deleted.headers.location as string);
      assert.match(list.body, /role="status">Endpoint deleted\./);
      assert.match(list.body, /No webhook endpoints yet/);
    });

    it("answers another company's endpoint and delivery ids with 404 pages, and its forms change nothing", async () => {
      const a = await company(t);
      const b = await company(t);
      const receiver = await receivers.start();
      const { id } = await addEndpoint(t, a.client, a.key, { url: receiver.url, description: "A's endpoint" });
      await a.client.post(`/webhooks/${id}/test`, { type: "customer.created" });
      const [delivery] = await listDeliveries(t(), a.key, id);
      const own = await addEndpoint(t, b.client, b.key, { url: "https://8.8.8.8/b" });

      for (const path of [
        `/webhooks/${id}`,
        `/webhooks/${id}/rotate`,
        `/webhooks/${id}/delete`,
        `/webhooks/${id}/deliveries/${delivery!.id}`,
        `/webhooks/${own.id}/deliveries/${delivery!.id}`,
        "/webhooks/not-a-uuid",
        `/webhooks/${own.id}/deliveries/not-a-uuid`,
      ]) {
        const res = await b.client.get(path);
        assert.equal(res.statusCode, 404, path);
        assert.match(res.body, /role="alert"/, path);
        assert.doesNotMatch(res.body, /A&#39;s endpoint/, path);
      }
      const posts: [string, Record<string, string>][] = [
        [`/webhooks/${id}`, { url: "https://8.8.4.4/taken", enabled: "false" }],
        [`/webhooks/${id}/status`, { enabled: "false" }],
        [`/webhooks/${id}/rotate`, {}],
        [`/webhooks/${id}/test`, { type: "customer.created" }],
        [`/webhooks/${id}/deliveries/${delivery!.id}/resend`, {}],
        [`/webhooks/${own.id}/deliveries/${delivery!.id}/resend`, {}],
        [`/webhooks/${id}/delete`, {}],
      ];
      for (const [path, fields] of posts) {
        const res = await b.client.post(path, fields);
        assert.equal(res.statusCode, 404, path);
        assert.doesNotMatch(res.body, /endpoint-secret/, path);
      }
      const stored = (await apiEndpoint(t, a.key, id)).json();
      assert.deepEqual({ url: stored.url, status: stored.status }, { url: receiver.url, status: "enabled" });
      assert.equal(receiver.requests.length, 1, "nothing more was sent to A's receiver");
      assert.equal((await listDeliveries(t(), a.key, id))[0]!.attempts, 1);
      const list = await b.client.get("/webhooks");
      assert.doesNotMatch(list.body, /A&#39;s endpoint/);
    });

    it("refuses every webhook form posted without the CSRF token with 403, changing nothing", async () => {
      const { client, key } = await company(t);
      const receiver = await receivers.start();
      const { id } = await addEndpoint(t, client, key, { url: receiver.url });
      const posts: [string, Record<string, string>][] = [
        ["/webhooks", { url: "https://8.8.8.8/csrf" }],
        [`/webhooks/${id}`, { url: "https://8.8.4.4/csrf", enabled: "false" }],
        [`/webhooks/${id}/status`, { enabled: "false" }],
        [`/webhooks/${id}/rotate`, {}],
        [`/webhooks/${id}/test`, { type: "customer.created" }],
        [`/webhooks/${id}/delete`, {}],
      ];
      for (const [path, fields] of posts) {
        const res = await client.post(path, fields, { csrf: null });
        assert.equal(res.statusCode, 403, path);
        assert.doesNotMatch(res.body, /endpoint-secret/, path);
        const forged = await client.post(path, { ...fields, _csrf: "forged-token-value" });
        assert.equal(forged.statusCode, 403, path);
      }
      const endpoints = await apiEndpoints(t, key);
      assert.equal(endpoints.length, 1);
      assert.deepEqual(
        { url: endpoints[0]!.url, status: endpoints[0]!.status },
        { url: receiver.url, status: "enabled" },
      );
      assert.equal(receiver.requests.length, 0);
    });

    it("sends a signed-out browser from the webhook pages to the login page", async () => {
      const { client } = await company(t);
      client.cookies.clear();
      const res = await client.get("/webhooks");
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, "/login?next=%2Fwebhooks");
    });
  },
  // Local receivers on 127.0.0.1; the clock is real time because receivers' verifiers check the signature's age.
  { env: { BILLING_WEBHOOK_ALLOW_PRIVATE: "true" }, clockStart: new Date() },
);

describeEachEngine("dashboard webhook pages under the production address policy", (t) => {
  it("refuses an http:// URL and a private address with a 400 page that says why beside the URL, and stores nothing", async () => {
    const { client, key } = await company(t);
    const http = await client.post("/webhooks", { url: "http://8.8.8.8/hook", events: ["customer.created"] });
    assertAlert(http, 400, /needs your attention/);
    assert.equal(fieldErrorOf(http.body, "endpoint-url"), `Use an address that starts with https://. ${ALLOW_LOCAL}`);
    assert.match(http.body, /value="http:\/\/8\.8\.8\.8\/hook"/);
    assert.match(http.body, /value="customer.created" checked/);
    const loopback = await client.post("/webhooks", { url: "https://127.0.0.1/hook" });
    assert.equal(loopback.statusCode, 400);
    assert.equal(fieldErrorOf(loopback.body, "endpoint-url"), NOT_PUBLIC("127.0.0.1"));
    const metadata = await client.post("/webhooks", { url: "https://169.254.169.254/latest/meta-data/" });
    assert.equal(metadata.statusCode, 400);
    assert.equal(fieldErrorOf(metadata.body, "endpoint-url"), NOT_PUBLIC("169.254.169.254"));
    assert.deepEqual(await apiEndpoints(t, key), []);
  });

  it("says in plain words beside the URL why any other address is refused", async () => {
    const { client, key } = await company(t);
    const cases: [string, string][] = [
      [
        "https://user:secret@8.8.8.8/hook",
        "Remove the user name and password from the address; your receiver checks each delivery's signature instead.",
      ],
      ["https://8.8.8.8/a b", "Remove the spaces (or other invisible characters) from the address."],
      ["nonsense", "Enter a full address such as https://example.com/webhooks."],
      ["https://8.8.8.8:0/hook", "Use a port between 1 and 65535, or leave the port out."],
      [
        "https://localhost/hook",
        `This host name leads to a private or reserved address: use one on the public internet, where our servers can reach it. ${ALLOW_LOCAL}`,
      ],
      ["ftp://8.8.8.8/hook", "Use an address that starts with https://."],
      // .invalid never resolves (RFC 6761).
      [
        "https://no-such-host.invalid/hook",
        "No server was found under this host name: check the spelling of the address.",
      ],
      [`https://8.8.8.8/${"a".repeat(2048)}`, "Too long: at most 2048 characters."],
    ];
    for (const [url, message] of cases) {
      const res = await client.post("/webhooks", { url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(alertOf(res.body), ONE_FIELD, url);
      assert.equal(fieldErrorOf(res.body, "endpoint-url"), message, url);
    }
    assert.deepEqual(await apiEndpoints(t, key), []);
  });

  it("refuses an edit to a private address with a 400 page that says why beside the URL, and keeps the old URL", async () => {
    const { client, key } = await company(t);
    const { id } = await addEndpoint(t, client, key, { url: "https://8.8.8.8/public" });
    const res = await client.post(`/webhooks/${id}`, { url: "https://10.0.0.1/inside", enabled: "true" });
    assertAlert(res, 400, /needs your attention/);
    assert.equal(fieldErrorOf(res.body, "edit-url"), NOT_PUBLIC("10.0.0.1"));
    assert.match(res.body, /id="edit-url"[^>]*value="https:\/\/10\.0\.0\.1\/inside"/);
    assert.equal((await apiEndpoint(t, key, id)).json().url, "https://8.8.8.8/public");
  });
});
