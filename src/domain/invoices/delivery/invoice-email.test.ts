import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { composeInvoiceEmail, type InvoiceEmailFacts } from "./invoice-email.js";

const facts: InvoiceEmailFacts = {
  kind: "issued",
  reminderDay: null,
  sellerName: "Northwind <Payments> & Co",
  customerName: 'Globex "Corp"',
  number: "INV-000042",
  amountDue: "$1,250.00",
  dueOn: "May 6, 2026",
  dueWithTerms: "May 6, 2026 (Net 30)",
  balance: [
    ["Total", "$1,300.00"],
    ["Credit note CN-000001 (April 8, 2026)", "-$50.00"],
    ["Amount due as of April 8, 2026", "$1,250.00"],
  ],
  hostedUrl: "https://billing.example/i/abc",
  memo: "PO 4711\nAttn: accounts payable",
};

describe("an invoice's email (pure)", () => {
  it("says who sends which invoice, what is due and when, and where to see it, in text and HTML", () => {
    const email = composeInvoiceEmail(facts);
    assert.equal(email.subject, "Invoice INV-000042 from Northwind <Payments> & Co");
    for (const part of [
      "invoice INV-000042 for $1,250.00.",
      "Due date: May 6, 2026 (Net 30)",
      "Total: $1,300.00",
      "Credit note CN-000001 (April 8, 2026): -$50.00",
      "Amount due as of April 8, 2026: $1,250.00",
      "https://billing.example/i/abc",
      "PO 4711",
    ])
      assert.ok(email.text.includes(part), part);
    assert.ok(!email.text.includes("USD"), "money is written as the PDF writes it, not as 1250.00 USD");
    assert.ok(email.html.includes("Northwind &lt;Payments&gt; &amp; Co"), "the HTML escapes what it is given");
    assert.ok(email.html.includes("Globex &quot;Corp&quot;"));
    assert.ok(!email.html.includes("<Payments>"));
    assert.ok(email.html.includes('<a href="https://billing.example/i/abc">'));
    assert.ok(email.html.includes("PO 4711<br>Attn"));
  });

  it("words a reminder by its day from the due date, and keeps the subject on one line", () => {
    const reminder = (day: number) => composeInvoiceEmail({ ...facts, kind: "reminder", reminderDay: day });
    assert.equal(reminder(-3).subject, "Reminder: invoice INV-000042 from Northwind <Payments> & Co");
    assert.match(reminder(-3).text, /is due in 3 days, on May 6, 2026/);
    assert.match(reminder(-1).text, /is due in 1 day,/);
    assert.match(reminder(0).text, /is due today/);
    assert.match(reminder(7).text, /was due on May 6, 2026, 7 days ago, and is still unpaid/);
    assert.equal(
      composeInvoiceEmail({ ...facts, sellerName: "Evil\r\nBcc: x@y" }).subject,
      "Invoice INV-000042 from Evil Bcc: x@y",
    );
  });
});
