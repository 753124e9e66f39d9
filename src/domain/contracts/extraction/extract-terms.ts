// Reads an agreement in any layout (docs/api.md, "Reading an agreement"): from the runs of text on its pages,
// the terms it proposes, each with the page and text it came from. Pure: the same runs always read the same.
// Every value comes from words on a page: what no sentence, label or table row states is left out, never
// guessed. Confidence is how sure the reading is: 0.95 for a labelled value or a table row, less for looser
// wording, times the OCR engine's confidence for scanned pages.
// This file composes the readers, one a subject: parties.ts (the customer), contract-number.ts, dates.ts (the
// term), money.ts (currency, payment terms), fees.ts (monthly minimum and fee), price-tables.ts and
// prose-prices.ts (usage prices), over found-values.ts (labels, sources) and text-layout.ts.
import { addPricingRuleInput } from "../contract-schemas.js";
import { MAX_PROGRAM_RULES, normalizeRule } from "../pricing-rule.js";
import { contractNumber } from "./contract-number.js";
import { findTermDates } from "./dates.js";
import type {
  ExtractedField,
  ExtractedTerms,
  ExtractedValue,
  ExtractionItem,
  ExtractionWarning,
} from "./extraction-types.js";
import { findFee } from "./fees.js";
import type { Found, RuleFinding } from "./found-values.js";
import { findCurrency, findPaymentTerms } from "./money.js";
import { findCustomer } from "./parties.js";
import { tablePrices } from "./price-tables.js";
import { prosePrices } from "./prose-prices.js";
import { type Line, layoutOf } from "./text-layout.js";

export interface ExtractionContext {
  /** The seller's names (the account's legal name and its name): the customer is the other party. */
  sellerNames: readonly string[];
}

export interface TermsReading {
  terms: ExtractedTerms;
  fields: ExtractedField[];
  warnings: ExtractionWarning[];
}

const confidenceOf = (found: Found<unknown>): number =>
  Math.round(found.strength * Math.min(1, found.source.confidence) * 100) / 100;

class Findings {
  readonly fields: ExtractedField[] = [];
  readonly warnings: ExtractionWarning[] = [];

  add(field: string, found: Found<ExtractedValue>): void {
    this.fields.push({
      field,
      value: found.value,
      confidence: confidenceOf(found),
      page: found.source.page,
      source_text: found.source.source_text,
    });
  }
}

export function extractTerms(items: readonly ExtractionItem[], context: ExtractionContext): TermsReading {
  const layout = layoutOf(items);
  const findings = new Findings();
  const terms: ExtractedTerms = {};
  if (layout.lines.length === 0) return { terms, fields: [], warnings: [] };

  // --- Currency: read first, as it shows the order numeric dates are read in.
  const currency = findCurrency(layout);

  // --- Parties
  const customer = findCustomer(layout, context.sellerNames);
  if (customer !== undefined) {
    terms.customer = { name: customer.name.value };
    findings.add("customer.name", customer.name);
    if (customer.address !== undefined) {
      terms.customer.address = customer.address.value;
      findings.add("customer.address", customer.address);
    }
    if (customer.email !== undefined) {
      terms.customer.email = customer.email.value;
      findings.add("customer.email", customer.email);
    }
  }

  // --- Contract number
  const number = contractNumber(layout);
  if (number !== undefined) {
    terms.contract_id = number.value;
    findings.add("contract_id", number);
  }

  // --- Dates
  const { start, end, warning } = findTermDates(layout, currency?.value);
  if (start !== undefined) {
    terms.start_date = start.value;
    findings.add("start_date", start);
  }
  if (end !== undefined) {
    terms.end_date = end.value;
    findings.add("end_date", end);
  }
  if (warning !== undefined) findings.warnings.push(warning);

  if (currency !== undefined) {
    terms.currency = currency.value;
    findings.add("currency", currency);
  }

  // --- Payment terms
  const paymentTerms = findPaymentTerms(layout);
  if (paymentTerms !== undefined) {
    terms.payment_terms_days = paymentTerms.value;
    findings.add("payment_terms_days", paymentTerms);
  }

  // --- Prices
  const rules: RuleFinding[] = [];
  const minimum = findFee(layout, "minimum");
  if (minimum !== undefined) rules.push(minimum);
  const subscription = findFee(layout, "subscription");
  if (subscription !== undefined) rules.push(subscription);
  const tableRows = new Set<Line>();
  for (const usage of [...tablePrices(layout, tableRows), ...prosePrices(layout, tableRows)]) {
    if (usage.rule.type !== "usage") {
      if (!rules.some((r) => r.rule.type === usage.rule.type)) rules.push(usage);
      continue;
    }
    const metric = usage.rule.metric;
    if (metric === undefined || metric === "" || rules.some((r) => r.rule.metric === metric)) continue;
    rules.push(usage);
  }
  // A rule is proposed only as one the upload would take: its fields through the rule's own schema and checks.
  const valid = rules
    .filter(
      (r) =>
        addPricingRuleInput.safeParse(r.rule).success &&
        normalizeRule(r.rule, terms.currency ?? "USD").errors === undefined,
    )
    .slice(0, MAX_PROGRAM_RULES);
  if (valid.length > 0) {
    terms.rules = valid.map((r) => r.rule);
    valid.forEach((r, k) => {
      for (const [key, found] of Object.entries(r.found)) findings.add(`rules.${k}.${key}`, found);
    });
  }
  if (findings.fields.length === 0) {
    findings.warnings.push({
      code: "nothing_found",
      message: "The document was read, but none of the terms it looks for were found in it: type them in.",
    });
  }
  return { terms, fields: findings.fields, warnings: findings.warnings };
}
