/**
 * GET /v1/billing/invoices/{number}/pdf on both engines: the invoice as the customer receives it, a draft
 * marked DRAFT until it is issued, the figures those of GET; another company's invoice and bad credentials
 * refused.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { renderInvoicePdf } from "../../src/domain/invoices/invoice-pdf.js";
import {
  INVOICES,
  createCustomer,
  createSampleContract,
  getInvoice,
  invoiceFor,
  keyWithScopes,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine } from "../support/harness.js";
import { pdfText } from "../support/pdf-text.js";

describeEachEngine("invoice PDF", (t) => {
  it("answers the invoice as a PDF: seller, customer, lines and total, DRAFT until it is issued", async () => {
    t().clock.set(new Date("2026-03-02T09:00:00.000Z"));
    const { key, companyId } = await t().newCompany({ name: "Northwind Payments" });
    const customer = await createCustomer(t(), key, {
      name: "Globex GmbH",
      address: "Hauptstraße 1\n10115 Berlin",
      email: "billing@globex.example",
      payment_terms_days: 14,
    });
    const contract = await createSampleContract(t(), key, customer.id);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 60 })]);
    const { number } = await invoiceFor(t(), key, contract.id);
    const pdf = async () => {
      const res = await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf`, key });
      expectStatus(res, 200);
      assert.equal(res.headers["content-type"], "application/pdf");
      assert.equal(res.headers["content-disposition"], `inline; filename="${number}.pdf"`);
      assert.equal(res.rawPayload.subarray(0, 5).toString(), "%PDF-");
      return res.rawPayload;
    };
    /** The PDF of the invoice exactly as GET answers it, with the seller and customer above. */
    const asAnswered = async () => {
      const invoice = await getInvoice(t(), key, number);
      return renderInvoicePdf({
        sellerName: "Northwind Payments",
        customer: { name: "Globex GmbH", address: "Hauptstraße 1\n10115 Berlin", email: "billing@globex.example" },
        invoice: {
          number: invoice.number,
          status: invoice.status,
          currency: invoice.currency,
          period: invoice.billing_period,
          issuedDate: invoice.issued_date,
          dueDate: invoice.due_date,
          paidDate: invoice.paid_date,
          contract: invoice.contract,
          lines: invoice.line_items.map((l) => ({
            description: l.description,
            quantity: String(l.quantity),
            unitPrice: String(l.unit_price),
            amount: String(l.amount),
          })),
          subtotal: String(invoice.subtotal),
          tax: String(invoice.tax),
          total: String(invoice.total),
        },
        generatedAt: t().clock.now(),
      });
    };
    const draft = await pdf();
    assert.ok(draft.equals(await asAnswered()), "the draft's PDF shows the figures GET answers, byte for byte");
    const draftText = await pdfText(draft);
    for (const words of [
      "DRAFT: not final",
      `Invoice ${number}`,
      "Northwind Payments",
      "Globex GmbH",
      "10115 Berlin",
      "billing@globex.example",
      "domestic_wire usage",
      "$1,200.00",
    ]) {
      assert.ok(draftText.includes(words), `${words}\n${draftText}`);
    }
    t().clock.set(new Date("2026-04-03T10:00:00.000Z"));
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key }), 200);
    assert.ok((await pdf()).equals(await asAnswered()), "the issued invoice's PDF too");
    const text = await pdfText(await pdf());
    assert.doesNotMatch(text, /DRAFT/);
    assert.ok(text.includes("Due 2026-04-17"), text);
    assert.ok(text.includes("$1,200.00"), text);

    const other = await t().newCompany();
    expectError(await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf`, key: other.key }), 404, "not_found");
    expectError(await t().call({ method: "GET", url: `${INVOICES}/INV-999999/pdf`, key }), 404, "not_found");
    expectError(await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf` }), 401);
    expectError(
      await t().call({
        method: "GET",
        url: `${INVOICES}/${number}/pdf`,
        key: await keyWithScopes(t(), companyId, ["usage:read"]),
      }),
      403,
    );
  });
});
