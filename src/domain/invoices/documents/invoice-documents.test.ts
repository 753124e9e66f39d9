import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { billRecords, freezeBill } from "../invoice-figures.js";
import { invoicePdfInput } from "./invoice-documents.js";
import { billStored, presentWithLines } from "../invoice-presenter.js";
import type { InvoiceDocumentRow } from "../invoice-read-repository.js";
import type { LineRecord } from "../invoice-lines.js";
import type { DocumentParties } from "./invoice-parties.js";

const line = (fields: Partial<LineRecord> & Pick<LineRecord, "key" | "kind">): LineRecord => ({
  rule_id: "rule_1",
  metric: null,
  description: fields.kind,
  quantity: "1",
  rate: null,
  charge_total: "0",
  capped_total: "0",
  ...fields,
});

const LINES: LineRecord[] = [
  line({ key: "sub", kind: "subscription", description: "Platform", charge_total: "1000" }),
  line({
    key: "wire",
    kind: "usage",
    metric: "domestic_wire",
    description: "domestic_wire usage",
    quantity: "1234",
    rate: "0.205",
    charge_total: "252.97",
  }),
  line({ key: "fee", kind: "fee", description: "card fees", quantity: "3", charge_total: "1.000000000001" }),
];

const row = (fields: Partial<InvoiceDocumentRow> = {}): InvoiceDocumentRow => ({
  company_id: "00000000-0000-4000-8000-000000000001",
  number: "INV-000042",
  seq: "42",
  contract_id: "societe-generale",
  status: "draft",
  currency: "USD",
  period_start: "2026-03-01",
  period_end: "2026-03-31",
  minimum_amount: "5000",
  minimum_terms: null,
  projected_at: null,
  billed: null,
  issued_at: null,
  issued_date: "2026-04-01",
  due_date: "2026-05-01",
  paid_date: null,
  hosted_url: null,
  created_at: new Date("2026-03-02T00:00:00.000Z"),
  updated_at: new Date("2026-03-03T00:00:00.000Z"),
  amount_paid: "0",
  amount_credited: "0",
  reissue_of: null,
  reissued_as: null,
  payments: [],
  metrics: ["domestic_wire"],
  lines: LINES,
  customer_id: "00000000-0000-4000-8000-0000000000c1",
  customer_name: "Société Générale",
  customer_address: "29 Boulevard Haussmann\n75009 Paris",
  customer_country: "France",
  customer_email: null,
  customer_tax_id: "FR40303265045",
  customer_memo: "PO 4500012345",
  parties: null,
  programs: null,
  ...fields,
});

const PARTIES: DocumentParties = {
  parties: {
    seller: {
      name: "Northwind Payments Ltd",
      address: "1 Main St\nSpringfield",
      tax_id: "US12-3456789",
      payment_instructions: "ACH to 0000 1111",
      footer: "Thank you",
      logo_sha256: null,
    },
    customer: {
      name: "Société Générale",
      address: "29 Boulevard Haussmann\n75009 Paris",
      country: "France",
      email: null,
      tax_id: "FR40303265045",
    },
    memo: "PO 4500012345",
    paper_size: "a4",
  },
  logo: null,
};
const NO_RULES = new Map();
const pdfInput = (document: InvoiceDocumentRow, billed = billStored(document)) =>
  invoicePdfInput(document, billed, PARTIES, NO_RULES);

describe("invoicePdfInput: the PDF's figures from the domain's values", () => {
  const cases: Array<[string, InvoiceDocumentRow]> = [
    ["a USD draft, its figures derived now (with the minimum true-up)", row()],
    ["a JPY draft (no minor unit)", row({ currency: "JPY", minimum_amount: null })],
    ["a KWD draft (three decimals)", row({ currency: "KWD" })],
    [
      "an issued invoice, its figures as issued even where its lines say otherwise now",
      row({ status: "issued", billed: freezeBill(billRecords(row())), lines: [], minimum_amount: null }),
    ],
  ];
  for (const [name, document] of cases) {
    it(`reads as the API answers the invoice: ${name}`, () => {
      const input = pdfInput(document);
      const answered = presentWithLines(document, billStored(document));
      assert.deepEqual(
        input.invoice.lines,
        answered.line_items.map((l) => ({
          kind: l.kind,
          description: l.description,
          quantity: String(l.quantity),
          unitPrice: String(l.unit_price),
          amount: String(l.amount),
          rule: null,
        })),
      );
      assert.deepEqual(
        [input.invoice.subtotal, input.invoice.tax, input.invoice.total],
        [String(answered.subtotal), String(answered.tax), String(answered.total)],
      );
      assert.equal(input.invoice.lines.length, answered.line_items.length);
    });
  }

  it("writes quantities and unit prices with every digit, money with the currency's minor unit", () => {
    const input = pdfInput(row());
    assert.deepEqual(
      input.invoice.lines.map(({ kind, rule, ...l }) => l),
      [
        { description: "Platform", quantity: "1", unitPrice: "1000", amount: "1000.00" },
        { description: "domestic_wire usage", quantity: "1234", unitPrice: "0.205", amount: "252.97" },
        { description: "card fees", quantity: "3", unitPrice: "0.333333333333", amount: "1.00" },
        {
          description: "Monthly minimum: $5,000.00 committed, $1,253.97 counted",
          quantity: "1",
          unitPrice: "3746.03",
          amount: "3746.03",
        },
      ],
    );
    assert.deepEqual([input.invoice.subtotal, input.invoice.tax, input.invoice.total], ["5000.00", "0.00", "5000.00"]);
    const yen = row({ currency: "JPY", minimum_amount: null });
    assert.deepEqual(
      pdfInput(yen).invoice.lines.map((l) => l.amount),
      ["1000", "253", "1"],
    );
  });

  it("names the seller, the customer and the invoice's facts as stored, dated by the invoice", () => {
    const input = pdfInput(row({ status: "paid", paid_date: "2026-04-10" }), billStored(row()));
    assert.equal(input.seller.name, "Northwind Payments Ltd");
    assert.equal(input.seller.taxId, "US12-3456789");
    assert.equal(input.paperSize, "a4");
    assert.equal(input.memo, "PO 4500012345");
    assert.deepEqual(input.customer, {
      name: "Société Générale",
      address: "29 Boulevard Haussmann\n75009 Paris",
      country: "France",
      email: null,
      taxId: "FR40303265045",
    });
    assert.deepEqual(
      [input.invoice.number, input.invoice.status, input.invoice.contract, input.invoice.paidDate],
      ["INV-000042", "paid", "societe-generale", "2026-04-10"],
    );
    assert.deepEqual(input.invoice.period, { start: "2026-03-01", end: "2026-03-31" });
    assert.deepEqual(input.generatedAt, new Date("2026-03-03T00:00:00.000Z"), "a draft: its last change");
    const issuedAt = new Date("2026-04-01T08:00:00.000Z");
    assert.deepEqual(pdfInput(row({ issued_at: issuedAt })).generatedAt, issuedAt, "issued: its issue time");
  });
});
