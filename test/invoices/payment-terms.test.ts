/**
 * Payment terms (docs/api.md, "Payment terms"), on both engines: an issued invoice is due its issue date plus
 * the contract's terms when it has them, else its customer's, else the account's default; terms changed after
 * the invoice was issued never move its due date.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  CONTRACTS,
  INVOICES,
  createCustomer,
  createSampleContract,
  invoiceFor,
  submitAccepted,
  usageEvent,
  type Contract,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { generatedAgreement, multipart, uploadTerms } from "../support/uploads.js";

/** Contracts start the day they are made: made on March 1, with March usage, issued on April 6. */
const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const TODAY = new Date("2026-04-06T09:30:00.000Z");

/** Issues the March invoice of a contract on April 6 (its draft made by a March event); answers it. */
async function issueMarch(t: TestApp, key: string, contractId: string, metric = "domestic_wire") {
  await submitAccepted(t, key, [usageEvent(contractId, { metric })]);
  const draft = await invoiceFor(t, key, contractId);
  t.clock.set(TODAY);
  const res = await t.call({ method: "POST", url: `${INVOICES}/${encodeURIComponent(draft.number)}/finalize`, key });
  expectStatus(res, 200);
  return res.json() as { number: string; issued_date: string; due_date: string };
}

/** Uploads a contract from March 1 for an existing customer, with the terms given. */
async function uploadContract(t: TestApp, key: string, customerId: string, terms: Record<string, unknown>) {
  const body = await multipart([
    { name: "file", value: await generatedAgreement(), filename: "agreement.pdf", type: "application/pdf" },
    {
      name: "terms",
      value: JSON.stringify(uploadTerms({ customer: { id: customerId }, start_date: "2026-03-01", ...terms })),
    },
  ]);
  const res = await t.call({
    method: "POST",
    url: `${CONTRACTS}/upload`,
    key,
    payload: body.payload,
    headers: body.headers,
  });
  expectStatus(res, 201);
  return res.json() as Contract;
}

describeEachEngine("payment terms", (t) => {
  it("dates an invoice by its contract's terms first, over its customer's and the account's", async () => {
    t().clock.set(MARCH_1);
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Terms Ltd", payment_terms_days: 45 });
    const contract = await uploadContract(t(), key, customer.id, { payment_terms_days: 15 });
    assert.equal(contract.payment_terms_days, 15, "shown on the contract");
    const got = await t().call({ method: "GET", url: `${CONTRACTS}/${encodeURIComponent(contract.id)}`, key });
    assert.equal(got.json().payment_terms_days, 15);
    const invoice = await issueMarch(t(), key, contract.id, "sepa_transfer");
    assert.equal(invoice.issued_date, "2026-04-06");
    assert.equal(invoice.due_date, "2026-04-21", "Net 15: the contract's");
  });

  it("dates it by the customer's terms when the contract has none", async () => {
    t().clock.set(MARCH_1);
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Customer Terms", payment_terms_days: 10 });
    const uploaded = await uploadContract(t(), key, customer.id, {});
    assert.equal(uploaded.payment_terms_days, null);
    const invoice = await issueMarch(t(), key, uploaded.id, "sepa_transfer");
    assert.equal(invoice.due_date, "2026-04-16", "Net 10: the customer's");
  });

  it("dates it by the account's default when neither has terms: 30 days, or what the account was set to", async () => {
    t().clock.set(MARCH_1);
    const { key } = await t().newCompany();
    const first = await createSampleContract(t(), key, (await createCustomer(t(), key, { name: "No Terms" })).id);
    assert.equal((await issueMarch(t(), key, first.id)).due_date, "2026-05-06", "Net 30 by default");

    t().clock.set(MARCH_1);
    const { key: other } = await t().newCompany();
    expectStatus(
      await t().call({ method: "PATCH", url: "/v1/billing/account", key: other, payload: { payment_terms_days: 45 } }),
      200,
    );
    const second = await createSampleContract(t(), other, (await createCustomer(t(), other, { name: "No Terms" })).id);
    assert.equal((await issueMarch(t(), other, second.id)).due_date, "2026-05-21", "Net 45: the account's");
  });

  it("keeps an issued invoice's due date when the customer's or the account's terms change afterwards", async () => {
    t().clock.set(MARCH_1);
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Frozen", payment_terms_days: 15 });
    const contract = await createSampleContract(t(), key, customer.id);
    const invoice = await issueMarch(t(), key, contract.id);
    assert.equal(invoice.due_date, "2026-04-21");

    const patched = await t().call({
      method: "PATCH",
      url: `/v1/billing/customers/${customer.id}`,
      key,
      payload: { payment_terms_days: 60 },
    });
    expectStatus(patched, 200);
    expectStatus(
      await t().call({ method: "PATCH", url: "/v1/billing/account", key, payload: { payment_terms_days: 90 } }),
      200,
    );
    const after = await t().call({ method: "GET", url: `${INVOICES}/${encodeURIComponent(invoice.number)}`, key });
    expectStatus(after, 200);
    assert.equal(after.json().due_date, "2026-04-21", "issued invoices keep their due date");
    assert.equal(after.json().issued_date, "2026-04-06");
  });
});
