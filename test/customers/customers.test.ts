import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";

describeEachEngine("customers", (t) => {
  it("creates a customer with 201 and shows payment terms as Net n", async () => {
    const { key } = await t().newCompany();
    const res = await t().call({
      method: "POST",
      url: "/v1/billing/customers",
      key,
      payload: { name: "Globex", external_id: "cus-1", payment_terms_days: 30 },
    });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.object, "customer");
    assert.equal(body.name, "Globex");
    assert.equal(body.payment_terms, "Net 30");
    assert.equal(body.payment_terms_days, 30);
    assert.equal(body.domain, null);
    assert.equal(body.country, null);
  });

  it("answers 409 with the existing customer when external_id is taken, under concurrency too", async () => {
    const { key } = await t().newCompany();
    const attempts = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t().call({
          method: "POST",
          url: "/v1/billing/customers",
          key,
          payload: { name: `Name ${i}`, external_id: "dup" },
        }),
      ),
    );
    const created = attempts.filter((r) => r.statusCode === 201);
    const conflicts = attempts.filter((r) => r.statusCode === 409);
    assert.equal(created.length, 1);
    assert.equal(conflicts.length, 9);
    for (const conflict of conflicts) {
      assert.equal(conflict.json().customer.id, created[0]!.json().id);
      assert.equal(typeof conflict.json().error, "string");
    }
    const list = await t().call({ method: "GET", url: "/v1/billing/customers?external_id=dup", key });
    assert.equal(list.json().data.length, 1);
  });

  it("answers 401 Missing API key without a key", async () => {
    const res = await t().call({ method: "GET", url: "/v1/billing/customers" });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, "Missing API key");
  });
});
