// The words of the contract's "Usage-based services agreement": what the PDF lays out (agreement-pdf.ts),
// as plain text. Pure and locale-independent, so the same input always reads the same: dates, money and
// rule prices come from the input, never from the clock or the machine's locale.
import { MONTH_NAMES } from "../kernel/calendar-date.js";
import { moneyWords, rulePriceWords, type PricedTier } from "./rule-price-wording.js";

export interface AgreementPdfInput {
  companyName: string; // the seller (the account holder)
  customerName: string; // the buyer
  contractId: string; // external id, e.g. "acme-corp-test"
  contractNumber: string; // e.g. "CN-000001"
  startDate: string; // YYYY-MM-DD
  endDate: string | null; // YYYY-MM-DD or null (open-ended)
  currency: string; // ISO 4217, e.g. "USD"
  billingCadence: string; // "monthly"
  sample: boolean;
  programVersion: number;
  rules: Array<{
    id: string;
    name: string | null;
    type: string;
    model: string;
    amount?: string | null;
    rate?: string | null;
    metric?: string | null;
    frequency?: string | null;
    monthly_cap?: string | null;
    currency?: string | null;
    counterparty?: string | null;
    tiers?: readonly PricedTier[] | null;
    package_size?: string | null;
    fixed_fee?: string | null;
    min_fee?: string | null;
    max_fee?: string | null;
  }>;
  minimumAmount: string | null; // monthly minimum, e.g. "1000.00", or null
  generatedAt: Date;
}

type Rule = AgreementPdfInput["rules"][number];

// The fixed words of the layout.
const AGREEMENT_TITLE = "Usage-based services agreement";
const SAMPLE_MARK = "SAMPLE — for testing";
/** Drawn faintly across every page of a sample agreement. */
const AGREEMENT_WATERMARK = "SAMPLE";
/** The parties' boxes: a label (printed in capitals), the party's name, then its role. */
const AGREEMENT_PARTIES = {
  provider: { label: "Provider", role: "supplies the metered services (“Provider”)" },
  customer: { label: "Customer", role: "receives and pays for them (“Customer”)" },
} as const;
/** Section headings (printed in capitals). */
const AGREEMENT_HEADINGS = {
  keyTerms: "Key terms",
  pricing: "Pricing",
  pricingContinued: "Pricing (continued)",
  terms: "Terms",
} as const;
/** The labels of the key terms, in the order they are laid out (two to a row). */
const KEY_TERM_LABELS = {
  contractId: "Contract ID",
  currency: "Currency",
  contractNumber: "Contract number",
  billingCadence: "Billing cadence",
  term: "Term",
  monthlyMinimum: "Monthly minimum",
  pricingProgram: "Pricing program",
} as const;

/**
 * The input with every text passed through `text` (the renderer's: what its font can draw), and a blank
 * party named by its role.
 */
export function mapAgreementText(input: AgreementPdfInput, text: (value: string) => string): AgreementPdfInput {
  const optional = (value: string | null | undefined): string | null | undefined =>
    value === null || value === undefined ? value : text(value);
  return {
    ...input,
    companyName: input.companyName.trim() === "" ? AGREEMENT_PARTIES.provider.label : text(input.companyName),
    customerName: input.customerName.trim() === "" ? AGREEMENT_PARTIES.customer.label : text(input.customerName),
    contractId: text(input.contractId),
    contractNumber: text(input.contractNumber),
    startDate: text(input.startDate),
    endDate: input.endDate === null ? null : text(input.endDate),
    currency: text(input.currency),
    billingCadence: text(input.billingCadence),
    minimumAmount: input.minimumAmount === null ? null : text(input.minimumAmount),
    rules: input.rules.map((rule) => ({
      ...rule,
      id: text(rule.id),
      name: rule.name === null ? null : text(rule.name),
      type: text(rule.type),
      model: text(rule.model),
      amount: optional(rule.amount),
      rate: optional(rule.rate),
      metric: optional(rule.metric),
      frequency: optional(rule.frequency),
      monthly_cap: optional(rule.monthly_cap),
      currency: optional(rule.currency),
      counterparty: optional(rule.counterparty),
      package_size: optional(rule.package_size),
      fixed_fee: optional(rule.fixed_fee),
      min_fee: optional(rule.min_fee),
      max_fee: optional(rule.max_fee),
    })),
  };
}

/** "2025-01-31" → "31 January 2025"; anything else is shown as given. */
function formatDate(date: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (m === null) return date;
  const month = MONTH_NAMES[Number(m[2]) - 1];
  if (month === undefined) return date;
  return `${Number(m[3])} ${month} ${m[1]}`;
}

const TERM_DASH = " – ";
const OPEN_ENDED = "open-ended";

/** "1 January 2026 – 31 December 2026", or "1 January 2026 – open-ended". */
function termWords(startDate: string, endDate: string | null): string {
  return `${formatDate(startDate)}${TERM_DASH}${endDate === null ? OPEN_ENDED : formatDate(endDate)}`;
}

/** "one_time" → "One time". */
function humanize(word: string): string {
  const text = word.replace(/[_-]+/g, " ").trim();
  return text.length === 0 ? text : text.charAt(0).toUpperCase() + text.slice(1);
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** UTC timestamp "2025-01-31 14:05 UTC". */
function formatTimestamp(at: Date): string {
  return (
    `${at.getUTCFullYear()}-${pad2(at.getUTCMonth() + 1)}-${pad2(at.getUTCDate())} ` +
    `${pad2(at.getUTCHours())}:${pad2(at.getUTCMinutes())} UTC`
  );
}

/** One column of the pricing table: the rule field it shows, its header and what a rule's cell says. */
export interface RuleColumn {
  field: "name" | "type" | "metric" | "price" | "monthly_cap" | "counterparty";
  header: string;
  cell(rule: Rule, input: AgreementPdfInput): string;
}

/** An empty cell of the pricing table. */
const NO_VALUE = "—";

/** The pricing table, a row per rule; a rule's price reads as on the dashboard (rule-price-wording.ts). */
export const RULE_COLUMNS: readonly RuleColumn[] = [
  { field: "name", header: "Name", cell: (r) => r.name ?? r.id },
  { field: "type", header: "Type", cell: (r) => humanize(r.type) },
  { field: "metric", header: "Metric", cell: (r) => r.metric ?? NO_VALUE },
  { field: "price", header: "Price", cell: (r, input) => rulePriceWords(r, input.currency) },
  {
    field: "monthly_cap",
    header: "Monthly cap",
    cell: (r, input) => (r.monthly_cap == null ? NO_VALUE : moneyWords(r.monthly_cap, r.currency ?? input.currency)),
  },
  { field: "counterparty", header: "Counterparty", cell: (r) => r.counterparty ?? NO_VALUE },
];

/** Every sentence and label of the agreement, in the order the PDF lays them out. */
export function agreementWords(input: AgreementPdfInput) {
  const minimum = input.minimumAmount === null ? null : moneyWords(input.minimumAmount, input.currency);
  const cadence = input.billingCadence.toLowerCase();
  const start = formatDate(input.startDate);
  const end = input.endDate === null ? null : formatDate(input.endDate);
  return {
    metadata: {
      title: `${AGREEMENT_TITLE} ${input.contractNumber}${input.sample ? " (SAMPLE)" : ""}`,
      subject: `Contract ${input.contractNumber} (${input.contractId}) between ${input.companyName} and ${input.customerName}`,
      keywords: [input.contractId, input.contractNumber, ...(input.sample ? ["sample"] : [])].join(", "),
    },
    sampleBanner: `${SAMPLE_MARK} · not a binding agreement`,
    title: AGREEMENT_TITLE,
    subtitle: `Contract ${input.contractNumber}  ·  ID ${input.contractId}`,
    parties: [
      { ...AGREEMENT_PARTIES.provider, name: input.companyName },
      { ...AGREEMENT_PARTIES.customer, name: input.customerName },
    ],
    intro:
      `This agreement sets out the prices at which ${input.companyName} provides usage-based services to ` +
      `${input.customerName} under contract ${input.contractNumber}. Usage is reported against the contract ID ` +
      `${input.contractId}, rated when it is received, and billed on the terms below.`,
    keyTermsHeading: AGREEMENT_HEADINGS.keyTerms,
    keyTerms: [
      [KEY_TERM_LABELS.contractId, input.contractId],
      [KEY_TERM_LABELS.currency, input.currency],
      [KEY_TERM_LABELS.contractNumber, input.contractNumber],
      [KEY_TERM_LABELS.billingCadence, humanize(input.billingCadence)],
      [KEY_TERM_LABELS.term, termWords(input.startDate, input.endDate)],
      [KEY_TERM_LABELS.monthlyMinimum, minimum ?? "None"],
      [KEY_TERM_LABELS.pricingProgram, `Version ${input.programVersion}`],
    ] as Array<[string, string]>,
    pricingHeading: AGREEMENT_HEADINGS.pricing,
    pricingContinued: AGREEMENT_HEADINGS.pricingContinued,
    noRules: "This agreement has no pricing rules yet.",
    termsHeading: AGREEMENT_HEADINGS.terms,
    clauses: [
      `1. Charges. Flat usage prices apply to each unit of the named metric; percentage prices apply their rate ` +
        `to the event's value (its reported quantity). Subscription prices recur for each billing period. Where a ` +
        `monthly cap is shown, that rule's charges in a calendar month do not exceed it. A rule scoped to a ` +
        `counterparty applies only to usage with that counterparty.`,
      minimum === null
        ? `2. Minimum. No monthly minimum commitment applies.`
        : `2. Minimum. Customer commits to a minimum of ${minimum} per month. When a month's charges are lower, ` +
          `the difference is invoiced as a minimum charge.`,
      `3. Invoicing. Invoices are issued ${cadence === "monthly" ? "monthly" : `on a ${cadence} cadence`} in ` +
        `${input.currency} and list subscription fees, usage charges and any minimum charge.`,
      end === null
        ? `4. Term. This agreement starts on ${start} and continues until terminated.`
        : `4. Term. This agreement starts on ${start} and ends on ${end}.`,
    ],
    signatures: [input.companyName, input.customerName].map((name) => ({
      party: `For ${name}`,
      line: "Name, title and date",
    })),
    watermark: input.sample ? AGREEMENT_WATERMARK : null,
    footer: {
      generated: `Generated ${formatTimestamp(input.generatedAt)}  ·  Pricing program version ${input.programVersion}`,
      reference: `${input.contractNumber} · ${input.contractId}${input.sample ? `  ·  ${SAMPLE_MARK}` : ""}`,
      page: (number: number, count: number) => `Page ${number} of ${count}`,
    },
  };
}

export type AgreementWords = ReturnType<typeof agreementWords>;
