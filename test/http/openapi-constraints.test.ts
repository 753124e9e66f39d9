/**
 * Rules across a body's fields, as the OpenAPI document states them and as the service enforces them, on both
 * engines: each body below is checked against the document's request schema (Ajv, JSON Schema 2020-12) and sent
 * to the service, and the two verdicts must agree (a body the document refuses is answered 400, one it allows
 * 2xx). `reminder_days` is `uniqueItems`; a credit note is `oneOf` lines or amount.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  INVOICES,
  createCustomer,
  createSampleContract,
  invoiceFor,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine } from "../support/harness.js";

const ajv = new Ajv2020({ strict: false, validateFormats: false });

interface Case {
  method: "PATCH" | "POST";
  /** The document's path, and the URL it is sent to once the world exists. */
  path: string;
  body: Record<string, unknown>;
}

describeEachEngine("cross-field rules: the document and the service agree", (t) => {
  it("refuses and takes the same bodies", async () => {
    t().clock.set(new Date("2026-03-01T08:00:00Z"));
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Rules Ltd" });
    const contract = await createSampleContract(t(), key, customer.id);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 3 })]);
    const { number } = await invoiceFor(t(), key, contract.id);
    t().clock.set(new Date("2026-04-06T09:00:00Z"));
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key }), 200);

    const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const schemaOf = (c: Case) =>
      document.paths[c.path][c.method.toLowerCase()].requestBody.content["application/json"].schema;
    const urlOf = (c: Case) => c.path.replace("{number}", number);
    const creditNotes = "/v1/billing/invoices/{number}/credit-notes";
    const cases: Case[] = [
      { method: "PATCH", path: "/v1/billing/account", body: { reminder_days: [1, 1] } },
      { method: "PATCH", path: "/v1/billing/account", body: { reminder_days: [-3, 3, -3, 7] } },
      { method: "PATCH", path: "/v1/billing/account", body: { reminder_days: [-3, 1, 7] } },
      { method: "PATCH", path: "/v1/billing/account", body: { reminder_days: [] } },
      { method: "POST", path: creditNotes, body: { reason: "neither lines nor amount" } },
      {
        method: "POST",
        path: creditNotes,
        body: { lines: [{ line: 0, amount: "1.00" }], amount: "1.00", reason: "both" },
      },
      { method: "POST", path: creditNotes, body: { amount: "1.00", reason: "an amount" } },
      { method: "POST", path: creditNotes, body: { lines: [{ line: 0, amount: "1.00" }], reason: "a line" } },
    ];
    const disagree: string[] = [];
    for (const c of cases) {
      const documentTakes = ajv.validate(schemaOf(c), c.body);
      const res = await t().call({ method: c.method, url: urlOf(c), key, payload: c.body });
      const serviceTakes = res.statusCode >= 200 && res.statusCode < 300;
      if (!serviceTakes) assert.equal(res.statusCode, 400, `${c.method} ${c.path}: ${res.body}`);
      if (documentTakes !== serviceTakes)
        disagree.push(
          `${c.method} ${c.path} ${JSON.stringify(c.body)}: the document ${documentTakes ? "takes" : "refuses"} it, the service answers ${res.statusCode}`,
        );
    }
    assert.deepEqual(disagree, []);
  });
});
