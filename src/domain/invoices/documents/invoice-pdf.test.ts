import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Big from "big.js";
import { pdfText } from "../../../../test/support/pdf-text.js";
import { formatMoney } from "../../kernel/money-format.js";
import { renderInvoicePdf } from "./invoice-pdf.js";
import { invoiceWords, type InvoicePdfInput } from "./invoice-words.js";

const input = (overrides: Partial<InvoicePdfInput["invoice"]> = {}, currency = "USD"): InvoicePdfInput => ({
  seller: {
    name: "Northwind Payments",
    address: null,
    taxId: null,
    logo: null,
    paymentInstructions: null,
    footer: null,
  },
  customer: {
    name: "Société Générale",
    address: "29 Boulevard Haussmann\n75009 Paris",
    country: null,
    email: "ap@example.fr",
    taxId: null,
  },
  memo: null,
  paperSize: "a4",
  invoice: {
    number: "INV-000042",
    status: "issued",
    currency,
    period: { start: "2026-03-01", end: "2026-03-31" },
    issuedDate: "2026-04-04",
    dueDate: "2026-05-04",
    paidDate: null,
    contract: "societe-generale-test",
    lines: [
      {
        description: "domestic_wire usage",
        quantity: "1234",
        unitPrice: currency === "JPY" ? "2500" : "20.5",
        amount: currency === "JPY" ? "3085000" : "25297",
      },
      {
        description: "card fees",
        quantity: "3",
        unitPrice: currency === "JPY" ? "333.333333333333" : "0.333333333333",
        amount: currency === "JPY" ? "1000" : "1",
      },
      {
        description: "Monthly minimum",
        quantity: "1",
        unitPrice: currency === "JPY" ? "15000" : "1234567.89",
        amount: currency === "JPY" ? "15000" : "1234567.89",
      },
    ],
    subtotal: currency === "JPY" ? "3101000" : "1259865.89",
    tax: "0",
    total: currency === "JPY" ? "3101000" : "1259865.89",
    ...overrides,
  },
  generatedAt: new Date("2026-04-04T00:00:00.000Z"),
});

describe("formatMoney", () => {
  const cases: Array<[string, string, number | undefined, string]> = [
    ["1234567.89", "USD", undefined, "$1,234,567.89"],
    ["0", "USD", undefined, "$0.00"],
    ["3101000", "JPY", undefined, "¥3,101,000"],
    ["1.002", "KWD", undefined, "KWD 1.002"],
    ["12345678901234567.89", "EUR", undefined, "€12,345,678,901,234,567.89"],
    ["0.333333333333", "USD", 12, "$0.333333333333"],
    ["20.5", "USD", 12, "$20.50"],
    ["-5.5", "USD", undefined, "-$5.50"],
  ];
  for (const [amount, currency, decimals, expected] of cases) {
    it(`writes ${amount} ${currency} as ${expected}, from its text`, () => {
      assert.equal(formatMoney(amount, currency, decimals).replace(/\u00a0/g, " "), expected);
    });
  }
});

describe("invoice PDF", () => {
  it("says who bills whom, for what and when, with money per currency, a draft marked DRAFT and a void one VOID", () => {
    const issued = invoiceWords(input());
    assert.equal(issued.title, "Invoice INV-000042");
    assert.deepEqual(issued.parties[0]!.lines, [
      "Société Générale",
      "29 Boulevard Haussmann",
      "75009 Paris",
      "ap@example.fr",
    ]);
    assert.deepEqual(issued.lines[2], ["Monthly minimum", "1", "$1,234,567.89", "$1,234,567.89"]);
    assert.deepEqual(issued.totals.at(-1), ["Total due", "$1,259,865.89"]);
    assert.equal(issued.watermark, null);
    assert.equal(invoiceWords(input({ status: "draft" })).watermark, "DRAFT");
    assert.equal(invoiceWords(input({ status: "void" })).watermark, "VOID");
    assert.match(invoiceWords(input({ status: "paid", paidDate: "2026-04-10" })).status, /Paid April 10, 2026/);
  });

  it("says a void invoice is void and that nothing is due, with no total due; a paid one that it is paid", async () => {
    const voided = invoiceWords(input({ status: "void" }));
    assert.ok(!voided.totals.some(([label]) => label === "Total due"), JSON.stringify(voided.totals));
    assert.deepEqual(voided.totals.at(-1), ["Nothing is due", "$0.00"]);
    const text = await pdfText(await renderInvoicePdf(input({ status: "void" })));
    for (const words of ["VOID", "Nothing is due", "$0.00"]) assert.ok(text.includes(words), `${words}\n${text}`);
    assert.doesNotMatch(text, /Total due/);
    const paid = await pdfText(await renderInvoicePdf(input({ status: "paid", paidDate: "2026-04-10" })));
    assert.match(paid, /Paid April 10, 2026/);
    assert.doesNotMatch(paid, /Total due/);
  });

  it("words each line by its rule: a cap explained, a rate as a percentage, fees as a count and a total", () => {
    const capped = {
      model: "percentage",
      type: "usage",
      rate: "0.0235",
      monthly_cap: "4000.00",
      currency: "USD",
    };
    const words = invoiceWords(
      input({
        lines: [
          {
            kind: "usage",
            description: "Card processing",
            quantity: "192650.55",
            unitPrice: "0.0235",
            amount: "4000.00",
            rule: capped,
          },
          {
            kind: "usage",
            description: "ACH debits",
            quantity: "300",
            unitPrice: "0.25",
            amount: "75.00",
            rule: { model: "flat", type: "usage", amount: "0.25", monthly_cap: "100.00" },
          },
          {
            kind: "fee",
            description: "correspondent_charges fees",
            quantity: "6",
            unitPrice: "20.016666666667",
            amount: "120.10",
            rule: { model: "flat", type: "usage", amount: "0", monthly_cap: null },
          },
          {
            kind: "usage",
            description: "API calls",
            quantity: "10200.5",
            unitPrice: "0.081860693103",
            amount: "835.02",
            tiers: [
              { upTo: "1000", unitPrice: "0.1", flat: null, quantity: "1000", amount: "100" },
              { upTo: null, unitPrice: "0.08", flat: null, quantity: "9200.5", amount: "736.04" },
            ],
            capAdjustment: "-1.02",
            rule: { model: "graduated", type: "usage", monthly_cap: "835.02" },
          },
        ],
      }),
    );
    assert.deepEqual(words.lines, [
      ["Card processing", "$192,650.55", "2.35%", "$4,000.00"],
      ["    capped at the monthly cap of $4,000.00; uncapped $4,527.29", "", "", ""],
      ["ACH debits", "300", "$0.25", "$75.00"],
      ["correspondent_charges fees", "6", "pass-through", "$120.10"],
      ["API calls", "10,200.5", "", "$835.02"],
      ["    Tier up to 1,000", "1,000", "$0.10", "$100.00"],
      ["    Tier above 1,000", "9,200.5", "$0.08", "$736.04"],
      ["    capped at the monthly cap of $835.02; uncapped $836.04", "", "", "-$1.02"],
    ]);
  });

  it("prints the seller (address, tax id, logo), the customer (country, tax id), the memo, payment instructions and footer", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    );
    const full: InvoicePdfInput = {
      ...input(),
      seller: {
        name: "Northwind Payments Ltd",
        address: "1 Harbour Road\nDublin D02 X285",
        taxId: "IE1234567T",
        logo: { contentType: "image/png", bytes: png },
        paymentInstructions: "SEPA transfer to IE29 AIBK 9311 5212 3456 78, quoting the invoice number.",
        footer: "Northwind Payments Ltd, registered in Ireland no. 123456.",
      },
      customer: {
        name: "Société Générale",
        address: "29 Boulevard Haussmann\n75009 Paris",
        country: "France",
        email: "ap@example.fr",
        taxId: "FR40303265045",
      },
      memo: "PO 4500012345",
    };
    const pdf = await renderInvoicePdf(full);
    const text = await pdfText(pdf);
    for (const words of [
      "Northwind Payments Ltd",
      "1 Harbour Road",
      "Dublin D02 X285",
      "Tax ID: IE1234567T",
      "France",
      "Tax ID: FR40303265045",
      "PO 4500012345",
      "SEPA transfer to IE29",
      "registered in Ireland",
    ])
      assert.ok(text.includes(words), `${words}\n${text}`);
    assert.match(pdf.toString("latin1"), /\/Subtype \/Image/, "the logo is embedded");
    assert.ok(pdf.equals(await renderInvoicePdf(full)), "the same bytes again, logo and all");
  });

  it("writes a sub-row per tier under a graduated line, amounts exact, and the cap adjustment", async () => {
    const tiered = input({
      lines: [
        {
          description: "api_calls usage",
          quantity: "10200.5",
          unitPrice: "0.081860693103",
          amount: "835.02",
          tiers: [
            { upTo: "1000", unitPrice: "0.1", flat: null, quantity: "1000", amount: "100" },
            { upTo: "10000", unitPrice: "0.08", flat: "5", quantity: "9000", amount: "725" },
            { upTo: null, unitPrice: "0.05", flat: null, quantity: "200.5", amount: "10.025" },
          ],
          capAdjustment: "-0.005",
        },
      ],
      subtotal: "835.02",
      total: "835.02",
    });
    assert.deepEqual(invoiceWords(tiered).lines, [
      ["api_calls usage", "10,200.5", "$0.081860693103", "$835.02"],
      ["    Tier up to 1,000", "1,000", "$0.10", "$100.00"],
      ["    Tier up to 10,000 (+ $5.00 flat)", "9,000", "$0.08", "$725.00"],
      ["    Tier above 10,000", "200.5", "$0.05", "$10.025"],
      ["    Monthly cap", "", "", "-$0.005"],
    ]);
    const text = await pdfText(await renderInvoicePdf(tiered));
    for (const expected of ["Tier up to 1,000", "Tier above 10,000", "$10.025", "$835.02", "Monthly cap"])
      assert.ok(text.includes(expected), `${expected}\n${text}`);
  });

  it("renders the same bytes for the same input", async () => {
    assert.deepEqual(await renderInvoicePdf(input()), await renderInvoicePdf(input()));
  });

  it("reads back through the service's PDF reader for a USD and a JPY invoice", async () => {
    const usd = await pdfText(await renderInvoicePdf(input()));
    for (const text of [
      "Invoice INV-000042",
      "Northwind Payments",
      "Société Générale",
      "75009 Paris",
      "ap@example.fr",
      "March 1, 2026 to March 31, 2026",
      "April 4, 2026",
      "May 4, 2026 (Net 30)",
      "domestic_wire usage",
      "1,234",
      "$20.50",
      "$25,297.00",
      "$0.333333333333",
      "$1,259,865.89",
      "Due May 4, 2026 (Net 30)",
    ]) {
      assert.ok(usd.includes(text), `USD invoice: ${text}\n${usd}`);
    }
    assert.doesNotMatch(usd, /DRAFT/);
    const jpy = await pdfText(await renderInvoicePdf(input({ status: "draft" }, "JPY")));
    for (const text of ["¥2,500", "¥3,085,000", "¥3,101,000", "DRAFT: not final, not yet due"])
      assert.ok(jpy.includes(text), `JPY invoice: ${text}\n${jpy}`);
    assert.doesNotMatch(jpy, /¥3,101,000\.00/, "no decimals for yen");
  });

  const mediaBox = (pdf: Buffer) =>
    pdf
      .toString("latin1")
      .match(/\/MediaBox \[([^\]]+)\]/)?.[1]
      ?.trim();
  for (const { currency, paperSize, box, cap, uncapped, total } of [
    {
      currency: "USD",
      paperSize: "letter" as const,
      box: "0 0 612 792",
      cap: "$4,000.00",
      uncapped: "$4,527.29",
      total: "$4,000.00",
    },
    {
      currency: "USD",
      paperSize: "a4" as const,
      box: "0 0 595.28 841.89",
      cap: "$4,000.00",
      uncapped: "$4,527.29",
      total: "$4,000.00",
    },
    {
      currency: "JPY",
      paperSize: "letter" as const,
      box: "0 0 612 792",
      cap: "¥4,000",
      uncapped: "¥4,527",
      total: "¥4,000",
    },
    {
      currency: "JPY",
      paperSize: "a4" as const,
      box: "0 0 595.28 841.89",
      cap: "¥4,000",
      uncapped: "¥4,527",
      total: "¥4,000",
    },
    {
      currency: "KWD",
      paperSize: "letter" as const,
      box: "0 0 612 792",
      cap: "KWD 4,000.000",
      uncapped: "KWD 4,527.288",
      total: "KWD 4,000.000",
    },
    {
      currency: "KWD",
      paperSize: "a4" as const,
      box: "0 0 595.28 841.89",
      cap: "KWD 4,000.000",
      uncapped: "KWD 4,527.288",
      total: "KWD 4,000.000",
    },
  ]) {
    it(`lays a ${currency} invoice out on ${paperSize} paper (${box}): parties, rule names, the cap, the total`, async () => {
      const minor = currency === "JPY" ? 0 : currency === "KWD" ? 3 : 2;
      const amount = new Big(4000).toFixed(minor);
      const pdfInput: InvoicePdfInput = {
        ...input(
          {
            lines: [
              {
                kind: "usage",
                description: "Card processing",
                quantity: "192650.55",
                unitPrice: "0.0235",
                amount,
                rule: { type: "usage", model: "percentage", rate: "0.0235", monthly_cap: amount },
              },
            ],
            subtotal: amount,
            tax: new Big(0).toFixed(minor),
            total: amount,
          },
          currency,
        ),
        seller: {
          name: "Northwind Payments Ltd",
          address: "1 Harbour Road\nDublin D02 X285",
          taxId: "IE1234567T",
          logo: null,
          paymentInstructions: "SEPA transfer",
          footer: null,
        },
        customer: {
          name: "Société Générale",
          address: "29 Boulevard Haussmann\n75009 Paris",
          country: "France",
          email: "ap@example.fr",
          taxId: "FR40303265045",
        },
        paperSize,
      };
      const pdf = await renderInvoicePdf(pdfInput);
      assert.equal(mediaBox(pdf), box);
      const text = (await pdfText(pdf)).replace(/\u00a0/g, " ");
      const flowing = text.replace(/\s+/g, " ");
      for (const words of [
        "Northwind Payments Ltd",
        "Dublin D02 X285",
        "Tax ID: IE1234567T",
        "Société Générale",
        "75009 Paris",
        "France",
        "Tax ID: FR40303265045",
        "Card processing",
        "2.35%",
        `capped at the monthly cap of ${cap}; uncapped ${uncapped}`,
        `Total due ${total}`,
      ])
        assert.ok(flowing.includes(words), `${currency}: ${words}\n${text}`);
    });
  }

  it("continues a long table on the next page with its header", async () => {
    const many = Array.from({ length: 120 }, (_, i) => ({
      description: `metric_${i} usage`,
      quantity: "1",
      unitPrice: "1",
      amount: "1",
    }));
    const text = await pdfText(await renderInvoicePdf(input({ lines: many })));
    assert.match(text, /Page 1 of [2-9]/);
    assert.match(text, /Charges of Invoice INV-000042, continued/);
    assert.ok(text.includes("metric_119 usage"));
  });
});

describe("invoice PDF with the largest amounts", () => {
  const HUGE = "99999999999999.99";
  // The most a line can reach: the largest quantity the API takes at the largest price it takes.
  const MAX_DECIMAL = "999999999999999.999999999999";
  const cases: Array<{ currency: string; amount: string; tax: string }> = [
    { currency: "USD", amount: HUGE, tax: "8999999999999.99" },
    { currency: "CHF", amount: HUGE, tax: "7699999999999.99" },
    { currency: "KWD", amount: "99999999999999.999", tax: "4999999999999.999" },
    { currency: "JPY", amount: "99999999999999", tax: "9999999999999" },
  ];
  for (const { currency, amount, tax } of cases) {
    it(`keeps every ${currency} amount whole on one line, and the totals on their own lines in order`, async () => {
      const lines = [
        { description: "Monthly minimum", quantity: "1", unitPrice: amount, amount },
        ...Array.from({ length: 8 }, (_, i) => ({
          description: `wire_${i} usage`,
          quantity: "999999999999.999",
          unitPrice: "99.999999999999",
          amount,
        })),
        {
          description: "fx usage at the largest price",
          quantity: MAX_DECIMAL,
          unitPrice: MAX_DECIMAL,
          amount: new Big(MAX_DECIMAL).times(MAX_DECIMAL).toFixed(0),
        },
      ];
      const subtotal = lines.reduce((sum, l) => sum.plus(l.amount), new Big(0));
      const total = subtotal.plus(tax);
      const pdfInput = input({ lines, subtotal: subtotal.toFixed(), tax, total: total.toFixed() }, currency);
      const words = invoiceWords(pdfInput);
      const nbsp = (text: string) => text.replace(/\u00a0/g, " ");
      const text = nbsp(await pdfText(await renderInvoicePdf(pdfInput)));
      const rows = text.split("\n");
      const amounts = [
        ...words.lines.flatMap((cells) => cells.slice(1)),
        ...words.totals.map(([, value]) => value),
      ].map(nbsp);
      for (const figure of amounts)
        assert.ok(
          rows.some((row) => row.includes(figure)),
          `${figure} whole on one line\n${text}`,
        );
      const at = (label: string, value: string) => {
        const index = rows.findIndex((row) => new RegExp(`^\\s*${label}\\s+`).test(row));
        assert.ok(index >= 0, `${label}\n${text}`);
        assert.ok(rows[index]!.includes(nbsp(value)), `${label} with ${value} on one line: ${rows[index]}`);
        return index;
      };
      const [subtotalRow, taxRow, totalRow] = words.totals.map(([label, value]) => at(label, value));
      assert.ok(
        subtotalRow! < taxRow! && taxRow! < totalRow!,
        `subtotal, tax and total in order on distinct lines\n${text}`,
      );
      assert.match(rows[totalRow!]!, new RegExp(`Total due\\s+${nbsp(words.totals[2]![1]).replace(/[$.]/g, "\\$&")}`));
    });
  }
});
