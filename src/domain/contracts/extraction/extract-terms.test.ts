import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractTerms } from "./extract-terms.js";
import type { ExtractionItem } from "./extraction-types.js";

const SELLER = { sellerNames: ["Northwind Payments Ltd"] };

/**
 * A page of text as a PDF's text layer gives it: one run per line at the left margin, 14 points apart; a line
 * with "|" in it is a table row, its cells 150 points apart.
 */
function page(lines: readonly string[], number = 1): ExtractionItem[] {
  return lines.flatMap((line, k) =>
    line.split("|").map((cell, c) => ({
      page: number,
      x: 72 + c * 150,
      y: 760 - k * 14,
      text: cell.trim(),
      height: 10,
      width: cell.trim().length * 5,
    })),
  );
}

const read = (lines: readonly string[]) => extractTerms(page(lines), SELLER);

describe("reading an agreement's terms from prose", () => {
  const prose = read([
    "MASTER SERVICES AGREEMENT",
    "Agreement No. MSA-2026-0142",
    "This Agreement is made between Northwind Payments Ltd, with its registered office at 1 Harbour",
    'Exchange Square, London E14 9GE ("Provider"), and Harbor Freight Logistics Inc., with its principal',
    'place of business at 400 Pier Avenue, Suite 12, Oakland, CA 94607 ("Customer").',
    "",
    "1. Term. This Agreement is effective January 5, 2026 and ends on January 4, 2027.",
    "2. Fees. Customer commits to a minimum monthly commitment of $1,500.00 and pays a platform fee of",
    "$250.00 per month. Card volume is charged at 2.35% of card volume, capped at $4,000 per month.",
    "Provider charges $0.28 per ACH debit and $18.00 per international wire to HSBC UK.",
    "3. Payment. Customer shall pay each invoice within fifteen (15) days of its date. Invoices go to",
    "ap@harborfreight-logistics.example. Overdue amounts bear interest at 1.5% per month.",
    "4. Liability. Each party's aggregate liability is capped at $1,000,000. Either party may end this",
    "Agreement on thirty (30) days' notice. Notices to Provider: contracts@northwind.example.",
  ]);

  it("proposes the customer, not the seller, with its address and billing email", () => {
    assert.deepEqual(prose.terms.customer, {
      name: "Harbor Freight Logistics Inc.",
      address: "400 Pier Avenue, Suite 12, Oakland, CA 94607",
      email: "ap@harborfreight-logistics.example",
    });
  });

  it("proposes the number, the term, the currency and the payment terms", () => {
    const { contract_id, start_date, end_date, currency, payment_terms_days } = prose.terms;
    assert.deepEqual(
      { contract_id, start_date, end_date, currency, payment_terms_days },
      {
        contract_id: "MSA-2026-0142",
        start_date: "2026-01-05",
        end_date: "2027-01-04",
        currency: "USD",
        payment_terms_days: 15,
      },
    );
  });

  it("proposes the minimum, the fee and every usage price, and none of the distracting amounts", () => {
    assert.deepEqual(prose.terms.rules, [
      { name: "Monthly minimum", type: "minimum", model: "flat", amount: "1500.00" },
      { name: "Platform fee", type: "subscription", model: "flat", frequency: "monthly", amount: "250.00" },
      {
        name: "Card volume",
        type: "usage",
        metric: "card_volume",
        model: "percentage",
        rate: "0.0235",
        monthly_cap: "4000",
      },
      { name: "ACH debit", type: "usage", metric: "ach_debit", model: "flat", amount: "0.28" },
      {
        name: "International wire",
        type: "usage",
        metric: "international_wire",
        model: "flat",
        amount: "18.00",
        counterparty: "HSBC UK",
      },
    ]);
  });

  it("gives every value the page and the exact text it came from", () => {
    const all = prose.fields;
    assert.ok(all.length >= 15);
    const terms = all.find((f) => f.field === "payment_terms_days");
    assert.equal(terms?.page, 1);
    assert.match(terms?.source_text ?? "", /within fifteen \(15\) days of its date/);
    const cap = all.find((f) => f.field === "rules.2.monthly_cap");
    assert.match(cap?.source_text ?? "", /capped at \$4,000 per month/);
    for (const field of all) {
      assert.ok(field.confidence > 0 && field.confidence <= 1, field.field);
      assert.ok(field.source_text.length > 0, field.field);
    }
  });
});

describe("reading an agreement laid out as labels and a table", () => {
  const form = read([
    "ORDER FORM",
    "Order Form No.: NW-7781",
    "Customer: Lakeside Analytics Ltd",
    "Address: 9 Canal Street, Manchester M1 3HE, United Kingdom",
    "Billing email: billing@lakeside-analytics.example",
    "Start date: 1 February 2026",
    "End date: 31 January 2027",
    "Currency: GBP",
    "Payment terms: Net 30",
    "Platform fee: £400.00 per month",
    "Service|Price",
    "Payment initiation|£0.15 per payment",
    "Account verification|£0.05 per check",
    "Card processing|1.9% + £0.20 per transaction",
  ]);

  it("reads each labelled value", () => {
    assert.deepEqual(
      { ...form.terms, rules: undefined },
      {
        customer: {
          name: "Lakeside Analytics Ltd",
          address: "9 Canal Street, Manchester M1 3HE, United Kingdom",
          email: "billing@lakeside-analytics.example",
        },
        contract_id: "NW-7781",
        start_date: "2026-02-01",
        end_date: "2027-01-31",
        currency: "GBP",
        payment_terms_days: 30,
        rules: undefined,
      },
    );
  });

  it("reads every row of the price table, a percentage plus a fixed fee included", () => {
    assert.deepEqual(form.terms.rules, [
      { name: "Platform fee", type: "subscription", model: "flat", frequency: "monthly", amount: "400.00" },
      { name: "Payment initiation", type: "usage", metric: "payment_initiation", model: "flat", amount: "0.15" },
      { name: "Account verification", type: "usage", metric: "account_verification", model: "flat", amount: "0.05" },
      {
        name: "Card processing",
        type: "usage",
        metric: "card_processing",
        model: "percentage",
        rate: "0.019",
        fixed_fee: "0.20",
      },
    ]);
  });
});

describe("wordings and what is never proposed", () => {
  it("reads a term of months from its start, and an open-ended one as null", () => {
    const months = read(["This Agreement commences on 1 March 2026 and continues for twelve (12) months."]);
    assert.equal(months.terms.start_date, "2026-03-01");
    assert.equal(months.terms.end_date, "2027-02-28");
    const open = read(["The Services start on March 1, 2026 and continue until terminated by either party."]);
    assert.equal(open.terms.end_date, null);
  });

  it("reads a numeric date in the document's order and warns which order it used", () => {
    const british = read(["Start date: 05/01/2026", "Fees are payable in GBP."]);
    assert.equal(british.terms.start_date, "2026-01-05");
    assert.equal(british.warnings[0]?.code, "date_order");
    assert.match(british.warnings[0]?.message ?? "", /day first/);
    const american = read(["Start date: 05/01/2026", "Fees are payable in USD."]);
    assert.equal(american.terms.start_date, "2026-05-01");
    assert.match(american.warnings[0]?.message ?? "", /month first/);
  });

  it("does not take a notice period, a late fee or a liability cap for terms or prices", () => {
    const distractors = read([
      "Either party may terminate this Agreement on thirty (30) days' written notice.",
      "Late payments bear interest at 1.5% per month. Liability is capped at $1,000,000.",
      "A late fee of $25.00 per invoice applies to overdue invoices.",
    ]);
    assert.equal(distractors.terms.payment_terms_days, undefined);
    assert.equal(distractors.terms.rules, undefined);
  });

  it("proposes nothing from a page with no terms, and says so", () => {
    const nothing = read(["Lorem ipsum dolor sit amet, consectetur adipiscing elit."]);
    assert.deepEqual(nothing.terms, {});
    assert.deepEqual(nothing.fields, []);
    assert.equal(nothing.warnings[0]?.code, "nothing_found");
    assert.deepEqual(extractTerms([], SELLER), { terms: {}, fields: [], warnings: [] });
  });

  it("reads graduated and volume tiers written in a sentence", () => {
    const graduated = read([
      "API calls are billed monthly: the first 10,000 API calls at $0.010 each, the next 40,000 at $0.008 each,",
      "and above 50,000 at $0.005 each.",
    ]);
    assert.deepEqual(graduated.terms.rules, [
      {
        name: "API calls",
        type: "usage",
        metric: "api_calls",
        model: "graduated",
        tiers: [
          { up_to: "10000", unit_amount: "0.010" },
          { up_to: "50000", unit_amount: "0.008" },
          { up_to: null, unit_amount: "0.005" },
        ],
      },
    ]);
    const volume = read([
      "Messages: first 1,000 messages €0.05 per message; next 9,000 €0.04; over 10,000 €0.03, all units priced at the tier reached.",
    ]);
    assert.equal(volume.terms.rules?.[0]?.model, "volume");
  });

  it("reads a page set in two columns column by column", () => {
    const left = [
      "1. Parties. This Agreement is made between",
      'Northwind Payments Ltd ("Provider") and',
      'Acme Widgets LLC ("Customer"), with its',
      "principal place of business at 77 Elm Road,",
      "Austin, TX 78701.",
      "2. Payment. Customer shall pay invoices",
      "within thirty (30) days of the invoice date.",
    ];
    const right = [
      "3. Prices. Provider charges $0.05 per API",
      "request and 1.2% of payout volume. The",
      "prices are stated in US dollars and apply",
      "from the Effective Date of March 1, 2026.",
      "4. Notices. Either party may give notice",
      "in writing to the other party at any time",
      "by email or by post to its address above.",
    ];
    const items = [
      ...left.map((text, k) => ({ page: 1, x: 72, y: 700 - k * 14, text, height: 10, width: 220 })),
      ...right.map((text, k) => ({ page: 1, x: 320, y: 700 - k * 14, text, height: 10, width: 220 })),
    ];
    const { terms } = extractTerms(items, SELLER);
    assert.equal(terms.customer?.name, "Acme Widgets LLC");
    assert.equal(terms.customer?.address, "77 Elm Road, Austin, TX 78701");
    assert.equal(terms.payment_terms_days, 30);
    assert.equal(terms.start_date, "2026-03-01");
    assert.deepEqual(
      terms.rules?.map((r) => [r.name, r.amount ?? r.rate]),
      [
        ["API request", "0.05"],
        ["Payout volume", "0.012"],
      ],
    );
  });

  it("lowers the confidence of text read by OCR", () => {
    const items = page(["Payment terms: Net 30"]).map((item) => ({ ...item, confidence: 0.7 }));
    const [field] = extractTerms(items, SELLER).fields;
    assert.equal(field?.field, "payment_terms_days");
    assert.ok((field?.confidence ?? 1) <= 0.7);
  });
});
