// The agreement corpus (docs/testing.md, "The agreement corpus"): agreement PDFs in many layouts and wordings,
// each written next to the terms a reader should find in it, so the extractor is scored against documents
// whose answers are known. Everything is seeded and dated, so running it again writes the same files.
//
//   npx tsx scripts/contract-corpus/generate.ts      (or: npm run corpus)
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCanvas } from "@napi-rs/canvas";
import PDFDocument from "pdfkit";
import type { ExtractedRule, ExtractedTerms } from "../../src/domain/contracts/extraction/extraction-types.js";
import { MONTH_NAMES } from "../../src/domain/kernel/calendar-date.js";
import { BOLD, loadPdfFonts, REGULAR } from "../../src/platform/pdf-fonts.js";

const OUT = join(import.meta.dirname, "../../test/fixtures/contract-corpus");
const FIXED_DATE = new Date("2026-01-01T00:00:00Z");

// ---------------------------------------------------------------- seeded randomness

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
let rand = mulberry32(26);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

// ---------------------------------------------------------------- money, numbers, dates

type Currency = "USD" | "EUR" | "GBP" | "CAD" | "AUD" | "CHF" | "JPY";
const SYMBOL: Record<Currency, string> = {
  USD: "$",
  EUR: "€",
  GBP: "£",
  CAD: "C$",
  AUD: "A$",
  CHF: "CHF ",
  JPY: "¥",
};
const DECIMALS = (c: Currency) => (c === "JPY" ? 0 : 2);

/** "1500.00" → "1,500.00"; money is kept as decimal strings throughout. */
function grouped(amount: string): string {
  const [int, frac] = amount.split(".");
  const g = (int ?? "").replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return frac === undefined ? g : `${g}.${frac}`;
}
function money(amount: string, c: Currency, style: "symbol" | "code"): string {
  if (style === "code" || c === "CHF") return `${c} ${grouped(amount)}`;
  return `${SYMBOL[c]}${grouped(amount)}`;
}
const WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
];
function numberWord(n: number): string {
  const special: Record<number, string> = {
    14: "fourteen",
    15: "fifteen",
    20: "twenty",
    21: "twenty-one",
    24: "twenty-four",
    30: "thirty",
    36: "thirty-six",
    45: "forty-five",
    60: "sixty",
  };
  return WORDS[n] ?? special[n] ?? String(n);
}

type DateStyle = "long-us" | "long-uk" | "short-uk" | "iso" | "numeric";
interface Ymd {
  y: number;
  m: number;
  d: number;
}
const iso = (t: Ymd) => `${t.y}-${String(t.m).padStart(2, "0")}-${String(t.d).padStart(2, "0")}`;
/** Numeric dates follow the document's country: day first in Europe and the Commonwealth, month first in the US. */
function formatDate(t: Ymd, style: DateStyle, c: Currency): string {
  const dd = String(t.d).padStart(2, "0");
  const mm = String(t.m).padStart(2, "0");
  switch (style) {
    case "long-us":
      return `${MONTH_NAMES[t.m - 1]} ${t.d}, ${t.y}`;
    case "long-uk":
      return `${t.d} ${MONTH_NAMES[t.m - 1]} ${t.y}`;
    case "short-uk":
      return `${t.d} ${(MONTH_NAMES[t.m - 1] ?? "").slice(0, 3)} ${t.y}`;
    case "iso":
      return iso(t);
    case "numeric":
      return c === "USD" ? `${mm}/${dd}/${t.y}` : `${dd}/${mm}/${t.y}`;
  }
}
/** The conventions' end of an N-month term: start + N months − 1 day. */
function endOfTerm(start: Ymd, months: number): Ymd {
  const d = new Date(Date.UTC(start.y, start.m - 1 + months, start.d) - 86_400_000);
  return { y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate() };
}

// ---------------------------------------------------------------- prices

/** A usage price: how it reads in prose, in a table row, and the rule it means. */
interface Price {
  name: string;
  prose: string; // "$0.28 per ACH debit"
  cell: string; // "$0.28 per debit"
  note?: string; // a table's notes column: caps, counterparties
  tiers?: string[]; // tier lines, shown under the row
  rule: ExtractedRule;
}
const metricOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

interface PriceSpec {
  noun: string; // "ACH debit" — the priced thing, lower case as written in prose
  unit?: string; // the table's unit word ("debit"); defaults to the noun
  amount?: string;
  pct?: string; // "2.35"
  fixed?: string;
  capAt?: string;
  counterparty?: string;
  tiers?: Array<[number | null, string]>; // [up_to, unit_amount]
  of?: string; // percentage base ("card volume") when it is the noun
}
function pctToRate(pct: string): string {
  const [i, f = ""] = pct.split(".");
  const digits = (i + f).replace(/^0+/, "") || "0";
  const scale = f.length + 2;
  const padded = digits.padStart(scale + 1, "0");
  return `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`.replace(/^0+(?=\d)/, "");
}
function price(spec: PriceSpec, c: Currency, ms: "symbol" | "code"): Price {
  const name = cap(spec.noun);
  const rule: ExtractedRule = { type: "usage", name, metric: metricOf(name), model: "flat" };
  let prose: string;
  let cell: string;
  const notes: string[] = [];
  let tiers: string[] | undefined;
  if (spec.tiers) {
    rule.model = "graduated";
    rule.tiers = spec.tiers.map(([up, amt]) => ({ up_to: up === null ? null : String(up), unit_amount: amt }));
    const parts: string[] = [];
    let from = 0;
    tiers = spec.tiers.map(([up, amt], i) => {
      const line =
        up === null
          ? `above ${grouped(String(from))}: ${money(amt, c, ms)} each`
          : `${i === 0 ? "first" : "next"} ${grouped(String(up - from))}: ${money(amt, c, ms)} each`;
      parts.push(
        up === null
          ? `${money(amt, c, ms)} for each above ${grouped(String(from))}`
          : `${money(amt, c, ms)} each for the ${i === 0 ? "first" : "next"} ${grouped(String(up - from))}`,
      );
      if (up !== null) from = up;
      return line;
    });
    prose = `${name} are charged in tiers each month: ${parts.join(", ")}`;
    cell = "Tiered, see below";
  } else if (spec.pct) {
    rule.model = "percentage";
    rule.rate = pctToRate(spec.pct);
    if (spec.fixed) {
      rule.fixed_fee = spec.fixed;
      prose = `${spec.pct}% + ${money(spec.fixed, c, ms)} per ${spec.noun}`;
      cell = `${spec.pct}% + ${money(spec.fixed, c, ms)} per ${spec.unit ?? "transaction"}`;
    } else {
      prose = `${spec.pct}% of ${spec.noun}`;
      cell = `${spec.pct}%`;
    }
  } else {
    rule.amount = spec.amount;
    prose = `${money(spec.amount as string, c, ms)} per ${spec.noun}`;
    cell = `${money(spec.amount as string, c, ms)} per ${spec.unit ?? spec.noun}`;
  }
  if (spec.counterparty) {
    rule.counterparty = spec.counterparty;
    prose += ` to ${spec.counterparty}`;
    notes.push(`Counterparty: ${spec.counterparty}`);
  }
  if (spec.capAt) {
    rule.monthly_cap = spec.capAt;
    prose += `, capped at ${money(spec.capAt, c, ms)} per month`;
    notes.push(`Capped at ${money(spec.capAt, c, ms)} per month`);
  }
  return { name, prose, cell, note: notes.join("; ") || undefined, tiers, rule };
}

const PRICE_POOL: PriceSpec[] = [
  { noun: "card volume", pct: "2.35" },
  { noun: "ACH debit", unit: "debit", amount: "0.28" },
  { noun: "card transaction", pct: "2.9", fixed: "0.30" },
  { noun: "international wire", unit: "wire", amount: "18.00" },
  { noun: "SEPA transfer", unit: "transfer", amount: "0.35" },
  { noun: "refund", amount: "0.50" },
  { noun: "chargeback", amount: "15.00" },
  { noun: "payout", amount: "0.25" },
  { noun: "identity check", unit: "check", amount: "1.20" },
  { noun: "SMS notification", unit: "message", amount: "0.04" },
  { noun: "stored gigabyte", unit: "GB", amount: "0.023" },
  {
    noun: "API calls",
    tiers: [
      [10000, "0.010"],
      [50000, "0.008"],
      [null, "0.005"],
    ],
  },
  {
    noun: "shipments",
    tiers: [
      [1000, "1.50"],
      [5000, "1.20"],
      [null, "0.90"],
    ],
  },
  { noun: "invoice processed", unit: "invoice", amount: "0.80" },
  { noun: "wallet volume", pct: "1.4" },
  { noun: "currency conversion volume", pct: "0.75" },
  { noun: "direct debit", unit: "debit", amount: "0.20" },
  { noun: "fraud screening", unit: "screen", amount: "0.05" },
];
const COUNTERPARTIES = ["HSBC UK", "Barclays", "Deutsche Bank", "BNP Paribas", "Wells Fargo", "Westpac"];

// ---------------------------------------------------------------- agreements

type FeesLayout = "prose" | "table" | "table-lined" | "schedule" | "order-form";
interface Party {
  name: string;
  address: string[];
  email?: string;
  role: string;
}
interface Agreement {
  slug: string;
  description: string;
  title: string;
  fees: FeesLayout;
  numbered?: boolean;
  columns?: boolean;
  cover?: boolean;
  keyBox?: boolean;
  font: "dejavu" | "Times-Roman" | "Helvetica" | "Courier";
  seller: Party;
  customer: Party;
  customerFirst: boolean;
  idLabel?: string;
  contractId?: string;
  start: Ymd;
  end: { kind: "date"; date: Ymd } | { kind: "months"; months: number } | { kind: "open" } | { kind: "none" };
  dateStyle: DateStyle;
  currency: Currency;
  moneyStyle: "symbol" | "code";
  paymentDays: number;
  paymentWording: 0 | 1 | 2;
  minimum?: string;
  minWording: 0 | 1;
  subscription?: string;
  subWording: 0 | 1 | 2;
  usage: PriceSpec[];
  scan?: { dpi: number; skew: number; noise: number };
}

const SELLERS: Array<Omit<Party, "role"> & { country: string }> = [
  {
    name: "Northwind Payments Ltd",
    address: ["1 Harbour Exchange Square", "London E14 9GE"],
    email: "contracts@northwind.example",
    country: "UK",
  },
  {
    name: "Bluefin Billing Inc.",
    address: ["200 Market Street", "San Francisco, CA 94105"],
    email: "legal@bluefin.example",
    country: "US",
  },
  {
    name: "Alpenrose Zahlungen GmbH",
    address: ["Bahnhofstrasse 12", "8001 Zürich"],
    email: "vertrag@alpenrose.example",
    country: "CH",
  },
  {
    name: "Kestrel Cloud Pty Ltd",
    address: ["88 George Street", "Sydney NSW 2000"],
    email: "deals@kestrel.example",
    country: "AU",
  },
  {
    name: "Maple Ledger LLC",
    address: ["55 King Street West", "Toronto, ON M5K 1A1"],
    email: "sales@mapleledger.example",
    country: "CA",
  },
  {
    name: "Soleil Paiements S.A.",
    address: ["14 rue de la Paix", "75002 Paris"],
    email: "contrats@soleil.example",
    country: "FR",
  },
];
const CUSTOMERS: Array<Omit<Party, "role">> = [
  {
    name: "Granite Peak Outfitters LLC",
    address: ["1200 Alpine Road", "Boulder, CO 80302"],
    email: "billing@granitepeak.example",
  },
  {
    name: "Oakridge Dental Group Inc.",
    address: ["77 Elm Street", "Hartford, CT 06103"],
    email: "ap@oakridge-dental.example",
  },
  { name: "Tidewater Marine Ltd", address: ["3 Quay Road", "Bristol BS1 4QA"], email: "accounts@tidewater.example" },
  {
    name: "Falkenberg Logistik GmbH",
    address: ["Hafenstrasse 40", "20457 Hamburg"],
    email: "rechnung@falkenberg.example",
  },
  {
    name: "Coral Coast Travel Pty Ltd",
    address: ["21 Esplanade", "Cairns QLD 4870"],
    email: "finance@coralcoast.example",
  },
  { name: "Prairie Wind Energy Inc.", address: ["600 Centre Street SE", "Calgary, AB T2G 5P5"] },
  { name: "Lumière Cosmétiques S.A.", address: ["8 avenue Foch", "69006 Lyon"], email: "factures@lumiere.example" },
  {
    name: "Redwood Analytics LLC",
    address: ["450 Mission Street, Floor 9", "San Francisco, CA 94105"],
    email: "payables@redwood.example",
  },
  {
    name: "Sakura Digital KK",
    address: ["2-1-1 Marunouchi, Chiyoda-ku", "Tokyo 100-0005"],
    email: "keiri@sakura-digital.example",
  },
  {
    name: "Brightwater Clinics Ltd",
    address: ["19 Castle Street", "Edinburgh EH2 3AH"],
    email: "invoices@brightwater.example",
  },
  {
    name: "Ironbridge Software Inc.",
    address: ["9 Commerce Drive", "Austin, TX 78701"],
    email: "ap@ironbridge.example",
  },
  { name: "Alpine Uhren AG", address: ["Marktgasse 5", "3011 Bern"] },
  {
    name: "Silver Fern Foods Pty Ltd",
    address: ["5 Collins Street", "Melbourne VIC 3000"],
    email: "ap@silverfern.example",
  },
  {
    name: "Northgate Pharmacy LLC",
    address: ["310 Broad Street", "Richmond, VA 23219"],
    email: "billing@northgate-rx.example",
  },
  { name: "Harrow & Finch Ltd", address: ["44 Deansgate", "Manchester M3 2EG"], email: "finance@harrowfinch.example" },
  { name: "Vélo Rapide S.A.", address: ["22 boulevard Haussmann", "75009 Paris"] },
  {
    name: "Lakeshore Property Management Inc.",
    address: ["1 Yonge Street, Suite 1800", "Toronto, ON M5E 1W7"],
    email: "ap@lakeshore-pm.example",
  },
];
const CURRENCY_OF: Record<string, Currency> = { UK: "GBP", US: "USD", CH: "CHF", AU: "AUD", CA: "CAD", FR: "EUR" };
const ROLES_SELLER = ["Provider", "Supplier", "Company", "Vendor"];
const ROLES_CUSTOMER = ["Customer", "Client", "Merchant", "Subscriber"];
const TITLES = [
  "Services Agreement",
  "Master Services Agreement",
  "Payment Services Agreement",
  "Subscription Agreement",
  "Pricing Agreement",
  "Platform Agreement",
];
const LAYOUTS: Array<Pick<Agreement, "fees" | "numbered" | "columns" | "cover" | "keyBox">> = [
  { fees: "table" },
  { fees: "prose", numbered: true },
  { fees: "table-lined", cover: true },
  { fees: "prose", columns: true },
  { fees: "schedule" },
  { fees: "order-form" },
  { fees: "table", keyBox: true },
  { fees: "prose" },
  { fees: "schedule", numbered: true, cover: true },
  { fees: "table-lined", keyBox: true },
  { fees: "prose", keyBox: true, columns: true },
];
const DATE_STYLES: DateStyle[] = ["long-us", "long-uk", "short-uk", "iso", "numeric"];
const FONTS: Agreement["font"][] = ["dejavu", "Times-Roman", "Helvetica", "Courier"];

/** The two agreements the browser walk opens, written out by hand because the walk asserts their terms. */
const WALK: Agreement[] = [
  {
    slug: "walk-prose",
    description: "Master Services Agreement in prose over three pages, no table; the browser walk's text agreement.",
    title: "Master Services Agreement",
    fees: "prose",
    font: "dejavu",
    seller: { ...SELLERS[0]!, role: "Provider" },
    customer: {
      name: "Harbor Freight Logistics Inc.",
      address: ["400 Pier Avenue, Suite 12", "Oakland, CA 94607"],
      email: "ap@harborfreight-logistics.example",
      role: "Customer",
    },
    customerFirst: false,
    idLabel: "Agreement No.",
    contractId: "MSA-2026-0142",
    start: { y: 2026, m: 1, d: 5 },
    end: { kind: "date", date: { y: 2027, m: 1, d: 4 } },
    dateStyle: "long-us",
    currency: "USD",
    moneyStyle: "symbol",
    paymentDays: 15,
    paymentWording: 1,
    minimum: "1500.00",
    minWording: 0,
    subscription: "250.00",
    subWording: 0,
    usage: [
      { noun: "card volume", pct: "2.35", capAt: "4000.00" },
      { noun: "ACH debit", amount: "0.28" },
      { noun: "international wire", amount: "18.00", counterparty: "HSBC UK" },
    ],
  },
  {
    slug: "walk-scanned",
    description: "Order Form scanned at 200 dpi with a 0.8° skew and light noise, two pages; the browser walk's scan.",
    title: "Order Form",
    fees: "order-form",
    font: "dejavu",
    seller: { ...SELLERS[0]!, role: "Supplier" },
    customer: {
      name: "Lakeside Analytics Ltd",
      address: ["9 Canal Street", "Manchester M1 3HE", "United Kingdom"],
      email: "billing@lakeside-analytics.example",
      role: "Customer",
    },
    customerFirst: true,
    idLabel: "Order Form No.",
    contractId: "NW-7781",
    start: { y: 2026, m: 2, d: 1 },
    end: { kind: "date", date: { y: 2027, m: 1, d: 31 } },
    dateStyle: "long-uk",
    currency: "GBP",
    moneyStyle: "symbol",
    paymentDays: 30,
    paymentWording: 0,
    minWording: 0,
    subscription: "400.00",
    subWording: 0,
    usage: [
      { noun: "payment initiation", unit: "payment", amount: "0.15" },
      { noun: "account verification", unit: "check", amount: "0.05" },
      { noun: "card processing", unit: "transaction", pct: "1.9", fixed: "0.20" },
    ],
    scan: { dpi: 200, skew: 0.8, noise: 0.5 },
  },
];

/** The generated agreements: layouts, dates and currencies cycle so every combination class appears. */
function corpus(count: number): Agreement[] {
  rand = mulberry32(2026);
  const out: Agreement[] = [];
  const scanDpis = [150, 200, 240, 300];
  let scanned = 0;
  for (let i = 0; i < count; i++) {
    const seller = SELLERS[i % SELLERS.length]!;
    const customer = CUSTOMERS[(i * 5) % CUSTOMERS.length]!;
    const currency = i % 9 === 8 ? "JPY" : CURRENCY_OF[seller.country]!;
    const layout = LAYOUTS[i % LAYOUTS.length]!;
    const isScan = i % 4 === 3 && scanned < 8;
    const nUsage = isScan ? 1 + (i % 3) : [1, 2, 3, 4, 6, 7, 8][i % 7]!;
    const pool = [...PRICE_POOL];
    const usage: PriceSpec[] = [];
    while (usage.length < nUsage) {
      const spec = { ...pool.splice(Math.floor(rand() * pool.length), 1)[0]! };
      if (currency === "JPY") {
        if (spec.amount) spec.amount = String(Math.max(1, Math.round(Number(spec.amount) * 150)));
        if (spec.fixed) spec.fixed = String(Math.round(Number(spec.fixed) * 150));
        if (spec.tiers) spec.tiers = spec.tiers.map(([u, a]) => [u, String(Math.max(1, Math.round(Number(a) * 150)))]);
      }
      if (spec.pct && !spec.fixed && rand() < 0.4)
        spec.capAt = currency === "JPY" ? "500000" : `${pick([2000, 4000, 7500])}.00`;
      if (spec.amount && rand() < 0.25) spec.counterparty = pick(COUNTERPARTIES);
      usage.push(spec);
    }
    const dec = DECIMALS(currency);
    const amt = (n: number) => (dec === 0 ? String(n * 150) : `${n}.00`);
    const start: Ymd = { y: 2026, m: 1 + (i % 12), d: 1 + ((i * 7) % 28) };
    const endKinds: Agreement["end"][] = [
      { kind: "date", date: endOfTerm(start, 12) },
      { kind: "months", months: pick([12, 24, 36]) },
      { kind: "open" },
      { kind: "none" },
    ];
    let dateStyle = DATE_STYLES[i % DATE_STYLES.length]!;
    // A numeric date is only readable from the country: keep it to agreements whose country is plain.
    if (dateStyle === "numeric" && !["USD", "GBP", "EUR", "AUD"].includes(currency)) dateStyle = "long-uk";
    const isDemo = i % 10 === 9;
    out.push({
      slug: `${String(i + 1).padStart(2, "0")}-${metricOf(customer.name.normalize("NFD").replace(/[\u0300-\u036f]/g, "")).split("_")[0]}-${layout.fees}`,
      description: "",
      title: layout.fees === "order-form" ? "Order Form" : TITLES[i % TITLES.length]!,
      ...layout,
      font: ["EUR", "GBP", "JPY"].includes(currency) ? "dejavu" : FONTS[i % FONTS.length]!,
      seller: { ...seller, role: ROLES_SELLER[i % ROLES_SELLER.length]! },
      customer: {
        ...customer,
        email: i % 6 === 5 ? undefined : customer.email,
        role: ROLES_CUSTOMER[i % ROLES_CUSTOMER.length]!,
      },
      customerFirst: i % 3 === 1,
      idLabel: pick(["Agreement No.", "Contract number:", "Reference:", "Contract ID:"]),
      contractId: isDemo
        ? undefined
        : `${pick(["MSA", "AGR", "SO", "C"])}-${2026}-${String(100 + i * 37).padStart(4, "0")}`,
      start,
      end: endKinds[i % endKinds.length]!,
      dateStyle,
      currency,
      moneyStyle: i % 5 === 2 ? "code" : "symbol",
      paymentDays: [15, 30, 45, 14, 60, 21][i % 6]!,
      paymentWording: (i % 3) as 0 | 1 | 2,
      minimum: i % 4 === 2 ? undefined : amt(pick([500, 1000, 1500, 2500, 5000])),
      minWording: (i % 2) as 0 | 1,
      subscription: i % 5 === 4 ? undefined : amt(pick([99, 250, 400, 750, 1200])),
      subWording: (i % 3) as 0 | 1 | 2,
      usage,
      scan: isScan
        ? {
            dpi: scanDpis[scanned % 4]!,
            skew: (scanned % 2 ? -1 : 1) * (0.3 + (scanned % 5) * 0.3),
            noise: 0.4 + (scanned % 3) * 0.3,
          }
        : undefined,
    });
    if (isScan) scanned++;
  }
  return out;
}

// ---------------------------------------------------------------- the text of an agreement

interface Clause {
  heading: string;
  text: string;
}
function paymentSentence(a: Agreement): string {
  const n = a.paymentDays;
  const who = a.customer.role;
  return [
    `Payment terms: Net ${n}.`,
    `${who} shall pay each invoice within ${numberWord(n)} (${n}) days of its date.`,
    `Invoices are payable ${numberWord(n)} (${n}) days after the invoice date.`,
  ][a.paymentWording]!;
}
const MIN_NAMES = ["Minimum monthly commitment", "Monthly minimum fee"];
const SUB_NAMES = ["Platform fee", "Subscription fee", "Monthly access fee"];
function termSentence(a: Agreement): string {
  const f = (t: Ymd) => formatDate(t, a.dateStyle, a.currency);
  const start = `This Agreement takes effect on ${f(a.start)} (the "Effective Date")`;
  switch (a.end.kind) {
    case "date":
      return `${start} and ends on ${f(a.end.date)}.`;
    case "months":
      return `${start} and continues for ${numberWord(a.end.months)} (${a.end.months}) months from the Effective Date.`;
    case "open":
      return `${start} and continues until terminated by either party.`;
    case "none":
      return `${start}.`;
  }
}
// Only the customer's email is its billing email; the seller's is a contact address, a distractor.
function partyLine(p: Party, customer: boolean): string {
  const email = p.email ? `, ${customer ? "billing email" : "email"} ${p.email}` : "";
  return `${p.name}, ${p.address.join(", ")}${email} ("${p.role}")`;
}
function clauses(a: Agreement): { intro: string[]; body: Clause[]; fees: Price[]; feeLines: string[] } {
  const m = (x: string) => money(x, a.currency, a.moneyStyle);
  const [first, second] = a.customerFirst ? [a.customer, a.seller] : [a.seller, a.customer];
  const intro = [
    `This ${a.title} is made between ${partyLine(first, a.customerFirst)} and ${partyLine(second, !a.customerFirst)}.`,
    ...(a.contractId ? [`${a.idLabel} ${a.contractId}`] : []),
  ];
  const fees = a.usage.map((u) => price(u, a.currency, a.moneyStyle));
  const feeLines: string[] = [];
  feeLines.push(
    `All fees are stated in ${{ USD: "US dollars", EUR: "euros", GBP: "pounds sterling", CAD: "Canadian dollars", AUD: "Australian dollars", CHF: "Swiss francs", JPY: "Japanese yen" }[a.currency]}.`,
  );
  if (a.subscription) {
    feeLines.push(
      [
        `${a.customer.role} shall pay a platform fee of ${m(a.subscription)} per month.`,
        `A subscription fee of ${m(a.subscription)} per month applies.`,
        `The monthly access fee is ${m(a.subscription)}.`,
      ][a.subWording]!,
    );
  }
  if (a.minimum) {
    feeLines.push(
      [
        `The minimum monthly commitment is ${m(a.minimum)}.`,
        `${a.customer.role} pays a monthly minimum fee of ${m(a.minimum)}.`,
      ][a.minWording]!,
    );
  }
  const body: Clause[] = [
    { heading: "Term", text: termSentence(a) },
    {
      heading: "Services",
      text: `${a.seller.role} provides payment processing and related services to ${a.customer.role} as described in this Agreement and its schedules.`,
    },
    { heading: "Payment", text: `${paymentSentence(a)} Late amounts bear interest at 1.5% per month.` },
    {
      heading: "Liability",
      text: `Each party's total liability under this Agreement is limited to ${m(a.currency === "JPY" ? "150000000" : "1000000.00")}.`,
    },
    {
      heading: "Termination",
      text: `Either party may terminate this Agreement for material breach on 30 days' written notice.`,
    },
    {
      heading: "Notices",
      text: `Notices to ${a.seller.role} go to ${a.seller.address.join(", ")} or ${a.seller.email}.`,
    },
  ];
  return { intro, body, fees, feeLines };
}

// ---------------------------------------------------------------- rendering

type Doc = InstanceType<typeof PDFDocument>;
const MARGIN = 64;

function newDoc(a: Agreement): { doc: Doc; regular: string; bold: string } {
  const doc = new PDFDocument({
    size: a.currency === "USD" || a.currency === "CAD" ? "LETTER" : "A4",
    margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
    info: {
      Title: a.title,
      Author: a.seller.name,
      CreationDate: FIXED_DATE,
      ModDate: FIXED_DATE,
      Producer: "contract-corpus",
      Creator: "contract-corpus",
    },
    bufferPages: true,
  });
  if (a.font === "dejavu") {
    const fonts = loadPdfFonts();
    doc.registerFont(REGULAR, fonts.regular);
    doc.registerFont(BOLD, fonts.bold);
    return { doc, regular: REGULAR, bold: BOLD };
  }
  const bold = { "Times-Roman": "Times-Bold", Helvetica: "Helvetica-Bold", Courier: "Courier-Bold" }[a.font];
  return { doc, regular: a.font, bold };
}

function heading(doc: Doc, bold: string, regular: string, text: string, size = 11) {
  doc.moveDown(0.6).font(bold).fontSize(size).text(text).font(regular).fontSize(10).moveDown(0.2);
}

/** A fee table: columns placed by position; `lined` draws its rules, otherwise only alignment shows them. */
function feeTable(
  doc: Doc,
  fonts: { regular: string; bold: string },
  fees: Price[],
  lined: boolean,
  headers = ["Service", "Price", "Notes"],
) {
  const x = [MARGIN, MARGIN + 170, MARGIN + 320];
  const width = doc.page.width - 2 * MARGIN;
  const row = (cells: string[], font: string) => {
    if (doc.y > doc.page.height - MARGIN - 60) doc.addPage();
    const y = doc.y;
    doc.font(font).fontSize(9.5);
    cells.forEach((c, i) => {
      // The last column runs to the margin unwrapped, so a note stays on its row.
      const next = x[i + 1];
      if (c)
        doc.text(
          c,
          x[i]!,
          y,
          next === undefined ? { lineBreak: false } : { width: next - x[i]! - 8, lineBreak: false },
        );
    });
    doc.x = MARGIN;
    doc.y = y + 16;
    if (lined)
      doc
        .moveTo(MARGIN, y - 4)
        .lineTo(MARGIN + width, y - 4)
        .lineWidth(0.5)
        .stroke();
  };
  row(headers, fonts.bold);
  for (const f of fees) {
    row([f.name, f.cell, f.note ?? ""], fonts.regular);
    for (const t of f.tiers ?? []) row(["", `  ${t}`, ""], fonts.regular);
  }
  if (lined)
    doc
      .moveTo(MARGIN, doc.y - 4)
      .lineTo(MARGIN + width, doc.y - 4)
      .stroke();
  doc.x = MARGIN;
}

function render(a: Agreement): Promise<Buffer> {
  const { doc, regular, bold } = newDoc(a);
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on("end", () => resolve(Buffer.concat(chunks))));
  const { intro, body, fees, feeLines } = clauses(a);
  const f = (t: Ymd) => formatDate(t, a.dateStyle, a.currency);
  const m = (x: string) => money(x, a.currency, a.moneyStyle);
  const fonts = { regular, bold };
  const textOpts = a.columns ? { columns: 2, columnGap: 18, align: "left" as const } : {};

  if (a.cover) {
    doc.font(bold).fontSize(22).text(a.title, { align: "center" }).moveDown(2);
    doc.font(regular).fontSize(12).text("between", { align: "center" }).moveDown(0.5);
    doc.font(bold).text(a.seller.name, { align: "center" }).font(regular).text("and", { align: "center" });
    doc.font(bold).text(a.customer.name, { align: "center" }).moveDown(2);
    doc
      .font(regular)
      .fontSize(10)
      .text(`Dated ${f(a.start)}`, { align: "center" });
    doc.addPage();
  } else {
    doc.font(bold).fontSize(16).text(a.title).moveDown(0.4);
    doc
      .font(regular)
      .fontSize(9)
      .text(`Dated ${f(a.start)}`)
      .moveDown(0.4);
  }
  doc.font(regular).fontSize(10);

  if (a.keyBox) {
    const top = doc.y;
    const rows: Array<[string, string]> = [
      ["Customer", a.customer.name],
      ...(a.contractId ? [["Contract", a.contractId] as [string, string]] : []),
      ["Effective Date", f(a.start)],
      ["Currency", a.currency],
    ];
    doc.font(bold).text("Key terms", MARGIN + 8, top + 8);
    doc.font(regular);
    for (const [k, v] of rows) {
      const y = doc.y;
      doc.text(`${k}`, MARGIN + 8, y);
      doc.text(v, MARGIN + 140, y);
    }
    doc
      .rect(MARGIN, top, doc.page.width - 2 * MARGIN, doc.y - top + 8)
      .lineWidth(0.8)
      .stroke();
    doc.x = MARGIN;
    doc.y += 16;
  }

  if (a.fees === "order-form") {
    // An order form's header: one "Field: value" per line, the customer's block and the seller's apart.
    const c = a.customer;
    const lines: string[] = [
      ...(a.contractId ? [`${a.idLabel} ${a.contractId}`] : []),
      `Customer: ${c.name}`,
      `Address: ${c.address.join(", ")}`,
      ...(c.email ? [`Billing email: ${c.email}`] : []),
      `Supplier: ${a.seller.name}`,
      `Supplier address: ${a.seller.address.join(", ")}`,
      `Start date: ${f(a.start)}`,
      ...(a.end.kind === "date" ? [`End date: ${f(a.end.date)}`] : []),
      ...(a.end.kind === "months"
        ? [`Term: ${numberWord(a.end.months)} (${a.end.months}) months from the start date`]
        : []),
      ...(a.end.kind === "open" ? ["Term: until terminated by either party"] : []),
      `Currency: ${a.currency}`,
      `Payment terms: Net ${a.paymentDays}`,
      ...(a.subscription ? [`Platform fee: ${m(a.subscription)} per month`] : []),
      ...(a.minimum ? [`Minimum monthly commitment: ${m(a.minimum)}`] : []),
    ];
    for (const l of lines) doc.text(l);
    heading(doc, bold, regular, "Fees");
    feeTable(doc, fonts, fees, false, ["Service", "Price", ""]);
    doc.addPage();
    heading(doc, bold, regular, "Terms and conditions");
    for (const [i, cl] of body.slice(1).entries()) doc.text(`${i + 1}. ${cl.heading}. ${cl.text}`).moveDown(0.4);
  } else {
    doc.text(intro.join("\n"), textOpts).moveDown(0.5);
    const sections: Clause[] = [body[0]!, body[1]!, { heading: "Fees", text: "" }, ...body.slice(2)];
    sections.forEach((cl, i) => {
      const n = i + 1;
      const title = a.numbered ? `${n}. ${cl.heading}` : cl.heading;
      heading(doc, bold, regular, title);
      if (cl.heading !== "Fees") {
        doc.text(a.numbered ? `${n}.1 ${cl.text}` : cl.text, textOpts);
        return;
      }
      const lines = [...feeLines];
      if (a.fees === "prose") {
        lines.push(`${a.customer.role} also pays usage fees as follows: ${fees.map((p) => p.prose).join("; ")}.`);
      } else if (a.fees === "schedule") {
        lines.push(`Usage fees are set out in Schedule A — Fees.`);
      } else {
        lines.push("Usage fees:");
      }
      for (const [j, l] of lines.entries()) doc.text(a.numbered ? `${n}.${j + 1} ${l}` : l, textOpts);
      if (a.fees === "table" || a.fees === "table-lined") {
        doc.moveDown(0.5);
        feeTable(doc, fonts, fees, a.fees === "table-lined");
      }
      // Long prose pushes the walk's agreement onto three pages, as a real one would run.
      if (a.slug === "walk-prose") doc.addPage();
    });
    if (a.slug === "walk-prose") {
      doc.addPage();
      heading(doc, bold, regular, "General");
      doc.text(
        "This Agreement is governed by the laws of the State of California. Amendments must be in writing and signed by both parties.",
      );
    }
    if (a.fees === "schedule") {
      doc.addPage();
      heading(doc, bold, regular, "Schedule A — Fees", 13);
      feeTable(doc, fonts, fees, true, ["Item", "Rate", "Notes"]);
    }
  }
  doc
    .moveDown(2)
    .text(`Signed for ${a.seller.name}: ____________________    Signed for ${a.customer.name}: ____________________`);

  const range = doc.bufferedPageRange();
  for (let p = range.start; p < range.start + range.count; p++) {
    doc.switchToPage(p);
    doc
      .font(regular)
      .fontSize(8)
      .text(`Page ${p + 1} of ${range.count}`, MARGIN, doc.page.height - 40, { lineBreak: false });
  }
  doc.end();
  return done;
}

function expected(a: Agreement): ExtractedTerms {
  const terms: ExtractedTerms = {
    customer: {
      name: a.customer.name,
      address: a.customer.address.join(", "),
      ...(a.customer.email ? { email: a.customer.email } : {}),
    },
  };
  if (a.contractId) terms.contract_id = a.contractId;
  terms.start_date = iso(a.start);
  if (a.end.kind === "date") terms.end_date = iso(a.end.date);
  if (a.end.kind === "months") terms.end_date = iso(endOfTerm(a.start, a.end.months));
  if (a.end.kind === "open") terms.end_date = null;
  terms.currency = a.currency;
  terms.payment_terms_days = a.paymentDays;
  const rules: ExtractedRule[] = [];
  if (a.minimum)
    rules.push({
      type: "minimum",
      model: "flat",
      name: MIN_NAMES[a.fees === "order-form" ? 0 : a.minWording]!,
      amount: a.minimum,
    });
  if (a.subscription) {
    const name = SUB_NAMES[a.fees === "order-form" ? 0 : a.subWording]!;
    rules.push({ type: "subscription", model: "flat", frequency: "monthly", name, amount: a.subscription });
  }
  for (const u of a.usage) rules.push(price(u, a.currency, a.moneyStyle).rule);
  terms.rules = rules;
  return terms;
}

function describe(a: Agreement): string {
  if (a.description) return a.description;
  const layout = [
    a.cover && "cover page",
    a.keyBox && "key-terms box",
    a.numbered && "numbered clauses",
    a.columns && "two columns",
    {
      prose: "prices in prose",
      table: "fee table aligned by position",
      "table-lined": "fee table with lines",
      schedule: "Schedule A — Fees on the last page",
      "order-form": "order form (Field: value)",
    }[a.fees],
  ].filter(Boolean);
  return `${a.title}, ${layout.join(", ")}; ${a.currency}, ${a.dateStyle} dates, ${a.usage.length} usage price(s), ${a.font}${a.scan ? `; scanned at ${a.scan.dpi} dpi, skew ${a.scan.skew}°` : ""}`;
}

// ---------------------------------------------------------------- scanning

/** A text PDF as a scan: each page rendered, skewed, noised, blurred, grey, JPEG, with no text layer left. */
async function scan(pdf: Buffer, s: NonNullable<Agreement["scan"]>, seed: number): Promise<Buffer> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const task = pdfjs.getDocument({ data: new Uint8Array(pdf), isEvalSupported: false, verbosity: 0 });
  const src = await task.promise;
  const noise = mulberry32(seed);
  const out = new PDFDocument({
    autoFirstPage: false,
    info: {
      CreationDate: FIXED_DATE,
      ModDate: FIXED_DATE,
      Producer: "contract-corpus scanner",
      Creator: "contract-corpus",
    },
  });
  const chunks: Buffer[] = [];
  out.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => out.on("end", () => resolve(Buffer.concat(chunks))));
  for (let p = 1; p <= Math.min(src.numPages, 3); p++) {
    const page = await src.getPage(p);
    const viewport = page.getViewport({ scale: s.dpi / 72 });
    const w = Math.round(viewport.width);
    const h = Math.round(viewport.height);
    const flat = createCanvas(w, h);
    const fctx = flat.getContext("2d");
    fctx.fillStyle = "white";
    fctx.fillRect(0, 0, w, h);
    // biome-ignore lint/suspicious/noExplicitAny: pdfjs types its canvas as the DOM's; @napi-rs/canvas draws the same calls.
    await page.render({ canvasContext: fctx as any, viewport, canvas: flat as any }).promise;
    const canvas = createCanvas(w, h);
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "white";
    ctx.fillRect(0, 0, w, h);
    ctx.translate(w / 2, h / 2);
    ctx.rotate((s.skew * Math.PI) / 180);
    ctx.translate(-w / 2, -h / 2);
    ctx.filter = "blur(0.5px)";
    ctx.drawImage(flat, 0, 0);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    const img = ctx.getImageData(0, 0, w, h);
    const d = img.data;
    for (let i = 0; i < d.length; i += 4) {
      let g = 0.299 * d[i]! + 0.587 * d[i + 1]! + 0.114 * d[i + 2]!;
      g += (noise() + noise() + noise() - 1.5) * 16 * s.noise; // roughly gaussian
      const r = noise();
      if (r < 0.0008 * s.noise) g = 0;
      else if (r > 1 - 0.0008 * s.noise) g = 255;
      g = g < 0 ? 0 : g > 255 ? 255 : g;
      d[i] = d[i + 1] = d[i + 2] = g;
    }
    ctx.putImageData(img, 0, 0);
    const jpeg = await canvas.encode("jpeg", s.dpi >= 240 ? 55 : 70);
    out.addPage({ size: [viewport.width * (72 / s.dpi), viewport.height * (72 / s.dpi)], margin: 0 });
    out.image(jpeg, 0, 0, { width: out.page.width, height: out.page.height });
  }
  await task.destroy();
  out.end();
  return done;
}

// ---------------------------------------------------------------- main

async function main() {
  mkdirSync(OUT, { recursive: true });
  for (const f of readdirSync(OUT)) if (f.endsWith(".pdf") || f.endsWith(".json")) rmSync(join(OUT, f));
  const all = [...WALK, ...corpus(34)];
  for (const [i, a] of all.entries()) {
    let pdf = await render(a);
    if (a.scan) pdf = await scan(pdf, a.scan, 1000 + i);
    writeFileSync(join(OUT, `${a.slug}.pdf`), pdf);
    const json = { description: describe(a), seller: a.seller.name, scanned: Boolean(a.scan), expected: expected(a) };
    writeFileSync(join(OUT, `${a.slug}.json`), `${JSON.stringify(json, null, 2)}\n`);
    console.log(`${a.slug}.pdf  ${(pdf.length / 1024).toFixed(0)} KB`);
  }
}

await main();
