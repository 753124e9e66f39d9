import type { CompanyScope } from "../../db/company-scope.js";
import type { PricingRule } from "../contracts/pricing-rule.js";
import type { BillingPeriod } from "../kernel/billing-period.js";
import { Big, toJsonMoney } from "../kernel/money.js";
import type { BilledInvoice } from "./invoice-figures.js";
import { type InvoiceStatus, may } from "./invoice-states.js";
import { creditLineKey, lineFromRecord, type Line } from "./invoice-lines.js";
import { billProjected } from "./projected-bill.js";
import { billStored, presentLineItems } from "./invoice-presenter.js";
import { findPeriodInvoice } from "./invoice-read-repository.js";
import { findOneTimeRulesBilled } from "./invoice-repository.js";
import type { PreviewInvoice, PricingPreview } from "./invoice-schemas.js";

const ZERO = new Big(0);

/** A period's usage priced under a program it is not stored under (usage/pricing-preview.ts), to compare. */
export interface PricedPeriod {
  contractId: string;
  period: BillingPeriod;
  currency: string;
  /** The program the contract has now: an open draft is brought up to date with it, as projection would. */
  rulesNow: readonly PricingRule[];
  /** The program previewed, and the usage and fee lines its pricing of the period's events came to. */
  proposed: readonly PricingRule[];
  ratedLines: Iterable<Line>;
  events: number;
  unpriced: number;
}

/**
 * The period's invoice as it stands and as the previewed program would make it, side by side (docs/api.md,
 * "Previewing a pricing change"). The actual one: an issued (paid, void) invoice as it was issued; a draft as
 * projection would bring it up to date now (without storing it); no invoice yet, what projection would create.
 * The preview: the rated lines with the previewed program's subscription, one-time and minimum lines, as
 * projection makes them. Reads only.
 */
export async function comparePeriodBills(scope: CompanyScope, p: PricedPeriod): Promise<PricingPreview> {
  const row = await findPeriodInvoice(scope, p.contractId, p.period.start);
  const billedElsewhere = await findOneTimeRulesBilled(scope, p.contractId, row?.number ?? "");
  const project = (lines: Iterable<Line>, rules: readonly PricingRule[]): BilledInvoice =>
    billProjected(lines, rules, billedElsewhere, p.currency);
  const actual =
    row && !may(row.status as InvoiceStatus, "change")
      ? billStored(row)
      : project((row?.lines ?? []).map(lineFromRecord), p.rulesNow);
  const preview = project(p.ratedLines, p.proposed);
  const money = (value: Big) => toJsonMoney(value, p.currency);
  const shown = (billed: BilledInvoice, stored: typeof row): PreviewInvoice => ({
    number: stored?.number ?? null,
    status: (stored?.status as InvoiceStatus | undefined) ?? null,
    subtotal: money(billed.subtotal),
    tax: money(billed.tax),
    total: money(billed.total),
    line_items: presentLineItems(billed, p.currency),
  });
  return {
    object: "pricing_preview",
    contract: p.contractId,
    currency: p.currency,
    billing_period: { start: p.period.start, end: p.period.end },
    events: p.events,
    unpriced_events: p.unpriced,
    actual: shown(actual, row),
    preview: shown(preview, undefined),
    difference: {
      subtotal: money(preview.subtotal.minus(actual.subtotal)),
      total: money(preview.total.minus(actual.total)),
      charges: money(sumOf(preview, (k) => k !== "credit").minus(sumOf(actual, (k) => k !== "credit"))),
      credits: money(sumOf(preview, (k) => k === "credit").minus(sumOf(actual, (k) => k === "credit"))),
      lines: lineDifferences(actual, preview).map((d) => ({
        kind: d.kind,
        description: d.description,
        actual_amount: money(d.actual),
        preview_amount: money(d.preview),
        difference: money(d.preview.minus(d.actual)),
      })),
    },
  };
}

/** The sum of an invoice's lines of the kinds `keep` takes. */
const sumOf = (billed: BilledInvoice, keep: (kind: BilledInvoice["lines"][number]["kind"]) => boolean): Big =>
  billed.lines.filter((l) => keep(l.kind)).reduce((sum, l) => sum.plus(l.amount), ZERO);

/** What the credit lines of a contract's month hold (grant id → credit): a preview gives them back first. */
export async function creditsOnPeriod(
  scope: CompanyScope,
  contractId: string,
  periodStart: string,
): Promise<Map<string, Big>> {
  const row = await findPeriodInvoice(scope, contractId, periodStart);
  const credits = new Map<string, Big>();
  for (const line of row?.lines ?? []) {
    if (line.kind === "credit") credits.set(line.key.slice(creditLineKey("").length), new Big(line.charge_total).neg());
  }
  return credits;
}

/** The amounts of both invoices per line (its kind and description: what a reader matches), in invoice order. */
function lineDifferences(actual: BilledInvoice, preview: BilledInvoice) {
  const rows = new Map<
    string,
    { kind: BilledInvoice["lines"][number]["kind"]; description: string; actual: Big; preview: Big }
  >();
  const add = (billed: BilledInvoice, side: "actual" | "preview") => {
    for (const line of billed.lines) {
      const key = `${line.kind}|${line.description}`;
      let row = rows.get(key);
      if (!row) {
        row = { kind: line.kind, description: line.description, actual: ZERO, preview: ZERO };
        rows.set(key, row);
      }
      row[side] = row[side].plus(line.amount);
    }
  };
  add(actual, "actual");
  add(preview, "preview");
  return [...rows.values()];
}
