// The agreement's money terms: the currency it bills in (under a label, in words such as "payable in euros", or
// else the currency its amounts are most written in, codes counting above symbols) and its payment terms in days
// ("Net 30", "within thirty (30) days of the invoice date"), never a notice or cure period's days.
import { type Found, fromMatch, labelledValues, lineSource, matches } from "./found-values.js";
import { type Layout, sentenceAt, sourceOf } from "./text-layout.js";
import { COUNT_RE, currencyNamed, findMoney, isCurrencyCode, readCount } from "./value-readers.js";

export function findCurrency(layout: Layout): Found<string> | undefined {
  for (const found of labelledValues(layout, /^(?:billing\s+|contract\s+|invoice\s+|payment\s+)?currency$/i)) {
    const code = /\b([A-Z]{3})\b/.exec(found.value)?.[1];
    const value = code !== undefined && isCurrencyCode(code) ? code : currencyNamed(found.value);
    if (value !== undefined) return { value, source: lineSource(...found.lines), strength: 0.95 };
  }
  for (const { block, m } of matches(
    layout,
    /\b(?:in|denominated in|payable in|expressed in|stated in|quoted in|billed in|invoiced in)\s+(?:the\s+)?(?:lawful currency of [A-Z][a-z]+(?: [A-Z][a-z]+)*\s*\()?([A-Z]{3}\b|(?:US |U\.S\. |United States |Canadian |Australian |New Zealand |Singapore |Swiss |Japanese |British )?(?:dollars?|euros?|pounds?(?: sterling)?|francs?|yen))/,
  )) {
    const said = m[1]!;
    const value = isCurrencyCode(said) ? said : currencyNamed(said);
    if (value !== undefined) return { value, source: fromMatch(block, m), strength: 0.9 };
  }
  // The amounts' own currencies: codes first, then symbols; the most written wins.
  const counts = new Map<string, { n: number; first: Found<string> }>();
  for (const block of layout.blocks) {
    for (const money of findMoney(block.text)) {
      if (money.currency === undefined) continue;
      const isCode = money.symbol === undefined || /^[A-Z]{3}$/.test(money.symbol);
      const weight = isCode ? 3 : money.symbol === "$" ? 1 : 2;
      const entry = counts.get(money.currency) ?? {
        n: 0,
        first: {
          value: money.currency,
          source: sourceOf(block, money.index, money.index + money.length),
          strength: money.symbol === "$" ? 0.85 : 0.9,
        },
      };
      entry.n += weight;
      counts.set(money.currency, entry);
    }
  }
  const best = [...counts.values()].sort((a, b) => b.n - a.n)[0];
  return best?.first;
}

export function findPaymentTerms(layout: Layout): Found<number> | undefined {
  for (const found of labelledValues(layout, /^(?:payment terms?|terms of payment|payment|invoice terms|due)$/i)) {
    const m = new RegExp(String.raw`\bnet\s*(\d{1,3})\b|(${COUNT_RE})\s+(?:calendar\s+)?days?`, "i").exec(found.value);
    const days = m === null ? undefined : m[1] !== undefined ? Number(m[1]) : readCount(m[2]!);
    if (days !== undefined && days <= 365) return { value: days, source: lineSource(...found.lines), strength: 0.95 };
  }
  for (const { block, m } of matches(layout, /\bnet\s*(\d{1,3})\b(?!\s*%)/i)) {
    const sentence = sentenceAt(block.text, m.index ?? 0).text;
    if (/\b(?:notice|terminat)/i.test(sentence)) continue;
    return { value: Number(m[1]), source: fromMatch(block, m), strength: 0.95 };
  }
  for (const { block, m } of matches(
    layout,
    new RegExp(
      String.raw`\b(?:within|no later than|not later than)\s+(${COUNT_RE})\s+(?:calendar\s+|business\s+)?days?\b|\b(?:due|payable)\s+(?:and\s+payable\s+)?(?:in\s+)?(${COUNT_RE})\s+(?:calendar\s+)?days?\s+(?:after|from|following|of)|\b(${COUNT_RE})[-\s](?:calendar\s+)?days?\s+(?:payment\s+)?terms\b`,
      "gi",
    ),
  )) {
    const sentence = sentenceAt(block.text, m.index ?? 0).text;
    if (/\b(?:notice|terminat|cure|dispute|breach|remedy|objection)/i.test(sentence)) continue;
    if (!/\b(?:pay|paid|payment|payable|invoice|due)/i.test(sentence)) continue;
    const days = readCount(m[1] ?? m[2] ?? m[3] ?? "");
    if (days === undefined || days > 365) continue;
    return { value: days, source: fromMatch(block, m), strength: 0.9 };
  }
  return undefined;
}
