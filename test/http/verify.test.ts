import assert from "node:assert/strict";
import { it } from "node:test";
import { ADMIN_TOKEN, describeEachEngine, type TestApp } from "../support/harness.js";
import { multipart, plainPdf } from "../support/uploads.js";
import {
  MARCH,
  addRule,
  companyWithContract,
  invoiceFor,
  project,
  submitAccepted,
  usageEvent,
} from "../support/api.js";

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

  it("reports a line whose charges no longer match its events", async () => {
    const { companyId } = await busyCompany(t());
    await t().app.db.query(
      "UPDATE invoice_lines SET charge_total = charge_total + 1 WHERE company_id = $1 AND kind = 'usage' AND metric = 'domestic_wire'",
      [companyId],
    );
    const report = await verify(t(), companyId);
    assert.equal(report.ok, false);
    assert.ok(
      report.problems.some((p) => /line usage\|.* charges 41 .* events sum to 40/.test(p)),
      report.problems.join("\n"),
    );
  });

  it("cannot be handed a stored figure that is derived: the database refuses a true-up line and a rate off a usage line", async () => {
    const { companyId } = await busyCompany(t());
    const { rows } = await t().app.db.query<{ number: string }>("SELECT number FROM invoices WHERE company_id = $1", [
      companyId,
    ]);
    await assert.rejects(
      t().app.db.query(
        `INSERT INTO invoice_lines (company_id, invoice_number, line_key, kind, description, quantity, rate, charge_total, capped_total)
         VALUES ($1, $2, 'minimum', 'minimum', 'Monthly minimum', 1, NULL, 925, 0)`,
        [companyId, rows[0]!.number],
      ),
      /check constraint/,
    );
    await assert.rejects(
      t().app.db.query(
        `INSERT INTO invoice_lines (company_id, invoice_number, line_key, kind, description, quantity, rate, charge_total, capped_total)
         VALUES ($1, $2, 'fee|x', 'fee', 'x fees', 1, 0.5, 1, 0)`,
        [companyId, rows[0]!.number],
      ),
      /check constraint/,
    );
    // A usage line may go without a rate (a graduated, volume or package rule's line has none), but no other
    // kind of line may have one.
    await assert.rejects(
      t().app.db.query(
        `INSERT INTO invoice_lines (company_id, invoice_number, line_key, kind, description, quantity, rate, charge_total, capped_total)
         VALUES ($1, $2, 'subscription|x', 'subscription', 'x subscription', 1, 100, 100, 0)`,
        [companyId, rows[0]!.number],
      ),
      /invoice_lines_rate_check/,
    );
    assert.deepEqual((await verify(t(), companyId)).problems, []);
  });

  it("shows a fee line's unit price as its amount / quantity rounded once, derived from the exact sums when read", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: "6666666666.667", fee_amount: "0.01" })]);
    assert.deepEqual((await verify(t(), companyId)).problems, []);
    const fee = async () => (await invoiceFor(t(), key, contract.id)).line_items.find((l) => l.kind === "fee")!;
    // 0.01 / 6666666666.667 = 1.49999…e-12: once to 12 places, 1e-12 (rounding twice gave 2e-12).
    assert.equal((await fee()).unit_price, 1e-12);
    // A changed exact sum changes every figure read from it at once, and verify sees it disagree with the events.
    await t().app.db.query(
      "UPDATE invoice_lines SET charge_total = 0.03, quantity = 20000000000 WHERE company_id = $1 AND kind = 'fee'",
      [companyId],
    );
    assert.deepEqual([(await fee()).amount, (await fee()).unit_price], [0.03, 2e-12]);
    assert.match(
      (await verify(t(), companyId)).problems.join("\n"),
      /line fee\|domestic_wire charges 0\.03 \/ quantity 20000000000 but its events sum to 0\.01/,
    );
  });

  it("keeps the minimum true-up equal to what the lines fall short of the invoice's minimum, whatever the minimum", async () => {
    const { key, companyId, contract } = await busyCompany(t());
    // busyCompany: 2 × 20 + 1 × 30 + the capped 5.00 = 75.00 of usage against the sample's 1000.00 minimum. An
    // invoice stored before minimums kept what they count (no `minimum_terms`) counts the default charges.
    const trueUp = async () =>
      (await invoiceFor(t(), key, contract.id)).line_items.find((l) => l.kind === "minimum")?.amount ?? null;
    assert.equal(await trueUp(), 925);
    await t().app.db.query("UPDATE invoices SET minimum_amount = 75.004, minimum_terms = NULL WHERE company_id = $1", [
      companyId,
    ]);
    assert.equal(await trueUp(), null, "75.004 rounds to 75.00: reached");
    await t().app.db.query("UPDATE invoices SET minimum_amount = 75.006, minimum_terms = NULL WHERE company_id = $1", [
      companyId,
    ]);
    assert.equal(await trueUp(), 0.01);
    await t().app.db.query("UPDATE invoices SET minimum_amount = NULL, minimum_terms = NULL WHERE company_id = $1", [
      companyId,
    ]);
    assert.equal(await trueUp(), null, "no minimum kept: no true-up");
    assert.deepEqual((await verify(t(), companyId)).problems, []);
  });

  it("reports charges above a rule's monthly cap, a gap in program versions and an event on another contract's invoice", async () => {
    const { companyId, contract } = await busyCompany(t());
    await t().app.db.query("UPDATE invoice_lines SET capped_total = 9 WHERE company_id = $1 AND metric = 'card'", [
      companyId,
    ]);
    await t().app.db.query(
      "DELETE FROM pricing_program_versions WHERE company_id = $1 AND contract_id = $2 AND version = 1",
      [companyId, contract.id],
    );
    await t().app.db.query(
      "UPDATE usage_events SET contract_id = 'someone-else' WHERE company_id = $1 AND metric = 'card'",
      [companyId],
    );
    const problems = (await verify(t(), companyId)).problems.join("\n");
    assert.match(problems, /rule .* charged 9 against a monthly cap of 5/);
    assert.match(problems, new RegExp(`contract ${contract.id}: current version 2 but 1 versions stored`));
    assert.match(problems, /not the draft of someone-else/);
  });

  it("reports an event whose timestamp lies outside its service period, to the microsecond", async () => {
    const { companyId } = await busyCompany(t());
    // The last microsecond of March stays in March; one more and the stored instant is in April.
    await t().app.db.query(
      "UPDATE usage_events SET event_timestamp = '2026-03-31T23:59:59.999999Z' WHERE company_id = $1 AND metric = 'domestic_wire'",
      [companyId],
    );
    assert.deepEqual((await verify(t(), companyId)).problems, []);
    await t().app.db.query(
      "UPDATE usage_events SET event_timestamp = '2026-04-01T00:00:00Z' WHERE company_id = $1 AND metric = 'domestic_wire'",
      [companyId],
    );
    const report = await verify(t(), companyId);
    assert.equal(report.ok, false);
    assert.match(
      report.problems.join("\n"),
      /dated 2026-04-01T00:00:00.000Z, outside its service period 2026-03-01..2026-03-31/,
    );
  });

  it("reports an uploaded agreement whose bytes changed after upload", async () => {
    const { key, companyId } = await t().newCompany();
    const body = await multipart([
      { name: "file", value: await plainPdf(), filename: "signed.pdf" },
      {
        name: "terms",
        value: JSON.stringify({
          customer: { name: "Doc Corp" },
          contract_id: "doc-1",
          start_date: "2026-03-01",
          currency: "USD",
          rules: [],
        }),
      },
    ]);
    const res = await t().call({
      method: "POST",
      url: "/v1/billing/contracts/upload",
      key,
      payload: body.payload,
      headers: body.headers,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual((await verify(t(), companyId)).problems, []);
    await t().app.db.query("UPDATE contract_documents SET content = content || '\\x00'::bytea WHERE company_id = $1", [
      companyId,
    ]);
    const report = await verify(t(), companyId);
    assert.equal(report.ok, false);
    assert.match(
      report.problems.join("\n"),
      /uploaded agreement [0-9a-f-]{36} of contract doc-1: its bytes no longer match the SHA-256 taken at upload/,
    );
  });

  it("reports an event that lost its delivery to a subscribed endpoint", async () => {
    const { key, companyId } = await companyWithContract(t());
    await t().app.db.query(
      `INSERT INTO webhook_endpoints (company_id, id, url, description, events, enabled, secret, created_at, updated_at)
       VALUES ($1, gen_random_uuid(), 'https://93.184.216.34/hook', NULL, '{customer.created}', true, 'whsec_x', $2, $2)`,
      [companyId, t().clock.now()],
    );
    t().clock.advance(1000);
    const created = await t().call({
      method: "POST",
      url: "/v1/billing/customers",
      key,
      payload: { name: "Delivered Ltd" },
    });
    assert.equal(created.statusCode, 201);
    assert.equal((await verify(t(), companyId)).ok, true);
    await t().app.db.query("DELETE FROM webhook_deliveries WHERE company_id = $1", [companyId]);
    assert.match((await verify(t(), companyId)).problems.join("\n"), /no delivery to endpoint/);
  });

  it("answers the same report on GET /admin/v1/verify, for one company or all", async () => {
    const { companyId } = await busyCompany(t());
    const one = await t().call({
      method: "GET",
      url: `/admin/v1/verify?company_id=${companyId}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().ok, true);
    assert.equal(one.json().events, 4);
    const all = await t().call({
      method: "GET",
      url: "/admin/v1/verify",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(all.statusCode, 200);
    assert.equal(typeof all.json().ok, "boolean");
    const refused = await t().call({ method: "GET", url: "/admin/v1/verify" });
    assert.equal(refused.statusCode, 401);
  });
});
