import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";

describeEachEngine("headers a security review expects", (t) => {
  it("answers every API response with nosniff, no framing, no referrer and no caching", async () => {
    const { key } = await t().newCompany();
    for (const [url, withKey] of [
      ["/v1/billing/customers", true],
      ["/v1/billing/customers", false],
      ["/nowhere", false],
      ["/healthz", false],
    ] as const) {
      const response = await t().call({ method: "GET", url, ...(withKey ? { key } : {}) });
      assert.equal(response.headers["x-content-type-options"], "nosniff", url);
      assert.equal(response.headers["x-frame-options"], "DENY", url);
      assert.equal(response.headers["referrer-policy"], "no-referrer", url);
      assert.equal(response.headers["cache-control"], "no-store", url);
      assert.ok(response.headers["request-id"], url);
      assert.equal(response.headers["strict-transport-security"], undefined, "no HSTS on a plain-HTTP deployment");
      assert.equal(response.headers["x-powered-by"], undefined);
    }
  });
});

describeEachEngine(
  "headers behind HTTPS",
  (t) => {
    it("asks browsers to keep to HTTPS for a year when the public URL is https", async () => {
      const response = await t().call({ method: "GET", url: "/healthz" });
      assert.equal(response.headers["strict-transport-security"], "max-age=31536000; includeSubDomains");
      const login = await t().call({ method: "GET", url: "/login" });
      assert.equal(login.headers["strict-transport-security"], "max-age=31536000; includeSubDomains");
      assert.match(String(login.headers["content-security-policy"]), /frame-ancestors 'none'/);
    });
  },
  { env: { BILLING_PUBLIC_URL: "https://billing.example" } },
);
