import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pdfText } from "../../../../test/support/pdf-text.js";
import { creditNoteWords, renderCreditNotePdf, type CreditNotePdfInput } from "./credit-note-pdf.js";

const input = (overrides: Partial<CreditNotePdfInput> = {}): CreditNotePdfInput => ({
  seller: {
    name: "Northwind Payments Ltd",
    address: "1 Harbour Road\nDublin D02 X285",
    taxId: "IE1234567T",
    logo: null,
    paymentInstructions: "SEPA transfer",
    footer: "Registered in Ireland no. 123456",
  },
  customer: {
    name: "Société Générale",
    address: "29 Boulevard Haussmann\n75009 Paris",
    country: "France",
    email: "ap@example.fr",
    taxId: "FR40303265045",
  },
  creditNote: {
    number: "CN-000001",
    invoiceNumber: "INV-000042",
    issuedDate: "2026-04-20",
    currency: "USD",
    reason: "Wires billed twice on 2026-03-12",
    lines: [
      { description: "Domestic wire", amount: "40.00" },
      { description: "Monthly minimum", amount: "10.50" },
    ],
    amount: "50.50",
    appliedToDue: "30.00",
    toBalance: "20.50",
  },
  paperSize: "letter",
  generatedAt: new Date("2026-04-20T09:30:00.000Z"),
  ...overrides,
});

describe("credit note PDF", () => {
  it("says what is credited, on which invoice, why, and where the amount went", () => {
    const words = creditNoteWords(input());
    assert.equal(words.title, "Credit note CN-000001");
    assert.deepEqual(words.lines, [
      ["Domestic wire", "$40.00"],
      ["Monthly minimum", "$10.50"],
    ]);
    assert.deepEqual(words.totals, [
      ["Taken off the invoice's amount due", "$30.00"],
      ["Added to your credit balance", "$20.50"],
      ["Total credited", "$50.50"],
    ]);
  });

  it("reads back: seller, customer, numbers, reason, lines and amounts, on its paper size, the same bytes twice", async () => {
    const pdf = await renderCreditNotePdf(input());
    assert.match(pdf.toString("latin1"), /\/MediaBox \[0 0 612 792\]/, "Letter");
    const text = await pdfText(pdf);
    for (const words of [
      "Credit note CN-000001",
      "Credits invoice INV-000042",
      "Northwind Payments Ltd",
      "Tax ID: IE1234567T",
      "Société Générale",
      "75009 Paris",
      "France",
      "Tax ID: FR40303265045",
      "Reason: Wires billed twice on 2026-03-12",
      "Domestic wire",
      "$40.00",
      "$30.00",
      "$20.50",
      "Total credited",
      "$50.50",
      "Registered in Ireland",
    ])
      assert.ok(text.includes(words), `${words}\n${text}`);
    assert.ok(pdf.equals(await renderCreditNotePdf(input())), "the same input, the same bytes");
    const yen = await renderCreditNotePdf(
      input({
        paperSize: "a4",
        creditNote: {
          ...input().creditNote,
          currency: "JPY",
          lines: [{ description: "Fees", amount: "1500" }],
          amount: "1500",
          appliedToDue: "1500",
          toBalance: "0",
        },
      }),
    );
    assert.match(yen.toString("latin1"), /\/MediaBox \[0 0 595.28 841.89\]/, "A4");
    assert.ok((await pdfText(yen)).includes("¥1,500"));
  });
});
