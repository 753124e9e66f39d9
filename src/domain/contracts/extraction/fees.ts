// The agreement's two rules of one monthly amount: the monthly minimum and the monthly fee (platform,
// subscription, access …), under their label or in a sentence that says the amount is monthly. Their labels and
// wordings are exported for the price readers too, so that a fee is never read again as a usage price.
import type { ExtractedRule } from "./extraction-types.js";
import { type Found, labelledValues, lineSource, matches, type RuleFinding } from "./found-values.js";
import { capitalised } from "./price-reading.js";
import { type Layout, sentenceAt, sourceOf } from "./text-layout.js";
import { findMoney } from "./value-readers.js";

export const FEE_LABELS = {
  minimum:
    /^(?:monthly minimum(?:\s+(?:commitment|fee|charge|spend|amount))?|minimum monthly(?:\s+(?:commitment|fee|charge|spend|amount))?|minimum(?:\s+(?:commitment|fee|charge|spend|amount))?(?:\s+per month)?|minimum commitment \(monthly\))$/i,
  subscription:
    /^(?:monthly\s+)?(?:platform|subscription|access|base|license|licence|service|support|account|maintenance|monthly)(?:\s+access)?\s+fee(?:\s*\(monthly\)|\s+per month)?$|^monthly (?:subscription|fee)$/i,
} as const;
export const FEE_PROSE = {
  minimum:
    /\b(?:minimum monthly (?:commitment|fee|charge|spend|amount)|monthly minimum(?: (?:commitment|fee|charge|spend|amount))?|minimum (?:commitment|spend|fee|charge|amount)|minimum of)\b/i,
  subscription:
    /\b((?:monthly )?(?:platform|subscription|access|base|license|licence|support|maintenance|account)(?: access)? fee|monthly (?:access|service|platform|subscription) fee|monthly fee)\b/i,
} as const;
const MONTHLY = /\b(?:per|a|each|every)\s+(?:calendar\s+)?month\b|\bmonthly\b|\/\s*(?:mo|month)\b|\bper mensem\b/i;

/** A monthly minimum or a monthly fee: under its label, or in a sentence that says it is monthly. */
export function findFee(layout: Layout, kind: "minimum" | "subscription"): RuleFinding | undefined {
  const make = (label: string, amount: string, found: Found<string>): RuleFinding => {
    const name = kind === "minimum" ? "Monthly minimum" : capitalised(label.replace(/\s*\((?:monthly)\)$/i, "").trim());
    const rule: ExtractedRule =
      kind === "minimum"
        ? { name, type: "minimum", model: "flat", amount }
        : { name, type: "subscription", model: "flat", frequency: "monthly", amount };
    return { rule, found: { amount: { ...found, value: amount }, name: { ...found, value: name } } };
  };
  for (const found of labelledValues(layout, FEE_LABELS[kind])) {
    const money = findMoney(found.value)[0];
    if (money === undefined) continue;
    const after = found.value.slice(money.index + money.length);
    if (/^\s*(?:per|\/|a|each)\s+(?:year|annum|quarter|transaction|unit|call)/i.test(after)) continue;
    const label = found.lines[0]!.cells[0]!.text.split(":")[0]!.trim();
    return make(label, money.amount, { value: money.amount, source: lineSource(...found.lines), strength: 0.95 });
  }
  for (const { block, m } of matches(layout, FEE_PROSE[kind])) {
    const sentence = sentenceAt(block.text, m.index ?? 0);
    const tail = sentence.text.slice((m.index ?? 0) - sentence.start);
    const money = findMoney(tail)[0];
    if (money === undefined || money.index > 90) continue;
    const after = tail.slice(money.index + money.length, money.index + money.length + 40);
    if (/^\s*(?:per|\/|for each|each)\s+(?!(?:calendar\s+)?month)/i.test(after)) continue; // a price per event
    if (!MONTHLY.test(sentence.text) || /\b(?:year|annual|annum|quarter)/i.test(after)) continue;
    const at = sentence.start + ((m.index ?? 0) - sentence.start) + money.index;
    return make(kind === "subscription" ? (m[1] ?? m[0]) : m[0], money.amount, {
      value: money.amount,
      source: sourceOf(block, m.index ?? 0, at + money.length),
      strength: 0.85,
    });
  }
  return undefined;
}
