// How an invoice's lines read on its PDF (invoice-pdf.ts): each line's row in the charges table (description,
// quantity, unit price, amount) and the rows under it that explain its amount by the rule that priced it: a
// monthly cap that cut it, a rate as a percentage, a graduated or volume rule's tiers, a package's price, a
// pass-through fee's count. Pure, as invoiceWords, which places these rows in the words of the whole invoice.
import { Big, roundToMinorUnit } from "../../kernel/money.js";
import { documentMoney } from "../../kernel/document-format.js";
import { formatMoney } from "../../kernel/money-format.js";
import { decimalWords, percentWords, type PricedRule, rulePriceWords } from "../../contracts/rule-price-wording.js";

const UNIT_PRICE_DECIMALS = 12;

/** The rule a line was priced by, as far as its wording needs it (a stored PricingRule is one). */
export type PdfLineRule = PricedRule & { monthly_cap: string | null };

/** An invoice's line as the PDF takes it: decimals as text, as the invoice gives them. */
export interface PdfLine {
  /** subscription, one_time, usage, fee, minimum, credit; unset: worded as a usage line without its rule. */
  kind?: string;
  description: string;
  quantity: string;
  unitPrice: string;
  amount: string;
  /** A graduated or volume rule's line: each tier reached, its amount exact (invoice-figures.ts). */
  tiers?: { upTo: string | null; unitPrice: string; flat: string | null; quantity: string; amount: string }[];
  /** With tiers, when a monthly cap cut the line: charge total − Σ tier amounts, exact. */
  capAdjustment?: string;
  /** The rule the line was priced by: how its price and its cap read. */
  rule?: PdfLineRule | null;
  /** A usage line's events (line-facts.ts), when they are on the invoice. */
  events?: number;
  /** A capped usage line's events priced without the cap, in the currency's minor unit (line-facts.ts). */
  uncapped?: string;
}

const ZERO = new Big(0);
const INDENT = "    ";

/**
 * A line's rows: the line (description, quantity, unit price, amount), then what explains it. How each kind
 * reads:
 * - a flat usage rule: quantity × unit price, and under it the monthly cap when the cap cut the line
 *   ("capped at the monthly cap of $4,000.00; uncapped $4,527.29"), since the amount is then not the product;
 * - a percentage rule: the value the rate applies to, in money, and the rate as a percentage ("2.35%"), then the
 *   count of transactions and the volume ("1,500 transactions, volume $191,769.99"), the rule's price in words
 *   when it has a fixed fee or bounds (the product is then not the charge), and the cap with the uncapped amount
 *   (priced again from the events when the product is not the charge: line-facts.ts);
 * - a graduated or volume rule: a sub-row per tier, then the cap's adjustment with the same note;
 * - a package rule: the quantity, and the price per package in words under it;
 * - a pass-through fee line: the count and the total (the fees are billed as sent, there is no unit price);
 * - a subscription, one-time fee, minimum or credit: 1 × its amount.
 */
export function lineRows(line: PdfLine, currency: string, locale = "en-US"): string[][] {
  const money = (amount: string) => documentMoney(amount, currency, locale);
  const exact = (amount: string) => formatMoney(amount, currency, UNIT_PRICE_DECIMALS, locale);
  const rule = line.rule ?? null;
  const note = (text: string, amount = ""): string[] => [`${INDENT}${text}`, "", "", amount];
  if (line.kind === "fee") return [[line.description, decimalWords(line.quantity), "pass-through", money(line.amount)]];
  if (line.kind !== "usage" || rule === null) {
    return [
      [line.description, decimalWords(line.quantity), exact(line.unitPrice), money(line.amount)],
      ...tierRows(line, currency),
      ...(line.capAdjustment !== undefined ? [note("Monthly cap", exact(line.capAdjustment))] : []),
    ];
  }
  const capped = (product: Big | null): string[][] => {
    if (rule.monthly_cap == null) return [];
    const uncapped = line.uncapped !== undefined ? new Big(line.uncapped) : product;
    const cap = `capped at the monthly cap of ${money(rule.monthly_cap)}`;
    if (uncapped === null) return new Big(line.amount).gte(rule.monthly_cap) ? [note(cap)] : [];
    const rounded = roundToMinorUnit(uncapped, currency);
    return rounded.gt(line.amount) ? [note(`${cap}; uncapped ${money(rounded.toFixed())}`)] : [];
  };
  const product = new Big(line.quantity).times(line.unitPrice);
  switch (rule.model) {
    case "percentage": {
      const fees = rule.fixed_fee != null || rule.min_fee != null || rule.max_fee != null;
      // The count of transactions and the volume the rate applies to, when the events are on the invoice.
      const volume =
        line.events === undefined
          ? []
          : [
              note(
                `${decimalWords(String(line.events))} ${line.events === 1 ? "transaction" : "transactions"}, volume ${money(line.quantity)}`,
              ),
            ];
      return [
        [line.description, exact(line.quantity), percentWords(line.unitPrice), money(line.amount)],
        ...volume,
        ...(fees ? [note(rulePriceWords(rule, currency))] : []),
        ...capped(fees ? null : product),
      ];
    }
    case "graduated":
    case "volume": {
      const tiers = tierRows(line, currency);
      const uncapped = (line.tiers ?? []).reduce((sum, t) => sum.plus(t.amount), ZERO);
      const cut =
        line.capAdjustment === undefined
          ? []
          : [
              note(
                rule.monthly_cap == null
                  ? "Monthly cap"
                  : `capped at the monthly cap of ${money(rule.monthly_cap)}; uncapped ${exact(uncapped.toFixed())}`,
                exact(line.capAdjustment),
              ),
            ];
      return [[line.description, decimalWords(line.quantity), "", money(line.amount)], ...tiers, ...cut];
    }
    case "package":
      return [
        [line.description, decimalWords(line.quantity), "", money(line.amount)],
        note(rulePriceWords(rule, currency)),
        ...capped(null),
      ];
    default:
      return [
        [line.description, decimalWords(line.quantity), exact(line.unitPrice), money(line.amount)],
        ...capped(product),
      ];
  }
}

/**
 * The sub-rows of a graduated or volume line: one per tier (its bounds, quantity, unit price, exact amount).
 * Tier amounts are exact, as the API gives them.
 */
function tierRows(line: PdfLine, currency: string): string[][] {
  const exact = (amount: string) => formatMoney(amount, currency, UNIT_PRICE_DECIMALS);
  const rows: string[][] = [];
  let lower: string | null = null;
  for (const tier of line.tiers ?? []) {
    const bounds =
      tier.upTo !== null
        ? `up to ${decimalWords(tier.upTo)}`
        : lower !== null
          ? `above ${decimalWords(lower)}`
          : "all units";
    const flat = tier.flat === null ? "" : ` (+ ${exact(tier.flat)} flat)`;
    rows.push([
      `${INDENT}Tier ${bounds}${flat}`,
      decimalWords(tier.quantity),
      exact(tier.unitPrice),
      exact(tier.amount),
    ]);
    if (tier.upTo !== null) lower = tier.upTo;
  }
  return rows;
}
