import assert from "node:assert/strict";
import { it } from "node:test";
import { ADMIN_TOKEN, describeEachEngine, type TestApp } from "../support/harness.js";
import { MARCH, addRule, companyWithContract, project, submitAccepted, usageEvent } from "../support/api.js";

/** A company with usage on two lines, a projected minimum and a capped rule. */
async function busyCompany(t: TestApp) {
  const { key, companyId, contract } = await companyWithContract(t);
  await addRule(t, key, contract.id, { type: "usage", metric: "card", rate: "0.1", monthly_cap: "5.00" });
  await submitAccepted(t, key, [
    usageEvent(contract.id, { metric: "domestic_wire", quantity: 2, timestamp: MARCH }),
    usageEvent(contract.id, { metric: "international_wire", quantity: 1, timestamp: MARCH }),
    usageEvent(contract.id, { metric: "card", quantity: 40, timestamp: MARCH }),
    usageEvent(contract.id, { metric: "card", quantity: 40, timestamp: MARCH }),
  ]);
  await project(t, key, contract.id);
  return { key, companyId, contract };
}

const verify = async (t: TestApp, companyId: string) => t.app.services.invariants.verify(companyId);

describeEachEngine("billing verify", (t) => {
  it("finds nothing wrong with data the service wrote", async () => {
    const { companyId } = await busyCompany(t());
    const report = await verify(t(), companyId);
    assert.deepEqual(report.problems, []);
    assert.equal(report.ok, true);
    assert.equal(report.events, 4);
  });

  it("reports a line whose charges no longer match its events, and an invoice whose total does not match its lines", async () => {
    const { companyId } = await busyCompany(t());
    await t().app.db.query(
      "UPDATE invoice_lines SET charge_total = charge_total + 1, amount = amount + 1 WHERE company_id = $1 AND kind = 'usage' AND metric = 'domestic_wire'",
      [companyId],
    );
    const report = await verify(t(), companyId);
    assert.equal(report.ok, false);
    assert.ok(report.problems.some((p) => /line usage\|.* charges 41 .* events sum to 40/.test(p)), report.problems.join("\n"));
    assert.ok(report.problems.some((p) => /subtotal .* but its lines sum to/.test(p)), report.problems.join("\n"));
  });

  it("reports a line amount that is not the half-even rounding of its charges", async () => {
    const { companyId } = await busyCompany(t());
    await t().app.db.query("UPDATE invoice_lines SET amount = amount + 0.01 WHERE company_id = $1 AND metric = 'international_wire'", [companyId]);
    const report = await verify(t(), companyId);
    assert.ok(report.problems.some((p) => /amount 30\.01, expected 30\.00/.test(p)), report.problems.join("\n"));
  });

  it("reports a fee line whose unit price is not its amount / quantity, rounded once", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: "6666666666.667", fee_amount: "0.01" })]);
    assert.deepEqual((await verify(t(), companyId)).problems, []);
    // What rounding twice gave (1.5e-12 at 24 places, then 2e-12 at 12).
    await t().app.db.query("UPDATE invoice_lines SET unit_price = 0.000000000002 WHERE company_id = $1 AND kind = 'fee'", [companyId]);
    assert.match((await verify(t(), companyId)).problems.join("\n"), /fee line .* unit price 0\.000000000002, expected 0\.000000000001/);
  });

  it("reports a minimum true-up line that is not what the other lines fall short of the minimum", async () => {
    const { companyId } = await busyCompany(t());
    // busyCompany: 2 × 20 + 1 × 30 + the capped 5.00 = 75.00 of usage against the sample's 1000.00 minimum.
    const { rows } = await t().app.db.query<{ right: boolean }>("SELECT amount = 925 AS right FROM invoice_lines WHERE company_id = $1 AND kind = 'minimum'", [companyId]);
    assert.deepEqual(rows, [{ right: true }]);
    await t().app.db.query("UPDATE invoice_lines SET amount = 900, charge_total = 900, unit_price = 900 WHERE company_id = $1 AND kind = 'minimum'", [companyId]);
    assert.match((await verify(t(), companyId)).problems.join("\n"), /minimum line 900, expected 925\.00/);
    await t().app.db.query("DELETE FROM invoice_lines WHERE company_id = $1 AND kind = 'minimum'", [companyId]);
    assert.match((await verify(t(), companyId)).problems.join("\n"), /minimum line missing, expected 925\.00/);
    await t().app.db.query("UPDATE invoices SET minimum_amount = NULL WHERE company_id = $1", [companyId]);
    assert.doesNotMatch((await verify(t(), companyId)).problems.join("\n"), /minimum line/, "no minimum kept: no true-up expected");
  });

  it("reports charges above a rule's monthly cap, a gap in program versions and an event on another contract's invoice", async () => {
    const { companyId, contract } = await busyCompany(t());
    await t().app.db.query("UPDATE invoice_lines SET capped_total = 9 WHERE company_id = $1 AND metric = 'card'", [companyId]);
    await t().app.db.query("DELETE FROM pricing_program_versions WHERE company_id = $1 AND contract_id = $2 AND version = 1", [
      companyId,
      contract.id,
    ]);
    await t().app.db.query("UPDATE usage_events SET contract_id = 'someone-else' WHERE company_id = $1 AND metric = 'card'", [companyId]);
    const problems = (await verify(t(), companyId)).problems.join("\n");
    assert.match(problems, /rule .* charged 9 against a monthly cap of 5/);
    assert.match(problems, new RegExp(`contract ${contract.id}: current version 2 but 1 versions stored`));
    assert.match(problems, /not the draft of someone-else/);
  });

  it("reports an event that lost its delivery to a subscribed endpoint", async () => {
    const { key, companyId } = await companyWithContract(t());
    await t().app.db.query(
      `INSERT INTO webhook_endpoints (company_id, id, url, description, events, enabled, secret, created_at, updated_at)
       VALUES ($1, gen_random_uuid(), 'https://93.184.216.34/hook', NULL, '{customer.created}', true, 'whsec_x', $2, $2)`,
      [companyId, t().clock.now()],
    );
    t().clock.advance(1000);
    const created = await t().call({ method: "POST", url: "/v1/billing/customers", key, payload: { name: "Delivered Ltd" } });
    assert.equal(created.statusCode, 201);
    assert.equal((await verify(t(), companyId)).ok, true);
    await t().app.db.query("DELETE FROM webhook_deliveries WHERE company_id = $1", [companyId]);
    assert.match((await verify(t(), companyId)).problems.join("\n"), /no delivery to endpoint/);
  });

  it("answers the same report on GET /admin/v1/verify, for one company or all", async () => {
    const { companyId } = await busyCompany(t());
    const one = await t().call({ method: "GET", url: `/admin/v1/verify?company_id=${companyId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().ok, true);
    assert.equal(one.json().events, 4);
    const all = await t().call({ method: "GET", url: "/admin/v1/verify", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(all.statusCode, 200);
    assert.equal(typeof all.json().ok, "boolean");
    const refused = await t().call({ method: "GET", url: "/admin/v1/verify" });
    assert.equal(refused.statusCode, 401);
  });
});
