import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { createBillingClient, decimalBig, decimalText, isDecimal } from "../../src/client/billing-client.js";
import { JsonNumber } from "../../src/platform/exact-json.js";
import { createCustomer, createSampleContract, keyWithScopes } from "../support/api.js";
import { describeEachEngine } from "../support/harness.js";
import { ensureCliBuilt, runBilling } from "../support/service-process.js";

describeEachEngine("the typed client and `billing usage send`", (t) => {
  let baseUrl: string;
  const dir = mkdtempSync(join(tmpdir(), "usage-send-"));
  before(async () => {
    baseUrl = await t().app.http.listen({ port: 0, host: "127.0.0.1" });
    ensureCliBuilt();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads contracts as the document types them, and each error's code", async () => {
    const { key, companyId } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Typed Corp" });
    const contract = await createSampleContract(t(), key, customer.id);
    const client = createBillingClient({ baseUrl, apiKey: key });

    const list = await client.GET("/v1/billing/contracts");
    assert.equal(list.response.status, 200);
    assert.deepEqual(
      list.data?.data.map((c) => c.id),
      [contract.id],
    );

    const one = await client.GET("/v1/billing/contracts/{ext_id}", {
      params: { path: { ext_id: "no-such-contract" } },
    });
    assert.equal(one.error?.code, "not_found");

    const wrongKey = await createBillingClient({ baseUrl, apiKey: "sk_wrong_0123456789" }).GET("/v1/billing/contracts");
    assert.equal(wrongKey.error?.code, "invalid_api_key");

    const usageOnly = createBillingClient({ baseUrl, apiKey: await keyWithScopes(t(), companyId, ["usage:write"]) });
    const refused = await usageOnly.GET("/v1/billing/contracts");
    assert.equal(refused.response.status, 403);
    assert.equal(refused.error?.code, "insufficient_scope");
  });

  it("sends a decimal with every digit it has", async () => {
    const { key } = await t().newCompany();
    const contract = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Exact Corp" })).id);
    const client = createBillingClient({ baseUrl, apiKey: key });
    const quantity = new JsonNumber("12345678901234.123456789012");
    const sent = await client.POST("/v1/billing/usage", {
      body: {
        events: [
          {
            external_contract_id: contract.id,
            event_id: "exact-1",
            metric: "domestic_wire",
            quantity,
            timestamp: "2026-03-20T10:00:00Z",
          },
        ],
      },
    });
    assert.equal(sent.data?.accepted, 1, JSON.stringify(sent.data ?? sent.error));
    const read = await client.GET("/v1/billing/usage/{event_id}", { params: { path: { event_id: "exact-1" } } });
    // Read back exactly too: every decimal arrives as a Decimal, its text the digits the service wrote.
    assert.ok(read.data);
    assert.equal(decimalText(read.data.quantity), "12345678901234.123456789012");
    assert.ok(isDecimal(read.data.quantity));
  });

  it("types every decimal of an answer as a Decimal, and reads each exactly", async () => {
    const { key } = await t().newCompany();
    const contract = await createSampleContract(
      t(),
      key,
      (await createCustomer(t(), key, { name: "Decimal Corp" })).id,
    );
    const client = createBillingClient({ baseUrl, apiKey: key });
    const event = (event_id: string, quantity: number | string) => ({
      external_contract_id: contract.id,
      event_id,
      metric: "domestic_wire",
      quantity,
      timestamp: "2026-03-20T10:00:00Z",
    });
    // 0.1 + 0.2 is 0.30000000000000004 in doubles; twenty digits are more than a double holds.
    const sent = await client.POST("/v1/billing/usage", {
      body: { events: [event("d-1", 0.1), event("d-2", 0.2), event("d-3", "12345678901234.123456")] },
    });
    assert.equal(sent.data?.accepted, 3, JSON.stringify(sent.data ?? sent.error));
    const list = await client.GET("/v1/billing/invoices");
    const number = list.data?.data[0]?.number;
    assert.ok(number);
    const invoice = (await client.GET("/v1/billing/invoices/{number}", { params: { path: { number } } })).data;
    assert.ok(invoice);
    const line = invoice.line_items.find((l) => l.metric === "domestic_wire");
    assert.ok(line);
    assert.equal(decimalText(line.quantity), "12345678901234.423456");
    assert.equal(decimalBig(line.quantity).minus("12345678901234.123456").toString(), "0.3");
    // The invoice's own digits, minor unit and all (a double would print 1000, not 1000.00).
    assert.match(decimalText(invoice.total), /^\d+\.\d{2}$/);
    assert.ok(
      isDecimal(invoice.subtotal) && isDecimal(invoice.tax) && isDecimal(line.amount) && isDecimal(line.unit_price),
    );
    // Every other number is a number.
    assert.equal(typeof list.data?.total_count, "number");
    const total = invoice.total;
    // @ts-expect-error a Decimal is not a number: arithmetic on it would round its digits
    void (total + 1);
    // @ts-expect-error nor has it number's methods
    void total.toFixed;
    assert.equal(`${total}`, decimalText(total), "a Decimal prints as its digits");
  });

  it("`billing usage send` posts a file's events through the client, idempotently, and says what was refused", async () => {
    const { key } = await t().newCompany();
    const contract = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "Cli Corp" })).id);
    const event = (id: string, extra = "") =>
      `{"external_contract_id":"${contract.id}","event_id":"${id}","metric":"domestic_wire","quantity":123456789.000000000001,"timestamp":"2026-03-20T10:00:00Z"${extra}}`;
    const lines = Array.from({ length: 150 }, (_, i) => event(`cli-${i}`));
    const file = join(dir, `events-${contract.id}.jsonl`);
    writeFileSync(file, `${lines.join("\n")}\n`);
    const env = { BILLING_API_KEY: key, BILLING_URL: baseUrl };

    const first = await runBilling(["usage", "send", file], env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), {
      object: "usage_send",
      sent: 150,
      accepted: 150,
      duplicates: 0,
      rejected: 0,
      rejections: [],
    });
    const again = await runBilling(["usage", "send", file], env);
    assert.equal(JSON.parse(again.stdout).duplicates, 150, "sent twice, stored once");
    const stored = await createBillingClient({ baseUrl, apiKey: key }).GET("/v1/billing/usage/{event_id}", {
      params: { path: { event_id: "cli-7" } },
    });
    assert.equal(String(stored.data?.quantity), "123456789.000000000001");

    const bad = join(dir, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify([JSON.parse(event("cli-ok")), { ...JSON.parse(event("cli-bad")), metric: "no_such_metric" }]),
    );
    const refused = await runBilling(["usage", "send", bad], env);
    assert.equal(refused.code, 1);
    const report = JSON.parse(refused.stdout);
    assert.equal(report.accepted, 1);
    assert.deepEqual(
      report.rejections.map((r: { event_id: string; code: string }) => [r.event_id, r.code]),
      [["cli-bad", "unknown_metric"]],
    );

    const wrongKey = await runBilling(["usage", "send", file], { ...env, BILLING_API_KEY: "sk_wrong_0123456789" });
    assert.equal(wrongKey.code, 1);
    assert.equal(JSON.parse(wrongKey.stderr).code, "invalid_api_key");
    const noKey = await runBilling(["usage", "send", file], { BILLING_URL: baseUrl });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /BILLING_API_KEY/);
    const nowhere = await runBilling(["usage", "send", file], { ...env, BILLING_URL: "http://127.0.0.1:9" });
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /cannot reach the service at http:\/\/127\.0\.0\.1:9/);
  });
});
