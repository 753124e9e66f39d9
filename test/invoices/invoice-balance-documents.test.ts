/**
 * An issued invoice's documents track its balance and name its reissue, on both engines (docs/decisions.md,
 * "Invoice documents"): after a partial payment and a credit note, the PDF, the hosted page and the API answer the
 * same amount due, and the PDF and the hosted page list the total, the payment and the credit note before it;
 * a void invoice and its reissue name each other on the PDF, the hosted page and the API; the hosted page shows
 * the seller's block (address, tax id, logo) and how to pay; dates follow the account's locale.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  INVOICES,
  createCustomer,
  createSampleContract,
  invoiceFor,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { pdfText } from "../support/pdf-text.js";

const post = (t: TestApp, key: string, path: string, payload?: object) =>
  t.call({ method: "POST", url: `${INVOICES}/${path}`, key, ...(payload === undefined ? {} : { payload }) });

/** A 1×1 PNG (its bytes fixed): enough for the page to carry a logo. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC",
  "base64",
);

/** A company (with a full seller profile) whose March invoice, 60 wires at 20.00, is issued on April 3. */
async function issuedInvoice(t: TestApp, profile: Record<string, unknown> = {}) {
  t.clock.set(new Date("2026-03-02T09:00:00.000Z"));
  const { key } = await t.newCompany({ name: "Northwind Payments" });
  const account = await t.call({
    method: "PATCH",
    url: "/v1/billing/account",
    key,
    payload: {
      legal_name: "Northwind Payments Ltd",
      address: "1 Harbour Road\nDublin D02 X285",
      tax_id: "IE1234567T",
      payment_instructions: "SEPA transfer to IE29 AIBK 9311 5212 3456 78",
      ...profile,
    },
  });
  expectStatus(account, 200);
  expectStatus(
    await t.call({
      method: "PUT",
      url: "/v1/billing/account/logo",
      key,
      headers: { "content-type": "image/png" },
      payload: PNG,
    }),
    200,
  );
  const customer = await createCustomer(t, key, { name: "Globex GmbH", payment_terms_days: 30 });
  const contract = await createSampleContract(t, key, customer.id);
  await submitAccepted(t, key, [usageEvent(contract.id, { quantity: 60 })]);
  const { number } = await invoiceFor(t, key, contract.id);
  t.clock.set(new Date("2026-04-03T10:00:00.000Z"));
  const issued = await post(t, key, `${number}/finalize`);
  expectStatus(issued, 200);
  return { key, number, invoice: issued.json() };
}

async function documents(t: TestApp, key: string, number: string) {
  const api = await t.call({ method: "GET", url: `${INVOICES}/${number}`, key });
  expectStatus(api, 200);
  const invoice = api.json();
  const pdf = await t.call({ method: "GET", url: `${INVOICES}/${number}/pdf`, key });
  expectStatus(pdf, 200);
  const text = (await pdfText(pdf.rawPayload)).replace(/\s+/g, " ");
  let page = "";
  if (invoice.hosted_url) {
    const res = await t.call({ method: "GET", url: new URL(invoice.hosted_url).pathname });
    expectStatus(res, 200);
    page = res.body.replace(/\s+/g, " ");
  }
  return { invoice, text, page };
}

describeEachEngine("invoice documents track the balance", (t) => {
  it("after a partial payment and a credit note, the PDF, the hosted page and the API answer the same amount due", async () => {
    const { key, number, invoice } = await issuedInvoice(t());
    assert.equal(invoice.total, 1200);
    const before = await documents(t(), key, number);
    assert.ok(before.text.includes("Amount due as of April 3, 2026 $1,200.00"), before.text);

    t().clock.set(new Date("2026-04-05T12:00:00.000Z"));
    expectStatus(
      await post(t(), key, `${number}/payments`, { amount: "500.00", method: "wire", reference: "WX-1" }),
      201,
    );
    t().clock.set(new Date("2026-04-06T12:00:00.000Z"));
    expectStatus(await post(t(), key, `${number}/credit-notes`, { amount: "75.00", reason: "Goodwill" }), 201);

    const { invoice: after, text, page } = await documents(t(), key, number);
    assert.equal(after.amount_due, 625, "the API: 1,200.00 − 500.00 − 75.00");
    // The PDF: the total at issue, then each payment and credit note, then the amount due now.
    for (const words of [
      "Total $1,200.00",
      "Payment April 5, 2026 (wire, ref. WX-1) -$500.00",
      "Credit note CN-000001 (April 6, 2026) -$75.00",
      "Amount due as of April 6, 2026 $625.00",
    ])
      assert.ok(text.includes(words), `PDF: ${words}\n${text}`);
    assert.doesNotMatch(text, /Total due/, "the PDF never calls the total at issue what is due");
    // The hosted page says the same, in the same order.
    const rows = [
      "<dt>Total</dt><dd>$1,200.00</dd>",
      "<dt>Payment April 5, 2026 (wire, ref. WX-1)</dt><dd>-$500.00</dd>",
      "<dt>Credit note CN-000001 (April 6, 2026)</dt><dd>-$75.00</dd>",
      '<dt class="due">Amount due as of April 6, 2026</dt><dd class="due">$625.00</dd>',
    ];
    const at = rows.map((row) => page.indexOf(row));
    assert.ok(
      at.every((n) => n >= 0),
      `hosted page rows: ${rows.filter((_, i) => at[i]! < 0).join(" | ")}`,
    );
    assert.deepEqual(
      [...at].sort((a, b) => a - b),
      at,
      "in order: total, payment, credit note, amount due",
    );

    // Paid off: the PDF says so, and still lists what paid it.
    expectStatus(await post(t(), key, `${number}/payments`, { amount: "625.00", method: "ach" }), 201);
    const paid = await documents(t(), key, number);
    assert.equal(paid.invoice.amount_due, 0);
    assert.ok(paid.text.includes("Payment April 6, 2026 (ACH) -$625.00"), paid.text);
    assert.ok(paid.text.includes("Amount due as of April 6, 2026 $0.00"), paid.text);
  });

  it("the hosted page shows the seller's block, its logo and how to pay, with dates and terms written for people", async () => {
    const { key, number } = await issuedInvoice(t());
    const { page, text } = await documents(t(), key, number);
    for (const words of [
      "Northwind Payments Ltd",
      "1 Harbour Road",
      "Tax ID: IE1234567T",
      "How to pay",
      "SEPA transfer to IE29",
      "Due May 3, 2026 (Net 30).",
      "<dt>Issue date</dt><dd>April 3, 2026</dd>",
      "<dt>Due date</dt><dd>May 3, 2026 (Net 30)</dd>",
      "<dt>Billing period</dt><dd>March 1, 2026 to March 31, 2026</dd>",
    ])
      assert.ok(page.includes(words), `hosted page: ${words}`);
    assert.match(page, /<img src="data:image\/png;base64,[A-Za-z0-9+/=]+" alt="Northwind Payments Ltd">/);
    for (const words of ["Issue date April 3, 2026", "Due date May 3, 2026 (Net 30)"])
      assert.ok(text.includes(words), `PDF: ${words}\n${text}`);
  });

  it("writes dates in the account's locale, and refuses a locale Intl does not know", async () => {
    const { key, number } = await issuedInvoice(t(), { locale: "en-GB" });
    const account = (await t().call({ method: "GET", url: "/v1/billing/account", key })).json();
    assert.equal(account.locale, "en-GB");
    const { text, page } = await documents(t(), key, number);
    assert.ok(text.includes("Issue date 3 April 2026"), text);
    assert.ok(page.includes("<dd>3 May 2026 (Net 30)</dd>"), "the hosted page in en-GB");
    for (const locale of ["xx-nope-not-a-tag", "en_US", ""])
      expectError(
        await t().call({ method: "PATCH", url: "/v1/billing/account", key, payload: { locale } }),
        400,
        "invalid_request",
      );
    const fresh = await t().newCompany({ name: "Default Locale" });
    assert.equal(
      (await t().call({ method: "GET", url: "/v1/billing/account", key: fresh.key })).json().locale,
      "en-US",
    );
  });

  it("a void invoice and its reissue name each other on the PDF, the hosted page and the API", async () => {
    const { key, number, invoice } = await issuedInvoice(t());
    const voidPage = new URL(invoice.hosted_url).pathname;
    expectStatus(await post(t(), key, `${number}/void`), 200);
    const original = await documents(t(), key, number);
    const reissue = original.invoice.reissued_as as string;
    assert.ok(reissue && reissue !== number, "the API names the reissue");
    assert.ok(original.text.includes(`Replaced by ${reissue}`), original.text);
    const voided = (await t().call({ method: "GET", url: voidPage })).body.replace(/\s+/g, " ");
    assert.ok(voided.includes(`<dt>Replaced by</dt><dd>${reissue}</dd>`), "the void invoice's hosted page");

    expectStatus(await post(t(), key, `${reissue}/finalize`), 200);
    const replacement = await documents(t(), key, reissue);
    assert.equal(replacement.invoice.reissue_of, number, "the API names the void original");
    assert.ok(replacement.text.includes(`Replaces ${number} (void)`), replacement.text);
    assert.ok(replacement.page.includes(`<dt>Replaces</dt><dd>${number} (void)</dd>`), "the reissue's hosted page");
  });
});
