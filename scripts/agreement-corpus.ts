/**
 * `npm run corpus`: writes the agreement corpus (docs/testing.md, "The agreement corpus") to
 * test/fixtures/agreements/: agreements in varied layouts and wordings, each `<name>.pdf` with `<name>.json`
 * (`{ description, seller, scanned, expected }`, expected being the terms an extraction should propose).
 * Deterministic: a seeded generator picks every party, date, price and wording, so the files are the same on
 * every run. Scanned ones are the text ones drawn at 150–300 dpi, turned a little and grained
 * (test/support/agreement-files.ts, scanPdf).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import PDFDocument from "pdfkit";
import type { ExtractedRule, ExtractedTerms } from "../src/domain/contracts/extraction/extraction-types.js";
import { MONTH_NAMES } from "../src/domain/kernel/calendar-date.js";
import { loadPdfFonts } from "../src/platform/pdf-fonts.js";
import { proseAgreement, scanPdf } from "../test/support/agreement-files.js";

const OUT = join(import.meta.dirname, "..", "test", "fixtures", "agreements");

/** A small seeded generator (xorshift): the corpus is the same on every run. */
function generator(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  return {
    next,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    int: (low: number, high: number) => low + Math.floor(next() * (high - low + 1)),
    chance: (p: number) => next() < p,
  };
}
type Random = ReturnType<typeof generator>;

const SELLERS = [
  {
    name: "Northwind Payments Ltd",
    address: "1 Harbour Exchange Square, London E14 9GE",
    email: "contracts@northwind.example",
  },
  {
    name: "Contoso Billing Inc.",
    address: "500 Howard Street, San Francisco, CA 94105",
    email: "legal@contoso-billing.example",
  },
  {
    name: "Fabrikam Transfers GmbH",
    address: "Kaiserstraße 12, 60311 Frankfurt am Main, Germany",
    email: "vertrag@fabrikam.example",
  },
  {
    name: "Tailspin Ledger Pty Ltd",
    address: "88 George Street, Sydney NSW 2000, Australia",
    email: "sales@tailspin.example",
  },
];
const CUSTOMERS = [
  [
    "Harbor Freight Logistics Inc.",
    "400 Pier Avenue, Suite 12, Oakland, CA 94607",
    "ap@harborfreight-logistics.example",
  ],
  ["Lakeside Analytics Ltd", "9 Canal Street, Manchester M1 3HE, United Kingdom", "billing@lakeside-analytics.example"],
  ["Bluebird Health, Inc.", "55 Market Street, San Francisco, CA 94105", "accounts@bluebirdhealth.example"],
  ["Müller Logistik GmbH", "Hafenstraße 12, 20457 Hamburg, Germany", "rechnung@mueller-logistik.example"],
  ["Granite Peak Outfitters LLC", "1200 Pearl Street, Boulder, CO 80302", "finance@granitepeak.example"],
  ["Koala Freight Pty Ltd", "17 Wharf Road, Melbourne VIC 3000, Australia", "accounts@koalafreight.example"],
  ["Maple Grove Dental Corp.", "250 King Street West, Toronto, ON M5V 1J2, Canada", "ap@maplegrovedental.example"],
  ["Solaris Energie S.A.", "14 Rue de la Paix, 75002 Paris, France", "factures@solaris-energie.example"],
  ["Brightline Media Group", "77 Elm Road, Austin, TX 78701", "payables@brightline.example"],
  ["Alpine Precision AG", "Bahnhofstrasse 40, 8001 Zürich, Switzerland", "kreditoren@alpine-precision.example"],
  ["Redwood Data Systems LLC", "3100 Main Street, Dallas, TX 75226", "ap@redwooddata.example"],
  ["Thames Valley Couriers Ltd", "21 Station Road, Reading RG1 1LG, United Kingdom", "accounts@tvcouriers.example"],
];
/** Currencies with the symbol an agreement writes amounts with, and whether numeric dates there are day first. */
const CURRENCIES: Record<string, { symbol: string; words: string; dayFirst: boolean }> = {
  USD: { symbol: "$", words: "US dollars", dayFirst: false },
  EUR: { symbol: "€", words: "euros", dayFirst: true },
  GBP: { symbol: "£", words: "pounds sterling", dayFirst: true },
  CAD: { symbol: "C$", words: "Canadian dollars", dayFirst: false },
  AUD: { symbol: "A$", words: "Australian dollars", dayFirst: true },
  CHF: { symbol: "CHF ", words: "Swiss francs", dayFirst: true },
};
const COUNTRY_CURRENCY: Record<string, string> = {
  "United Kingdom": "GBP",
  Germany: "EUR",
  France: "EUR",
  Australia: "AUD",
  Canada: "CAD",
  Switzerland: "CHF",
};

/** Usage prices an agreement may list: the thing priced, its unit, and a price maker. */
const USAGE: ReadonlyArray<{ name: string; unit: string; kind: "unit" | "percent" | "percent_fixed" | "tiers" }> = [
  { name: "ACH debit", unit: "ACH debit", kind: "unit" },
  { name: "International wire", unit: "international wire", kind: "unit" },
  { name: "Domestic wire", unit: "domestic wire", kind: "unit" },
  { name: "Card volume", unit: "card volume", kind: "percent" },
  { name: "Card transaction", unit: "card transaction", kind: "percent_fixed" },
  { name: "SEPA transfer", unit: "SEPA transfer", kind: "unit" },
  { name: "Account verification", unit: "account verification", kind: "unit" },
  { name: "Payment initiation", unit: "payment initiation", kind: "unit" },
  { name: "API calls", unit: "API call", kind: "tiers" },
  { name: "Chargeback", unit: "chargeback", kind: "unit" },
  { name: "Payout volume", unit: "payout volume", kind: "percent" },
  { name: "SMS message", unit: "SMS message", kind: "unit" },
  { name: "Check deposit", unit: "check deposit", kind: "unit" },
  { name: "FX conversion", unit: "FX conversion", kind: "percent" },
];
const COUNTERPARTIES = ["HSBC UK", "Citibank N.A.", "Deutsche Bank AG", "Barclays"];

const pad = (n: number) => String(n).padStart(2, "0");

interface Spec {
  name: string;
  description: string;
  layout: Layout;
  seller: (typeof SELLERS)[number];
  customer: { name: string; address: string; email: string | undefined };
  number: string | undefined;
  start: string;
  end: string | null | undefined; // undefined: not stated; null: until terminated
  termMonths: number | undefined; // end stated as a term of months
  currency: string;
  dateStyle: "long_us" | "long_uk" | "short" | "iso" | "numeric";
  paymentDays: number | undefined;
  paymentWords: "net" | "within" | "label";
  minimum: string | undefined;
  fee: { label: string; amount: string } | undefined;
  usage: ExtractedRule[];
  customerFirst: boolean;
  font: "Helvetica" | "Times-Roman" | "DejaVu";
  scan?: { dpi: number; skew: number; seed: number };
}

type Layout = "prose" | "order_form" | "two_column" | "schedule" | "key_terms" | "bullets";

const WORDS: Record<number, string> = {
  7: "seven",
  10: "ten",
  14: "fourteen",
  15: "fifteen",
  20: "twenty",
  30: "thirty",
  45: "forty-five",
  60: "sixty",
};

function money(amount: string, currency: string): string {
  const [whole, fraction] = amount.split(".");
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${CURRENCIES[currency]!.symbol}${grouped}${fraction === undefined ? "" : `.${fraction}`}`;
}

function dateWords(iso: string, style: Spec["dateStyle"], dayFirst: boolean): string {
  const [y, m, d] = iso.split("-").map(Number) as [number, number, number];
  const month = MONTH_NAMES[m - 1]!;
  if (style === "long_us") return `${month} ${d}, ${y}`;
  if (style === "long_uk") return `${d} ${month} ${y}`;
  if (style === "short") return `${d} ${month.slice(0, 3)} ${y}`;
  if (style === "iso") return iso;
  return dayFirst ? `${pad(d)}/${pad(m)}/${y}` : `${pad(m)}/${pad(d)}/${y}`;
}

function addMonthsMinusDay(iso: string, months: number): string {
  const [y, m, d] = iso.split("-").map(Number) as [number, number, number];
  const at = new Date(Date.UTC(y, m - 1 + months, d) - 86_400_000);
  return at.toISOString().slice(0, 10);
}

/** A usage rule of the kind, priced at random. */
function usageRule(random: Random, usage: (typeof USAGE)[number]): ExtractedRule {
  const metric = usage.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_|_$/g, "");
  const rule: ExtractedRule = { name: usage.name, type: "usage", metric, model: "flat" };
  if (usage.kind === "unit") {
    rule.amount = random.pick(["0.05", "0.15", "0.28", "0.40", "1.25", "12.00", "18.00", "25.00"]);
    if (usage.name.includes("wire") && random.chance(0.5)) rule.counterparty = random.pick(COUNTERPARTIES);
  } else if (usage.kind === "percent" || usage.kind === "percent_fixed") {
    rule.model = "percentage";
    rule.rate = percentRate(random.pick(["0.5", "1.2", "1.9", "2.35", "2.9", "3.4"]));
    if (usage.kind === "percent_fixed") rule.fixed_fee = random.pick(["0.10", "0.20", "0.30"]);
    if (random.chance(0.4)) rule.monthly_cap = random.pick(["500", "2500", "4000", "10000"]);
  } else {
    rule.model = "graduated";
    rule.tiers = [
      { up_to: "10000", unit_amount: "0.010" },
      { up_to: "50000", unit_amount: "0.008" },
      { up_to: null, unit_amount: "0.005" },
    ];
  }
  return rule;
}

/** "2.35" → "0.0235" by moving the point, never through a double. */
function percentRate(percent: string): string {
  const [whole = "0", fraction = ""] = percent.split(".");
  const digits = `${whole.padStart(2, "0")}${fraction}`;
  return `0.${digits}`.replace(/0+$/, "");
}

function makeSpec(index: number, layout: Layout, random: Random): Spec {
  const seller = random.pick(SELLERS);
  const [customerName, address, email] = random.pick(CUSTOMERS) as [string, string, string];
  const country = Object.keys(COUNTRY_CURRENCY).find((c) => address.includes(c));
  const currency = country ? COUNTRY_CURRENCY[country]! : random.pick(["USD", "USD", "EUR", "GBP", "CAD"]);
  const year = random.pick([2025, 2026, 2026]);
  const start = `${year}-${pad(random.int(1, 12))}-${pad(random.pick([1, 1, 5, 15, 20]))}`;
  const endKind = random.pick(["date", "date", "months", "open", "none"]);
  const termMonths = endKind === "months" ? random.pick([12, 24, 36]) : undefined;
  const end =
    endKind === "date"
      ? addMonthsMinusDay(start, 12)
      : endKind === "months"
        ? addMonthsMinusDay(start, termMonths!)
        : endKind === "open"
          ? null
          : undefined;
  const usageCount = layout === "prose" || layout === "two_column" ? random.int(2, 4) : random.int(3, 7);
  const chosen = [...USAGE].sort(() => random.next() - 0.5).slice(0, usageCount);
  const usage = chosen.map((u) => usageRule(random, u));
  return {
    name: `${String(index).padStart(2, "0")}-${layout.replace("_", "-")}`,
    description: "",
    layout,
    seller,
    customer: { name: customerName, address, email: random.chance(0.75) ? email : undefined },
    number: random.chance(0.85)
      ? random.pick([
          `MSA-${year}-0${random.int(100, 999)}`,
          `NW-${random.int(1000, 9999)}`,
          `SOW-${random.int(10, 99)}-${random.int(100, 999)}`,
          `CN-${year}${random.int(1000, 9999)}`,
        ])
      : undefined,
    start,
    end,
    termMonths,
    currency,
    dateStyle: random.pick(["long_us", "long_uk", "short", "iso", "numeric"]),
    paymentDays: random.chance(0.85) ? random.pick([7, 14, 15, 20, 30, 45, 60]) : undefined,
    paymentWords: random.pick(["net", "within", "label"]),
    minimum: random.chance(0.6) ? random.pick(["500.00", "1,000.00", "1,500.00", "2,500.00", "10,000.00"]) : undefined,
    fee: random.chance(0.6)
      ? {
          label: random.pick(["Platform fee", "Subscription fee", "Monthly access fee", "Base fee"]),
          amount: random.pick(["99.00", "250.00", "400.00", "1,200.00"]),
        }
      : undefined,
    usage,
    customerFirst: random.chance(0.3),
    font: random.pick(["Helvetica", "Times-Roman", "DejaVu", "DejaVu"]),
  };
}

/** The terms an extraction should propose from the spec: what the document states, nothing else. */
function expectedTerms(spec: Spec): ExtractedTerms {
  const rules: ExtractedRule[] = [];
  if (spec.minimum)
    rules.push({ name: "Monthly minimum", type: "minimum", model: "flat", amount: spec.minimum.replace(/,/g, "") });
  if (spec.fee)
    rules.push({
      name: spec.fee.label,
      type: "subscription",
      model: "flat",
      frequency: "monthly",
      amount: spec.fee.amount.replace(/,/g, ""),
    });
  rules.push(...spec.usage);
  return {
    customer: {
      name: spec.customer.name,
      address: spec.customer.address,
      ...(spec.customer.email !== undefined && { email: spec.customer.email }),
    },
    ...(spec.number !== undefined && { contract_id: spec.number }),
    start_date: spec.start,
    ...(spec.end !== undefined && { end_date: spec.end }),
    currency: spec.currency,
    ...(spec.paymentDays !== undefined && { payment_terms_days: spec.paymentDays }),
    rules,
  };
}

/** The sentences of an agreement, one list per clause; the layouts arrange them. */
function clauses(spec: Spec) {
  const { currency } = spec;
  const dayFirst = CURRENCIES[currency]!.dayFirst;
  const date = (iso: string) => dateWords(iso, spec.dateStyle, dayFirst);
  const seller = `${spec.seller.name}, with its registered office at ${spec.seller.address} ("Provider")`;
  const customer = `${spec.customer.name}, with its principal place of business at ${spec.customer.address} ("Customer")`;
  const parties = spec.customerFirst
    ? `This Agreement is entered into between ${customer}, and ${seller}.`
    : `This Agreement is made between ${seller}, and ${customer}.`;
  const term =
    spec.end === undefined
      ? `The Services commence on ${date(spec.start)}.`
      : spec.end === null
        ? `This Agreement is effective ${date(spec.start)} and continues until terminated by either party.`
        : spec.termMonths !== undefined
          ? `This Agreement commences on ${date(spec.start)} and continues for a term of ${spec.termMonths} months.`
          : `This Agreement is effective ${date(spec.start)} and ends on ${date(spec.end)}.`;
  const payment =
    spec.paymentDays === undefined
      ? "Invoices are issued monthly in arrears."
      : spec.paymentWords === "net"
        ? `Invoices are issued monthly and are payable Net ${spec.paymentDays}.`
        : `Customer shall pay each invoice within ${WORDS[spec.paymentDays] ?? spec.paymentDays} (${spec.paymentDays}) days of the invoice date.`;
  const billing = spec.customer.email ? `Invoices are sent to ${spec.customer.email}.` : "";
  const fees = [
    `All fees are stated in ${CURRENCIES[currency]!.words} (${currency}).`,
    spec.minimum ? `Customer commits to a minimum monthly commitment of ${money(spec.minimum, currency)}.` : "",
    spec.fee
      ? `Customer shall pay a ${spec.fee.label.toLowerCase()} of ${money(spec.fee.amount, currency)} per month.`
      : "",
  ].filter((s) => s !== "");
  const distractors = [
    `Late payments bear interest at 1.5% per month. Either party may terminate this Agreement on thirty (30) days' written notice.`,
    `Each party's aggregate liability under this Agreement is capped at ${money("1,000,000", currency)}. Notices to Provider go to ${spec.seller.email}.`,
  ];
  return { parties, term, payment, billing, fees, distractors, date };
}

function usageSentences(spec: Spec, random: Random): string[] {
  return spec.usage.map((rule) => {
    const usage = usageOf(rule);
    const { sentence } = rebuild(rule, usage, spec.currency);
    return random.pick([
      `Provider charges ${sentence}.`,
      `${usage.name} is charged at ${sentence}.`,
      `Customer pays ${sentence}.`,
    ]);
  });
}

/** The usage a rule prices; one of the walk's own is priced by its name. */
const usageOf = (rule: ExtractedRule): (typeof USAGE)[number] =>
  USAGE.find((u) => u.name === rule.name) ?? { name: rule.name, unit: rule.name.toLowerCase(), kind: "unit" };

/** A rule's sentence and cell, written from the rule itself (so the words always say the expected values). */
function rebuild(rule: ExtractedRule, usage: (typeof USAGE)[number], currency: string) {
  if (rule.model === "graduated") {
    const s = `the first 10,000 ${usage.unit}s at ${money("0.010", currency)} each, the next 40,000 at ${money("0.008", currency)} each, and above 50,000 at ${money("0.005", currency)} each`;
    return { sentence: s, cell: s };
  }
  let sentence: string;
  let cell: string;
  if (rule.model === "flat") {
    sentence = `${money(rule.amount!, currency)} per ${usage.unit}`;
    cell = `${money(rule.amount!, currency)} per item`;
    if (rule.counterparty) {
      sentence += ` to ${rule.counterparty}`;
      cell += ` to ${rule.counterparty}`;
    }
  } else {
    const fraction = (rule.rate ?? "0.").split(".")[1]!.padEnd(2, "0");
    const percent = `${Number(fraction.slice(0, 2))}${fraction.length > 2 ? `.${fraction.slice(2)}` : ""}`;
    sentence = rule.fixed_fee
      ? `${percent}% + ${money(rule.fixed_fee, currency)} per ${usage.unit}`
      : `${percent}% of ${usage.unit}`;
    cell = rule.fixed_fee
      ? `${percent}% + ${money(rule.fixed_fee, currency)} per transaction`
      : `${percent}% of volume`;
    if (rule.monthly_cap) {
      const cap = money(rule.monthly_cap.replace(/\B(?=(\d{3})+(?!\d))/g, ","), currency);
      sentence += `, capped at ${cap} per month`;
      cell += `, capped at ${cap} per month`;
    }
  }
  return { sentence, cell };
}

/** Renders the spec's agreement with pdfkit in its layout. */
async function render(spec: Spec, random: Random): Promise<Buffer> {
  const doc = new PDFDocument({
    size: random.pick(["A4", "LETTER"]),
    margin: 60,
    info: { CreationDate: new Date(0), Title: "Agreement" },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve) => doc.on("end", resolve));
  const fonts = loadPdfFonts();
  doc.registerFont("DejaVu", fonts.regular);
  doc.registerFont("DejaVu-Bold", fonts.bold);
  // The standard fonts cannot draw € or £: an agreement in those currencies is set in DejaVu.
  const body = spec.font !== "DejaVu" && ["USD", "CAD"].includes(spec.currency) ? spec.font : "DejaVu";
  const bold = body === "DejaVu" ? "DejaVu-Bold" : body === "Times-Roman" ? "Times-Bold" : "Helvetica-Bold";
  const c = clauses(spec);
  const title = random.pick([
    "MASTER SERVICES AGREEMENT",
    "SERVICES AGREEMENT",
    "PAYMENT SERVICES AGREEMENT",
    "ORDER FORM",
  ]);
  const numberLine = spec.number
    ? random.pick([`Agreement No. ${spec.number}`, `Contract number: ${spec.number}`, `Reference: ${spec.number}`])
    : "";
  const heading = (text: string) => doc.font(bold).fontSize(11).text(text).moveDown(0.3).font(body).fontSize(10);
  const para = (text: string) => {
    if (text !== "") doc.text(text, { align: "justify" }).moveDown(0.6);
  };
  const usage = usageSentences(spec, random);
  const table = (rows: Array<[string, string]>, headers: [string, string]) => {
    const x = [doc.page.margins.left, doc.page.margins.left + 230];
    const top = doc.y;
    doc.font(bold).text(headers[0], x[0]!, top, { width: 220 }).text(headers[1], x[1]!, top, { width: 260 });
    doc.font(body);
    let y = doc.y + 4;
    for (const [name, price] of rows) {
      doc.text(name, x[0]!, y, { width: 220 });
      const afterName = doc.y;
      doc.text(price, x[1]!, y, { width: 260 });
      y = Math.max(afterName, doc.y) + 4;
    }
    doc.x = doc.page.margins.left;
    doc.y = y + 8;
  };
  const priceRows = (): Array<[string, string]> =>
    spec.usage.map((rule) => {
      const u = usageOf(rule);
      return [rule.name, rebuild(rule, u, spec.currency).cell];
    });

  doc.font(bold).fontSize(15).text(title, { align: "center" }).moveDown(0.5).font(body).fontSize(10);
  if (spec.layout === "order_form" || spec.layout === "key_terms") {
    if (numberLine) para(numberLine);
    const labels: Array<[string, string]> = [
      ["Customer", spec.customer.name],
      ["Address", spec.customer.address],
      ...(spec.customer.email ? ([["Billing email", spec.customer.email]] as Array<[string, string]>) : []),
      ["Supplier", spec.seller.name],
      [spec.end === null ? "Effective date" : "Start date", c.date(spec.start)],
      ...(spec.end ? ([["End date", c.date(spec.end)]] as Array<[string, string]>) : []),
      ["Currency", spec.currency],
      ...(spec.paymentDays !== undefined
        ? ([["Payment terms", `Net ${spec.paymentDays}`]] as Array<[string, string]>)
        : []),
      ...(spec.minimum ? ([["Monthly minimum", money(spec.minimum, spec.currency)]] as Array<[string, string]>) : []),
      ...(spec.fee
        ? ([[spec.fee.label, `${money(spec.fee.amount, spec.currency)} per month`]] as Array<[string, string]>)
        : []),
    ];
    for (const [label, value] of labels) para(`${label}: ${value}`);
    if (spec.end === null) para("The order continues until terminated by either party.");
    heading("Fees");
    if (spec.layout === "order_form") table(priceRows(), ["Service", "Price"]);
    else for (const [name, price] of priceRows()) para(`• ${name}: ${price}`);
    heading("Terms");
    for (const d of c.distractors) para(d);
  } else if (spec.layout === "bullets") {
    if (numberLine) para(numberLine);
    para(c.parties);
    heading("1. Term");
    para(c.term);
    heading("2. Fees");
    for (const f of c.fees) para(f);
    for (const [name, price] of priceRows()) para(`• ${name}: ${price}`);
    heading("3. Payment");
    para(`${c.payment} ${c.billing}`);
    heading("4. General");
    for (const d of c.distractors) para(d);
  } else if (spec.layout === "two_column") {
    if (numberLine) para(numberLine);
    const texts = [
      `1. Parties. ${c.parties}`,
      `2. Term. ${c.term}`,
      `3. Fees. ${c.fees.join(" ")}`,
      `4. Usage. ${usage.join(" ")}`,
      `5. Payment. ${c.payment} ${c.billing}`,
      `6. Liability. ${c.distractors.join(" ")}`,
    ];
    const width = (doc.page.width - 120 - 24) / 2;
    const top = doc.y;
    doc.text(texts.slice(0, 3).join("\n\n"), 60, top, { width, align: "left" });
    doc.text(texts.slice(3).join("\n\n"), 60 + width + 24, top, { width, align: "left" });
  } else {
    // prose, and schedule (the prices in a table on a last page)
    if (numberLine) para(numberLine);
    para(c.parties);
    para(`1. Term. ${c.term}`);
    para(`2. Fees. ${c.fees.join(" ")}`);
    if (spec.layout === "prose") para(`3. Usage. ${usage.join(" ")}`);
    else para("3. Usage. Usage is charged at the prices in Schedule A.");
    para(`4. Payment. ${c.payment} ${c.billing}`);
    para(`5. Liability. ${c.distractors.join(" ")}`);
    if (spec.layout === "schedule") {
      doc.addPage();
      heading("SCHEDULE A - FEES");
      table(priceRows(), ["Description", "Unit price"]);
    }
  }
  doc.moveDown();
  doc.text(`Signed for ${spec.seller.name} and for ${spec.customer.name}.`);
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

const LAYOUTS: Layout[] = ["prose", "order_form", "two_column", "schedule", "key_terms", "bullets"];
const SCANS = [
  { dpi: 150, skew: 0.6 },
  { dpi: 200, skew: -0.8 },
  { dpi: 240, skew: 1.2 },
  { dpi: 300, skew: -1.5 },
  { dpi: 200, skew: 0.4 },
  { dpi: 300, skew: 0.9 },
  { dpi: 150, skew: -0.3 },
  { dpi: 240, skew: -1.0 },
];

/**
 * The two agreements the dashboard's browser walk uploads (test/system/dashboard-browser.test.ts): the prose
 * agreement the API tests read too, and an order form scanned at 200 dpi.
 */
async function walkAgreements() {
  const northwind = SELLERS[0]!;
  const prose = await proseAgreement();
  const proseTerms: ExtractedTerms = {
    customer: {
      name: "Harbor Freight Logistics Inc.",
      address: "400 Pier Avenue, Suite 12, Oakland, CA 94607",
      email: "ap@harborfreight-logistics.example",
    },
    contract_id: "MSA-2026-0142",
    start_date: "2026-01-05",
    end_date: "2027-01-04",
    currency: "USD",
    payment_terms_days: 15,
    rules: [
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
    ],
  };
  write("walk-prose", prose, {
    description: "the browser walk's prose agreement, three pages",
    seller: northwind.name,
    scanned: false,
    expected: proseTerms,
  });
  const spec: Spec = {
    name: "walk-scanned",
    description: "",
    layout: "order_form",
    seller: northwind,
    customer: {
      name: "Lakeside Analytics Ltd",
      address: "9 Canal Street, Manchester M1 3HE, United Kingdom",
      email: "billing@lakeside-analytics.example",
    },
    number: "NW-7781",
    start: "2026-02-01",
    end: "2027-01-31",
    termMonths: undefined,
    currency: "GBP",
    dateStyle: "long_uk",
    paymentDays: 30,
    paymentWords: "net",
    minimum: undefined,
    fee: { label: "Platform fee", amount: "400.00" },
    usage: [
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
    ],
    customerFirst: false,
    font: "DejaVu",
  };
  const scanned = await scanPdf(await render(spec, generator(77)), { dpi: 200, skewDegrees: 0.8, seed: 77 });
  write("walk-scanned", scanned, {
    description: "the browser walk's scanned order form, 200 dpi, 0.8° skew",
    seller: northwind.name,
    scanned: true,
    expected: expectedTerms(spec),
  });
}

function write(
  name: string,
  pdf: Buffer,
  meta: { description: string; seller: string; scanned: boolean; expected: ExtractedTerms },
) {
  writeFileSync(join(OUT, `${name}.pdf`), pdf);
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify(meta, null, 2)}\n`);
  console.log(`${name}.pdf  ${(pdf.length / 1024).toFixed(0)} KiB  ${meta.description}`);
}

async function main() {
  mkdirSync(OUT, { recursive: true });
  for (const name of readdirSync(OUT)) rmSync(join(OUT, name));
  await walkAgreements();
  const count = Number(process.env.CORPUS_COUNT ?? 36);
  for (let k = 1; k <= count; k++) {
    const random = generator(1000 + k * 7919);
    const layout = LAYOUTS[(k - 1) % LAYOUTS.length]!;
    const spec = makeSpec(k, layout, random);
    const scan = k > count - SCANS.length ? SCANS[count - k] : undefined;
    let pdf = await render(spec, random);
    if (scan) pdf = await scanPdf(pdf, { dpi: scan.dpi, skewDegrees: scan.skew, seed: k, pages: 3 });
    const name = `${spec.name}${scan ? `-scanned-${scan.dpi}dpi` : ""}`;
    const description = `${layout.replace("_", " ")} layout, ${spec.currency}, dates ${spec.dateStyle}${scan ? `, scanned at ${scan.dpi} dpi with a ${scan.skew}° skew` : ""}`;
    write(name, pdf, {
      description,
      seller: spec.seller.name,
      scanned: scan !== undefined,
      expected: expectedTerms(spec),
    });
  }
}

await main();
