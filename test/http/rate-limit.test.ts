import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";

describeEachEngine(
  "rate limits per API key",
  (t) => {
    it("answers 429 with Retry-After once a key has used its rate, and leaves other keys alone", async () => {
      const a = await t().newCompany();
      const b = await t().newCompany();
      for (let i = 0; i < 3; i++) {
        assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers", key: a.key })).statusCode, 200);
      }
      const limited = await t().call({ method: "GET", url: "/v1/billing/customers", key: a.key });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().code, "rate_limited");
      assert.equal(typeof limited.json().error, "string");
      const retryAfter = Number(limited.headers["retry-after"]);
      assert.ok(retryAfter >= 1 && retryAfter <= 20, `Retry-After ${retryAfter}`);
      assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers", key: b.key })).statusCode, 200);
    });

    it("counts a refused write as a request and stores nothing from it", async () => {
      const a = await t().newCompany();
      for (let i = 0; i < 3; i++) {
        await t().call({ method: "POST", url: "/v1/billing/customers", key: a.key, payload: { name: `C${i}` } });
      }
      const refused = await t().call({
        method: "POST",
        url: "/v1/billing/customers",
        key: a.key,
        payload: { name: "Too many" },
      });
      assert.equal(refused.statusCode, 429);
      const { rows } = await t().app.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM customers WHERE company_id = $1",
        [a.companyId],
      );
      assert.equal(rows[0]!.n, 3);
    });

    it("checks the key before the rate: a missing key is still 401", async () => {
      assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers" })).statusCode, 401);
    });
  },
  { env: { BILLING_RATE_LIMIT: "3/m" } },
);
