// The service's own agreements (agreement-pdf.ts) are agreements like any other: the extractor reads them
// back from the PDF's text layer, through the same child process an upload is read in.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { agreementInput } from "../../../../test/fixtures/agreement-input.js";
import { inspectPdf } from "../../../platform/pdf-text.js";
import { type AgreementPdfInput, renderAgreementPdf } from "../agreement-pdf.js";
import { extractTerms } from "./extract-terms.js";

async function extract(input: AgreementPdfInput) {
  const inspection = await inspectPdf(await renderAgreementPdf(input), { queueKey: "test", textPages: 20 });
  assert.equal(inspection.kind, "readable");
  return extractTerms(inspection.kind === "readable" ? inspection.items : [], { sellerNames: [input.companyName] });
}

describe("reading back the service's own agreements", () => {
  it("reads the customer, the dates, the currency and every rule of a program, with its metric column", async () => {
    const { terms, fields } = await extract(
      agreementInput({
        minimumAmount: "1000.00",
        rules: [
          {
            id: "r1",
            name: "Card payments",
            type: "usage",
            model: "percentage",
            rate: "0.029",
            metric: "card_payments",
            fixed_fee: "0.30",
            monthly_cap: "5000.00",
          },
          {
            id: "r2",
            name: "ACH debit origination",
            type: "usage",
            model: "flat",
            amount: "0.28",
            metric: "ach_debit",
          },
          {
            id: "r3",
            name: "Wires",
            type: "usage",
            model: "flat",
            amount: "18.00",
            metric: "wire",
            counterparty: "HSBC UK",
          },
          { id: "r4", name: "Platform", type: "subscription", model: "flat", amount: "250.00", frequency: "monthly" },
          { id: "m", name: "Minimum", type: "minimum", model: "flat", amount: "1000.00" },
        ],
      }),
    );
    assert.equal(terms.customer?.name, "Globex Corporation");
    assert.deepEqual([terms.start_date, terms.end_date, terms.currency], ["2026-01-01", "2026-12-31", "USD"]);
    assert.deepEqual(terms.rules, [
      { name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000.00" },
      {
        name: "Card payments",
        type: "usage",
        metric: "card_payments",
        model: "percentage",
        rate: "0.029",
        fixed_fee: "0.30",
        monthly_cap: "5000.00",
      },
      { name: "ACH debit origination", type: "usage", metric: "ach_debit", model: "flat", amount: "0.28" },
      { name: "Wires", type: "usage", metric: "wire", model: "flat", amount: "18.00", counterparty: "HSBC UK" },
      { name: "Platform", type: "subscription", model: "flat", frequency: "monthly", amount: "250.00" },
    ]);
    // The wrapped row's source is both of its lines, as they stand on the page.
    const wrapped = fields.find((f) => f.field === "rules.2.name");
    assert.match(wrapped?.source_text ?? "", /ACH debit.*origination/);
  });

  it("reads a customer's whole name from its box, whatever its words", async () => {
    for (const customerName of ["Walk Customer d345", "Walk Customer 3f2a", "globex"]) {
      const { terms } = await extract(agreementInput({ customerName }));
      assert.equal(terms.customer?.name, customerName === "globex" ? undefined : customerName, customerName);
    }
  });

  it("reads an open-ended agreement in euros with no rules", async () => {
    const { terms } = await extract(agreementInput({ endDate: null, currency: "EUR", customerName: "Initech GmbH" }));
    assert.equal(terms.customer?.name, "Initech GmbH");
    assert.equal(terms.currency, "EUR");
    assert.equal(terms.end_date, null);
    assert.equal(terms.rules, undefined);
  });
});
