/**
 * Lines that explain themselves, on both engines (docs/api.md, "Invoices", line items): a card line priced at
 * 2.9 % + $0.30 a transaction and capped at $5,000 shows its transaction count, its volume and what it would
 * have cost uncapped, on the API's line (`event_count`, `uncapped_amount`), the PDF and the hosted page.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  INVOICES,
  addRule,
  createCustomer,
  createSampleContract,
  invoiceFor,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine } from "../support/harness.js";
import { pdfText } from "../support/pdf-text.js";

/** 300 payments of 587.50: 300 × (2.9 % × 587.50 + 0.30) = 5,201.25 uncapped, 176,250.00 of volume. */
const PAYMENTS = 300;

describeEachEngine("usage lines explain themselves", (t) => {
  it("a capped card line shows its transaction count, its volume and its uncapped amount on the API, the PDF and the hosted page", async () => {
    t().clock.set(new Date("2026-03-02T09:00:00.000Z"));
    const { key } = await t().newCompany({ name: "Northwind Payments" });
    const customer = await createCustomer(t(), key, { name: "Globex", payment_terms_days: 30 });
    const contract = await createSampleContract(t(), key, customer.id);
    await addRule(t(), key, contract.id, {
      name: "Card processing",
      type: "usage",
      metric: "card_volume",
      model: "percentage",
      rate: "0.029",
      fixed_fee: "0.30",
      monthly_cap: "5000",
    });
    for (let batch = 0; batch < PAYMENTS / 100; batch++)
      await submitAccepted(
        t(),
        key,
        Array.from({ length: 100 }, () => usageEvent(contract.id, { metric: "card_volume", quantity: "587.50" })),
      );
    const { number } = await invoiceFor(t(), key, contract.id);
    const cardLine = async () => {
      const res = await t().call({ method: "GET", url: `${INVOICES}/${number}`, key });
      expectStatus(res, 200);
      const invoice = res.json();
      return { invoice, line: invoice.line_items.find((l: { metric: string }) => l.metric === "card_volume") };
    };
    const draft = await cardLine();
    assert.deepEqual(
      {
        amount: draft.line.amount,
        quantity: draft.line.quantity,
        events: draft.line.event_count,
        uncapped: draft.line.uncapped_amount,
      },
      { amount: 5000, quantity: 176250, events: PAYMENTS, uncapped: 5201.25 },
    );
    const wire = draft.invoice.line_items.find((l: { metric: string }) => l.metric === "domestic_wire");
    assert.equal(wire?.uncapped_amount, undefined, "an uncapped line has no uncapped amount");

    t().clock.set(new Date("2026-04-03T10:00:00.000Z"));
    const issued = await t().call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key });
    expectStatus(issued, 200);
    const after = await cardLine();
    assert.equal(after.line.event_count, PAYMENTS, "an issued invoice's line keeps its count");
    assert.equal(after.line.uncapped_amount, 5201.25);

    const pdf = await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf`, key });
    expectStatus(pdf, 200);
    const text = (await pdfText(pdf.rawPayload)).replace(/\s+/g, " ");
    for (const words of [
      "300 transactions, volume $176,250.00",
      "capped at the monthly cap of $5,000.00; uncapped $5,201.25",
    ])
      assert.ok(text.includes(words), `PDF: ${words}\n${text}`);
    const page = (await t().call({ method: "GET", url: new URL(issued.json().hosted_url).pathname })).body;
    for (const words of [
      "300 transactions, volume $176,250.00",
      "capped at the monthly cap of $5,000.00; uncapped $5,201.25",
    ])
      assert.ok(page.includes(words), `hosted page: ${words}`);
  });
});
