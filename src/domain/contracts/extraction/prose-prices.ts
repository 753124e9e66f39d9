// Usage prices written in sentences: tiers first ("A$1.50 each for the first 1,000, …"), their amounts no prices
// of their own, then single prices ("SEPA transfers are charged at EUR 0.12 per transfer"), each named by the
// thing it prices. Blocks holding a fee table's lines are the table reader's, and a monthly minimum's amount the
// fee reader's.
import type { ExtractedRule, ExtractedValue } from "./extraction-types.js";
import { FEE_PROSE } from "./fees.js";
import type { RuleFinding, Source } from "./found-values.js";
import { capitalised, priceFields, readPrices, readTiers } from "./price-reading.js";
import { type Layout, type Line, sentenceAt, sourceOf } from "./text-layout.js";
import { metricIdOf } from "./value-readers.js";

export function prosePrices(layout: Layout, tableRows: ReadonlySet<Line>): RuleFinding[] {
  const found: RuleFinding[] = [];
  const add = (rule: ExtractedRule, source: Source) => {
    const entry: RuleFinding = { rule, found: {} };
    for (const [key, value] of Object.entries(rule)) {
      if (key === "type" || key === "model" || value === undefined) continue;
      entry.found[key] = { value: value as ExtractedValue, source, strength: 0.85 };
    }
    found.push(entry);
  };
  for (const block of layout.blocks) {
    if (block.lines.some((line) => tableRows.has(line))) continue;
    // Tiers first: their amounts are no prices of their own.
    const tiered: Array<[number, number]> = [];
    let from = 0;
    while (from < block.text.length) {
      const sentence = sentenceAt(block.text, from);
      const end = sentence.start + sentence.text.length;
      const tiers = readTiers(sentence.text);
      // Unnamed in its sentence, the thing priced is the subject of the clause before: "Shipments are charged
      // in tiers each month: A$1.50 each for the first 1,000, …".
      const before = block.text.slice(Math.max(0, sentence.start - 80), sentence.start);
      const subject = /([A-Z][\p{L}0-9 -]{2,40}?)\s+(?:are|is)\s+(?:charged|billed|priced)\b[^.;:]*[:.]?\s*$/u.exec(
        before,
      )?.[1];
      const unit = tiers?.unit ?? subject;
      if (tiers !== undefined && unit !== undefined) {
        const name = capitalised(unit);
        add(
          { name, type: "usage", metric: metricIdOf(name), model: tiers.model, tiers: tiers.tiers },
          sourceOf(block, sentence.start + tiers.index, sentence.start + tiers.end),
        );
        tiered.push([sentence.start, end]);
      }
      from = Math.max(end, from + 1);
    }
    for (const reading of readPrices(block.text)) {
      if (tiered.some(([a, b]) => reading.index >= a && reading.index < b)) continue;
      const unit = reading.unit;
      if (unit === undefined) continue;
      const sentence = sentenceAt(block.text, reading.index);
      const name = capitalised(subjectOf(sentence.text.slice(0, reading.index - sentence.start), unit) ?? unit);
      if (/^(?:unit|item|month|year|invoice|the)$/i.test(name)) continue;
      if (FEE_PROSE.minimum.test(sentence.text.slice(0, reading.index - sentence.start)) && reading.model === "flat")
        continue;
      add(
        { name, type: "usage", metric: metricIdOf(name), ...priceFields(reading) },
        sourceOf(block, reading.index, reading.end),
      );
    }
  }
  return found;
}

/**
 * What a sentence says is priced, when it names the unit's kind: "SEPA transfers are charged at EUR 0.12 per
 * transfer" prices SEPA transfers, not any transfer. Only a subject that contains the unit's word is taken.
 */
function subjectOf(before: string, unit: string): string | undefined {
  const m =
    /(?:^|[.;:,]\s*)\s*([A-Z][\p{L}0-9&/ -]{1,48}?)\s+(?:is|are|will be|shall be)\s+(?:charged|billed|priced|invoiced)(?:\s+at)?\s*$/u.exec(
      before,
    ) ?? /(?:^|[.;]\s*)\s*([A-Z][\p{L}0-9&/ -]{1,48}?)\s*[:–—]\s*$/u.exec(before);
  const subject = m?.[1]?.trim();
  if (subject === undefined) return undefined;
  const head = unit.split(" ").at(-1)!.toLowerCase().replace(/e?s$/, "");
  return subject
    .toLowerCase()
    .split(/\s+/)
    .some((word) => word.replace(/e?s$/, "") === head)
    ? subject
    : undefined;
}
