/**
 * SSRF refusals (docs/decisions.md, "Webhooks"; docs/webhooks.md, "Register an endpoint") with the production setting:
 * BILLING_WEBHOOK_ALLOW_PRIVATE is NOT set in this suite. IP-literal URLs are used so that no answer
 * depends on an outside DNS server; `localhost` resolves from the hosts file.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { createCustomer, createEndpoint, deliveryAbout, ENDPOINTS } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { receiverPool } from "../support/webhook-receiver.js";

const REFUSED: [string, string][] = [
  ["loopback", "https://127.0.0.1/"],
  ["loopback, elsewhere in 127/8", "https://127.8.9.10/hook"],
  ["loopback written as one number", "https://2130706433/"],
  ["loopback written in hex", "https://0x7f.0.0.1/"],
  ["private 10/8", "https://10.0.0.1/"],
  ["private 172.16/12", "https://172.16.5.4/"],
  ["private 192.168/16", "https://192.168.1.1/"],
  ["link-local", "https://169.254.10.20/"],
  ["cloud metadata", "https://169.254.169.254/latest/meta-data/"],
  ["Alibaba metadata", "https://100.100.100.200/"],
  ["CGNAT", "https://100.64.0.1/"],
  ["unspecified", "https://0.0.0.0/"],
  ["multicast", "https://224.0.0.1/"],
  ["broadcast", "https://255.255.255.255/"],
  ["IPv6 loopback", "https://[::1]/"],
  ["IPv6 unspecified", "https://[::]/"],
  ["IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/"],
  ["IPv4-mapped private", "https://[::ffff:10.0.0.1]/"],
  ["IPv4-mapped metadata, hex form", "https://[::ffff:a9fe:a9fe]/"],
  ["IPv6 link-local", "https://[fe80::1]/"],
  ["IPv6 unique-local", "https://[fd00::1]/"],
  ["AWS IPv6 metadata", "https://[fd00:ec2::254]/"],
  ["NAT64 of loopback", "https://[64:ff9b::127.0.0.1]/"],
  ["6to4 of private", "https://[2002:0a00:0001::1]/"],
  ["localhost by name", "https://localhost/"],
  ["plain http", "http://example.com/"],
  ["plain http to a public address", "http://8.8.8.8/"],
  ["another scheme", "ftp://8.8.8.8/"],
  ["credentials in the URL", "https://user:secret@8.8.8.8/"],
];

describeEachEngine("webhook endpoint SSRF refusals", (t) => {
  const receivers = receiverPool();

  it("create refuses every non-public or non-https URL with 400 invalid_url", async () => {
    const { key } = await t().newCompany();
    for (const [what, url] of REFUSED) {
      const res = await t().call({ method: "POST", url: ENDPOINTS, key, payload: { url } });
      assert.equal(res.statusCode, 400, `${what} (${url}): ${res.body}`);
      const body = expectError(res, 400, "invalid_url");
      assert.equal(body.details?.[0]?.path, "url", what);
    }
    const list = await t().call({ method: "GET", url: ENDPOINTS, key });
    assert.deepEqual(list.json().data, [], "nothing was created");
  });

  it("names BILLING_WEBHOOK_ALLOW_PRIVATE in the error of every refusal that setting would lift, and only there", async () => {
    const { key } = await t().newCompany();
    // The refusals that stand whatever the setting: another scheme, credentials in the URL.
    const standing = new Set(["another scheme", "credentials in the URL"]);
    for (const [what, url] of REFUSED) {
      const body = expectError(
        await t().call({ method: "POST", url: ENDPOINTS, key, payload: { url } }),
        400,
        "invalid_url",
      );
      if (standing.has(what)) {
        assert.doesNotMatch(body.error, /BILLING_WEBHOOK_ALLOW_PRIVATE/, what);
      } else {
        assert.match(
          body.error,
          /\. For local development, whoever runs this billing service can allow http:\/\/ and private addresses by starting it with BILLING_WEBHOOK_ALLOW_PRIVATE=true \(never in production/,
          what,
        );
      }
    }
    const unknownHost = expectError(
      await t().call({ method: "POST", url: ENDPOINTS, key, payload: { url: "https://no-such-host.invalid/" } }),
      400,
      "invalid_url",
    );
    assert.doesNotMatch(
      unknownHost.error,
      /BILLING_WEBHOOK_ALLOW_PRIVATE/,
      "a host that does not resolve is no local address",
    );
  });

  it("create accepts an https URL on a public address", async () => {
    const { key } = await t().newCompany();
    for (const url of ["https://8.8.8.8/hook", "https://[2001:4860:4860::8888]/hook", "https://1.1.1.1:8443/x?y=1"]) {
      const endpoint = await createEndpoint(t(), key, { url });
      assert.equal(endpoint.url, url);
    }
  });

  it("PATCH refuses the same URLs with 400 invalid_url and keeps the old URL", async () => {
    const { key } = await t().newCompany();
    const endpoint = await createEndpoint(t(), key, { url: "https://8.8.8.8/hook" });
    for (const [what, url] of REFUSED) {
      const res = await t().call({ method: "PATCH", url: `${ENDPOINTS}/${endpoint.id}`, key, payload: { url } });
      assert.equal(res.statusCode, 400, `${what} (${url}): ${res.body}`);
      expectError(res, 400, "invalid_url");
    }
    const got = await t().call({ method: "GET", url: `${ENDPOINTS}/${endpoint.id}`, key });
    assert.equal(got.json().url, "https://8.8.8.8/hook");
  });

  it("a refused URL in PATCH changes none of the other fields sent with it", async () => {
    const { key } = await t().newCompany();
    const endpoint = await createEndpoint(t(), key, { url: "https://8.8.8.8/hook", description: "before" });
    const res = await t().call({
      method: "PATCH",
      url: `${ENDPOINTS}/${endpoint.id}`,
      key,
      payload: { url: "https://169.254.169.254/", description: "after", enabled: false },
    });
    expectError(res, 400, "invalid_url");
    const got = (await t().call({ method: "GET", url: `${ENDPOINTS}/${endpoint.id}`, key })).json();
    assert.equal(got.description, "before");
    assert.equal(got.status, "enabled");
  });

  it("the address is checked again at delivery: a stored loopback URL is never connected to", async () => {
    // An endpoint row that holds a URL the API would refuse today (say, stored before the policy), written
    // straight to the table: the delivery must still refuse it, and the receiver behind it must see nothing.
    const { key } = await t().newCompany();
    const receiver = await receivers.start();
    const cases = [
      { url: receiver.url, error: /https/ },
      { url: `https://127.0.0.1:${receiver.port}/hook`, error: /127\.0\.0\.1 is not public/ },
      { url: `https://[::ffff:127.0.0.1]:${receiver.port}/hook`, error: /not public/ },
      { url: `https://localhost:${receiver.port}/hook`, error: /not public/ },
    ];
    for (const { url, error } of cases) {
      const endpoint = await createEndpoint(t(), key, { url: "https://8.8.8.8/hook" });
      await t().app.db.query("UPDATE webhook_endpoints SET url = $1 WHERE id = $2", [url, endpoint.id]);
      const customer = await createCustomer(t(), key);
      await t().app.worker.drain();
      const delivery = await deliveryAbout(t(), key, endpoint.id, customer.id);
      assert.equal(delivery.status, "pending", url);
      assert.equal(delivery.attempts, 1, url);
      assert.equal(delivery.last_status_code, null, url);
      assert.match(String(delivery.last_error), /^refused: /, url);
      assert.match(String(delivery.last_error), error, url);
      // Only this endpoint's event: disable it so later customers do not go to it.
      await t().call({ method: "PATCH", url: `${ENDPOINTS}/${endpoint.id}`, key, payload: { enabled: false } });
    }
    assert.equal(receiver.requests.length, 0, "the loopback receiver was never reached");
  });

  it("a test event to a stored loopback URL is refused the same way", async () => {
    const { key } = await t().newCompany();
    const receiver = await receivers.start();
    const endpoint = await createEndpoint(t(), key, { url: "https://8.8.8.8/hook" });
    await t().app.db.query("UPDATE webhook_endpoints SET url = $1 WHERE id = $2", [
      `https://127.0.0.1:${receiver.port}/hook`,
      endpoint.id,
    ]);
    const res = await t().call({
      method: "POST",
      url: `${ENDPOINTS}/${endpoint.id}/test`,
      key,
      payload: { type: "customer.created" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, "failed");
    assert.equal(res.json().status_code, null);
    assert.match(res.json().error, /^refused: .*not public/);
    assert.equal(receiver.requests.length, 0);
  });
});
