/**
 * A limit for every size (docs/api.md, "Limits"): the largest of each that the API takes is taken, one past it is
 * refused with 400 naming the field, and the OpenAPI document states each maximum. The preview's month of events
 * is tested in test/usage/preview-limits.test.ts, the logo's size with the logo.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { MAX_AGREEMENT_PAGES } from "../../src/domain/contracts/contract-schemas.js";
import { MAX_PROGRAM_RULES, MAX_RULE_TIERS } from "../../src/domain/contracts/pricing-rule.js";
import {
  CONTRACTS,
  INVOICES,
  addRule,
  companyWithContract,
  getPricing,
  invoiceFor,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { multipart, pagesPdf, uploadTerms } from "../support/uploads.js";

const MARCH = { billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" };

/** `count` graduated tiers of 10 units each, the last unbounded. */
const tiersOf = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    up_to: i === count - 1 ? null : String(10 * (i + 1)),
    unit_amount: "0.01",
  }));

const rulesUrl = (contractId: string) => `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing-rules`;
const previewUrl = (contractId: string) => `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing/preview`;

/** The `details` paths of a 400, as the API names the fields. */
function refusedFields(res: Awaited<ReturnType<TestApp["call"]>>, code: string): string[] {
  const body = expectError(res, 400, code);
  return (body.details ?? []).map((d) => d.path);
}

async function upload(t: TestApp, key: string, url: string, file: Buffer, withTerms: boolean) {
  const body = await multipart([
    { name: "file", value: file, filename: "agreement.pdf", type: "application/pdf" },
    ...(withTerms ? [{ name: "terms", value: JSON.stringify(uploadTerms()) }] : []),
  ]);
  return t.call({ method: "POST", url, key, payload: body.payload, headers: body.headers });
}

describeEachEngine("size limits", (t) => {
  it(`takes a rule of ${MAX_RULE_TIERS} tiers and prices with it; refuses ${MAX_RULE_TIERS + 1} naming tiers`, async () => {
    const { key, contract } = await companyWithContract(t());
    const most = { metric: "api_calls", model: "graduated", tiers: tiersOf(MAX_RULE_TIERS) };
    const added = await addRule(t(), key, contract.id, most);
    assert.equal(added.rule.tiers?.length, MAX_RULE_TIERS);
    // 2,505 units cross every tier into the last: 0.01 each.
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity: 2505 })]);
    const line = (await invoiceFor(t(), key, contract.id)).line_items.find((l: { description: string }) =>
      l.description.startsWith("api_calls"),
    );
    assertDecimal(line!.amount, 25.05);
    const over = { ...most, tiers: tiersOf(MAX_RULE_TIERS + 1) };
    const fields = refusedFields(
      await t().call({ method: "POST", url: rulesUrl(contract.id), key, payload: over }),
      "invalid_request",
    );
    assert.ok(
      fields.some((f) => f.includes("tiers")),
      fields.join(),
    );
    const program = (await getPricing(t(), key, contract.id)).rules;
    const preview = await t().call({
      method: "POST",
      url: previewUrl(contract.id),
      key,
      payload: { rules: [...program.filter((r) => r.metric !== "api_calls"), over], ...MARCH },
    });
    const previewFields = refusedFields(preview, "invalid_request");
    assert.ok(
      previewFields.some((f) => f.includes("tiers")),
      previewFields.join(),
    );
    assert.equal((await getPricing(t(), key, contract.id)).rules.length, program.length, "nothing written");
  });

  it(`holds ${MAX_PROGRAM_RULES} rules in a program and refuses the next, added or previewed, naming rules`, async () => {
    const { key, contract } = await companyWithContract(t());
    const have = (await getPricing(t(), key, contract.id)).rules.length;
    for (let i = have; i < MAX_PROGRAM_RULES; i++)
      await addRule(t(), key, contract.id, { metric: `m_${i}`, amount: "1" });
    const program = (await getPricing(t(), key, contract.id)).rules;
    assert.equal(program.length, MAX_PROGRAM_RULES);
    const next = await t().call({
      method: "POST",
      url: rulesUrl(contract.id),
      key,
      payload: { metric: "one_more", amount: "1" },
    });
    assert.deepEqual(refusedFields(next, "too_many_rules"), ["rules"]);
    assert.equal((await getPricing(t(), key, contract.id)).rules.length, MAX_PROGRAM_RULES, "nothing written");
    const rules = program.map((r: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)),
    );
    const previewed = await t().call({
      method: "POST",
      url: previewUrl(contract.id),
      key,
      payload: { rules: [...rules, { metric: "one_more", amount: "1" }], ...MARCH },
    });
    assert.ok(refusedFields(previewed, "invalid_request").includes("rules"));
    expectStatus(
      await t().call({ method: "POST", url: previewUrl(contract.id), key, payload: { rules, ...MARCH } }),
      200,
    );
  });

  it("refuses a credit note of more lines than it may have, and more reminder days than an account keeps, naming each", async () => {
    const { key } = await companyWithContract(t());
    const lines = Array.from({ length: 501 }, (_, i) => ({ line: i, amount: "0.01" }));
    const note = await t().call({
      method: "POST",
      url: `${INVOICES}/INV-000001/credit-notes`,
      key,
      payload: { lines, reason: "Too many lines" },
    });
    assert.ok(refusedFields(note, "invalid_request").includes("lines"));
    const days = Array.from({ length: 11 }, (_, i) => i + 1);
    const account = await t().call({
      method: "PATCH",
      url: "/v1/billing/account",
      key,
      payload: { reminder_days: days },
    });
    assert.ok(refusedFields(account, "invalid_request").includes("reminder_days"));
    const most = await t().call({
      method: "PATCH",
      url: "/v1/billing/account",
      key,
      payload: { reminder_days: days.slice(0, 10) },
    });
    expectStatus(most, 200);
  });

  it(`reads an agreement of ${MAX_AGREEMENT_PAGES} pages and refuses one of ${MAX_AGREEMENT_PAGES + 1}, uploaded or read, naming file`, async () => {
    const { key } = await companyWithContract(t());
    const over = await pagesPdf(MAX_AGREEMENT_PAGES + 1);
    for (const [url, withTerms] of [
      [`${CONTRACTS}/extract`, false],
      [`${CONTRACTS}/upload`, true],
    ] as const) {
      assert.deepEqual(
        refusedFields(await upload(t(), key, url, over, withTerms), "file_too_many_pages"),
        ["file"],
        url,
      );
    }
    expectStatus(await upload(t(), key, `${CONTRACTS}/extract`, await pagesPdf(MAX_AGREEMENT_PAGES), false), 200);
  });

  it("states every maximum in the OpenAPI document", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const text = JSON.stringify(doc);
    const schemaOf = (operationId: string) => {
      for (const path of Object.values(doc.paths) as Record<string, { operationId?: string; requestBody?: any }>[]) {
        for (const op of Object.values(path)) {
          if (op.operationId === operationId) return op.requestBody.content["application/json"].schema;
        }
      }
      throw new Error(`no operation ${operationId}`);
    };
    const resolve = (schema: any): any =>
      schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split("/").pop()]) : schema;
    const preview = resolve(schemaOf("previewContractPricing"));
    assert.equal(preview.properties.rules.maxItems, MAX_PROGRAM_RULES);
    const rule = resolve(schemaOf("addPricingRule"));
    assert.equal(resolve(rule.properties.tiers).maxItems, MAX_RULE_TIERS);
    assert.equal(resolve(schemaOf("createCreditNote")).properties.lines.maxItems, 500);
    assert.equal(resolve(schemaOf("updateAccount")).properties.reminder_days.maxItems, 10);
    assert.ok(
      text.includes(`at most ${MAX_AGREEMENT_PAGES} pages`) || text.includes(`more than ${MAX_AGREEMENT_PAGES} pages`),
    );
  });
});
