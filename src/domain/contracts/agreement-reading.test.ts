import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import PDFDocument from "pdfkit";
import { fcParams } from "../../../test/support/rating-reference.js";
import { inspectPdf, type PdfTextItem } from "../../platform/pdf-text.js";
import { Big, fractionDigits, minorUnitExponent } from "../kernel/money.js";
import { type AgreementPdfInput, renderAgreementPdf } from "./agreement-pdf.js";
import { type AgreementReading, readAgreementTerms, type ReadRule } from "./agreement-reading.js";
import { agreementInput } from "../../../test/fixtures/agreement-input.js";

const agreement = agreementInput;

async function textOf(input: AgreementPdfInput): Promise<{ pageCount: number; items: PdfTextItem[] }> {
  const inspection = await inspectPdf(await renderAgreementPdf(input), { queueKey: "test", textPages: 20 });
  assert.equal(inspection.kind, "readable");
  return inspection.kind === "readable" ? inspection : { pageCount: 0, items: [] };
}

async function read(input: AgreementPdfInput): Promise<AgreementReading | null> {
  return readAgreementTerms((await textOf(input)).items);
}

/** The terms an agreement says, as the reader should read them back. */
function terms(input: AgreementPdfInput, rules: ReadRule[]): AgreementReading {
  return {
    customer_name: input.customerName,
    contract_id: input.contractId,
    start_date: input.startDate,
    end_date: input.endDate,
    currency: input.currency,
    rules,
  };
}

const SAMPLE_PROGRAM: AgreementPdfInput["rules"] = [
  {
    id: "r1",
    name: "Domestic wire",
    type: "usage",
    model: "flat",
    metric: "domestic_wire",
    amount: "20.00",
    currency: "USD",
  },
  {
    id: "r2",
    name: "International wire",
    type: "usage",
    model: "flat",
    metric: "international_wire",
    amount: "30.00",
    currency: "USD",
  },
  {
    id: "r3",
    name: "Monthly minimum",
    type: "minimum",
    model: "flat",
    amount: "1000.00",
    frequency: "monthly",
    currency: "USD",
  },
];

const MANY_RULES: AgreementPdfInput["rules"] = Array.from({ length: 40 }, (_, i) =>
  i % 2 === 0
    ? {
        id: `r${i}`,
        name: `Usage rule ${i + 1}`,
        type: "usage",
        model: "flat",
        amount: `${i + 1}.50`,
        metric: `metric_${i + 1}`,
      }
    : {
        id: `r${i}`,
        name: `Percent rule ${i + 1}`,
        type: "usage",
        model: "percentage",
        rate: "0.0125",
        metric: `metric_${i + 1}`,
      },
);

describe("readAgreementTerms", () => {
  const cases: Array<{ name: string; input: AgreementPdfInput; rules: ReadRule[]; pages?: number }> = [
    {
      name: "USD, the sample program, on a sample agreement (watermarked)",
      input: agreement({ sample: true, rules: SAMPLE_PROGRAM, minimumAmount: "1000.00" }),
      rules: [
        { name: "Domestic wire", type: "usage", model: "flat", amount: "20.00", metric: "domestic_wire" },
        { name: "International wire", type: "usage", model: "flat", amount: "30.00", metric: "international_wire" },
        { name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000.00" },
      ],
    },
    {
      name: "EUR: a wrapping name, a monthly cap, a counterparty, a percentage, a subscription and a one-time fee",
      input: agreement({
        currency: "EUR",
        customerName: "Müller & Söhne GmbH",
        rules: [
          {
            id: "sepa",
            name: "Domestic and SEPA credit transfers received from business customers, long-distance",
            type: "usage",
            model: "flat",
            amount: "1234.5",
            metric: "sepa_credit_transfer_received",
            monthly_cap: "5000",
            counterparty: "Deutsche Bank AG Frankfurt",
          },
          { id: "card", name: "Card volume", type: "usage", model: "percentage", rate: "0.029", metric: "card_volume" },
          { id: "fee", name: "Platform fee", type: "subscription", model: "flat", amount: "99", frequency: "monthly" },
          { id: "setup", name: null, type: "one_time", model: "flat", amount: "250" },
        ],
      }),
      rules: [
        {
          name: "Domestic and SEPA credit transfers received from business customers, long-distance",
          type: "usage",
          model: "flat",
          amount: "1234.50",
          metric: "sepa_credit_transfer_received",
          monthly_cap: "5000.00",
          counterparty: "Deutsche Bank AG Frankfurt",
        },
        { name: "Card volume", type: "usage", model: "percentage", rate: "0.029", metric: "card_volume" },
        { name: "Platform fee", type: "subscription", model: "flat", amount: "99.00" },
        { name: "setup", type: "one_time", model: "flat", amount: "250.00" },
      ],
    },
    {
      name: "JPY, a currency without decimals",
      input: agreement({
        currency: "JPY",
        rules: [
          {
            id: "a",
            name: "Transfers",
            type: "usage",
            model: "flat",
            amount: "1500",
            metric: "transfer",
            monthly_cap: "2000000",
          },
          { id: "b", name: "Base fee", type: "subscription", model: "flat", amount: "10000" },
        ],
        minimumAmount: "50000",
      }),
      rules: [
        { name: "Transfers", type: "usage", model: "flat", amount: "1500", metric: "transfer", monthly_cap: "2000000" },
        { name: "Base fee", type: "subscription", model: "flat", amount: "10000" },
      ],
    },
    {
      name: "KWD, a currency with three decimals",
      input: agreement({
        currency: "KWD",
        rules: [
          {
            id: "a",
            name: "Transfers",
            type: "usage",
            model: "flat",
            amount: "1.002",
            metric: "transfer",
            monthly_cap: "5000",
          },
          { id: "b", name: "Base fee", type: "subscription", model: "flat", amount: "12.5" },
          { id: "c", name: "Fee share", type: "usage", model: "percentage", rate: "0.123456789012", metric: "volume" },
        ],
      }),
      rules: [
        {
          name: "Transfers",
          type: "usage",
          model: "flat",
          amount: "1.002",
          metric: "transfer",
          monthly_cap: "5000.000",
        },
        { name: "Base fee", type: "subscription", model: "flat", amount: "12.500" },
        { name: "Fee share", type: "usage", model: "percentage", rate: "0.123456789012", metric: "volume" },
      ],
    },
    {
      name: "an open-ended term",
      input: agreement({ startDate: "2024-02-29", endDate: null, rules: SAMPLE_PROGRAM.slice(0, 1) }),
      rules: [{ name: "Domestic wire", type: "usage", model: "flat", amount: "20.00", metric: "domestic_wire" }],
    },
    {
      name: "a customer name and a contract ID that wrap over several lines",
      input: agreement({
        customerName:
          "The Extraordinarily Long-Named International Trading and Logistics Company of Northern Europe Limited",
        contractId: "extraordinarily_long_named_international_trading_2026",
        startDate: "2026-09-30",
        endDate: "2027-09-30",
        rules: SAMPLE_PROGRAM.slice(2),
      }),
      rules: [{ name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000.00" }],
    },
    {
      name: "40 rules: the table continues on the next page",
      input: agreement({ sample: true, rules: MANY_RULES }),
      rules: MANY_RULES.map((r) => ({
        name: r.name ?? r.id,
        type: "usage",
        model: r.model === "flat" ? "flat" : "percentage",
        ...(r.model === "flat" ? { amount: r.amount ?? "" } : { rate: r.rate ?? "" }),
        metric: r.metric ?? "",
      })),
      pages: 2,
    },
    {
      name: "a price per unit with more decimals than the currency's",
      input: agreement({
        rules: [{ id: "api", name: "API calls", type: "usage", model: "flat", amount: "0.0025", metric: "api_call" }],
      }),
      rules: [{ name: "API calls", type: "usage", model: "flat", amount: "0.0025", metric: "api_call" }],
    },
    {
      name: "no rules at all",
      input: agreement(),
      rules: [],
    },
  ];
  for (const c of cases) {
    it(`reads ${c.name}`, async () => {
      const text = await textOf(c.input);
      if (c.pages !== undefined) {
        assert.ok(text.pageCount >= c.pages, `the agreement has ${text.pageCount} pages`);
        assert.ok(
          text.items.some((item) => item.page > 1 && item.text === "Pricing (continued)"),
          "the table continues",
        );
      }
      assert.deepEqual(readAgreementTerms(text.items), terms(c.input, c.rules));
    });
  }

  it("reads nothing from a PDF that is not an agreement", async () => {
    const pdf = await new Promise<Buffer>((resolve) => {
      const doc = new PDFDocument();
      const chunks: Buffer[] = [];
      doc.on("data", (chunk: Buffer) => chunks.push(chunk));
      doc.on("end", () => resolve(Buffer.concat(chunks)));
      doc.text("Invoice 2026-001");
      doc.text("Currency USD. Term: 1 January 2026 – 31 December 2026.");
      doc.text("Name Type Metric Price Monthly cap Counterparty");
      doc.end();
    });
    const inspection = await inspectPdf(pdf, { queueKey: "test", textPages: 20 });
    assert.equal(inspection.kind, "readable");
    assert.equal(readAgreementTerms(inspection.kind === "readable" ? inspection.items : []), null);
    assert.equal(readAgreementTerms([]), null);
  });

  it("leaves out a row it cannot read, and a field, rather than guess", async () => {
    const { items } = await textOf(agreement({ rules: SAMPLE_PROGRAM, minimumAmount: "1000.00" }));
    const altered = items.map((item) => {
      if (item.text === "$30.00 per unit") return { ...item, text: "$30.00 per month" };
      if (item.text === "USD") return { ...item, text: "US dollars" };
      if (item.text.startsWith("1 January 2026")) return { ...item, text: "1 Janvier 2026 – 31 December 2026" };
      return item;
    });
    const reading = readAgreementTerms(altered);
    assert.equal(reading?.currency, null);
    assert.equal(reading?.start_date, null);
    assert.equal(reading?.end_date, null);
    assert.deepEqual(
      reading?.rules.map((r) => r.name),
      ["Domestic wire", "Monthly minimum"],
    );
  });

  it("does not read a price in another currency's symbol", async () => {
    const { items } = await textOf(agreement({ rules: SAMPLE_PROGRAM.slice(0, 2) }));
    const euros = items.map((item) => (item.text === "$20.00 per unit" ? { ...item, text: "€20.00 per unit" } : item));
    assert.deepEqual(
      readAgreementTerms(euros)?.rules.map((r) => r.name),
      ["International wire"],
    );
  });
});

describe("readAgreementTerms, property: what an agreement prints reads back", () => {
  const word = (max: number) => fc.stringMatching(new RegExp(`^[A-Za-z0-9]{1,${max}}$`));
  const words = (count: number, max: number) =>
    fc.array(word(max), { minLength: 1, maxLength: count }).map((w) => w.join(" "));
  /** An amount with at most `decimals` decimals, as the domain stores it (at least the currency's). */
  const amount = (currency: string) =>
    fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 9n }), fc.integer({ min: 0, max: minorUnitExponent(currency) }))
      .map(([n, decimals]) => new Big(n.toString()).div(10 ** decimals).toFixed());
  const rate = fc.integer({ min: 10, max: 5000 }).map((n) => new Big(n).div(10000).toFixed());
  const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

  const rule = (currency: string) =>
    fc.oneof(
      fc.record({
        type: fc.constant("usage"),
        model: fc.constant("flat"),
        amount: amount(currency),
        metric: fc.stringMatching(/^[a-z_]{1,20}$/),
        monthly_cap: optional(amount(currency)),
        counterparty: optional(words(3, 8)),
      }),
      fc.record({
        type: fc.constant("usage"),
        model: fc.constant("percentage"),
        rate,
        metric: fc.stringMatching(/^[a-z_]{1,20}$/),
        monthly_cap: optional(amount(currency)),
        counterparty: optional(words(3, 8)),
      }),
      fc.record({
        type: fc.constantFrom("subscription", "minimum", "one_time"),
        model: fc.constant("flat"),
        amount: amount(currency),
      }),
    );

  const scenario = fc.constantFrom("USD", "EUR", "JPY", "KWD").chain((currency) =>
    fc.record({
      currency: fc.constant(currency),
      customerName: words(8, 10),
      contractId: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,44}$/),
      start: fc.integer({ min: 0, max: 20000 }),
      days: optional(fc.integer({ min: 0, max: 2000 })),
      sample: fc.boolean(),
      rules: fc.array(fc.record({ name: words(4, 6), fields: rule(currency) }), { maxLength: 12 }),
    }),
  );

  const day = (offset: number): string =>
    new Date(Date.UTC(2000, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);
  const money = (value: string, currency: string): string =>
    new Big(value).toFixed(Math.max(minorUnitExponent(currency), fractionDigits(new Big(value))));

  it("reads the customer, the contract ID, the term, the currency and every rule", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const input = agreement({
          currency: s.currency,
          customerName: s.customerName,
          contractId: s.contractId,
          startDate: day(s.start),
          endDate: s.days === undefined ? null : day(s.start + s.days),
          sample: s.sample,
          rules: s.rules.map(({ name, fields }, i) => ({ id: `r${i}`, name, ...fields })),
        });
        const expected = s.rules.map(({ name, fields }): ReadRule => {
          const read: ReadRule = {
            name,
            type: fields.type as ReadRule["type"],
            model: fields.model as ReadRule["model"],
          };
          if ("amount" in fields) read.amount = money(fields.amount, s.currency);
          if ("rate" in fields) read.rate = fields.rate;
          if ("metric" in fields) read.metric = fields.metric;
          if ("monthly_cap" in fields && fields.monthly_cap !== undefined)
            read.monthly_cap = money(fields.monthly_cap, s.currency);
          if ("counterparty" in fields && fields.counterparty !== undefined) read.counterparty = fields.counterparty;
          return read;
        });
        assert.deepEqual(await read(input), terms(input, expected));
      }),
      fcParams(25),
    );
  });
});
