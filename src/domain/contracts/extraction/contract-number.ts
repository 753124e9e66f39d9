// Which agreement this is: its number or id, under a label ("Contract ID", "Order Form No.", "Reference") or after
// such words in running text. A date or a bare year is no number.
import { type Found, fromMatch, labelledValues, lineSource, matches } from "./found-values.js";
import type { Layout } from "./text-layout.js";

const NUMBER_TOKEN = String.raw`([A-Z0-9][A-Za-z0-9]*(?:[-/_.][A-Za-z0-9]+)*)`;

export function contractNumber(layout: Layout): Found<string> | undefined {
  const valid = (token: string) =>
    /\d/.test(token) &&
    /^[A-Za-z0-9]/.test(token) &&
    token.length <= 60 &&
    !/^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$/.test(token) &&
    !/^\d{4}$/.test(token);
  // "Contract ID" names the id usage is reported against (the service's own agreements print it): it wins.
  for (const found of labelledValues(layout, /^contract id$/i)) {
    const token = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,254}(?=\s|$)/.exec(found.value.trim())?.[0];
    if (token !== undefined) return { value: token, source: lineSource(...found.lines), strength: 0.95 };
  }
  const labelled = [
    ...labelledValues(
      layout,
      /^(?:contract|agreement|order form|order|msa|sow|statement of work|reference|ref|contract reference|agreement reference|document)\s*(?:no\.?|number|#|id|ref(?:erence)?\.?|reference number)?$/i,
    ),
  ];
  for (const found of labelled) {
    const token = new RegExp(`^${NUMBER_TOKEN}`).exec(found.value.trim())?.[1];
    if (token !== undefined && valid(token))
      return { value: token, source: lineSource(...found.lines), strength: 0.95 };
  }
  for (const { block, m } of matches(
    layout,
    new RegExp(
      String.raw`\b(?:Contract|Agreement|Order Form|Order|MSA|SOW|Reference|Ref\.?|Quote|Quotation)\s*(?:No\.?|Number|#|ID|Reference)\s*[:.]?\s*${NUMBER_TOKEN}`,
      "gi",
    ),
  )) {
    const token = m[1]!.replace(/\.$/, "");
    if (valid(token)) return { value: token, source: fromMatch(block, m), strength: 0.9 };
  }
  return undefined;
}
