// When the agreement runs: its start and end dates under labels, in a "Term" label's range or length, or in
// sentences that say a date starts or ends it ("effective as of", "until", "for a period of twelve (12) months");
// an end of null where it runs until terminated. Dates written in numbers only are read day first where the
// document is British or European (by its currency, else the places it names) and month first otherwise, unless
// another date can only be read one way; a warning asks to check them when one could have been read either way.
import type { ExtractionWarning } from "./extraction-types.js";
import { type Found, fromMatch, labelledValues, lineSource, matches, type Source } from "./found-values.js";
import { type Layout, sentenceAt, sourceOf } from "./text-layout.js";
import { COUNT_RE, findDates, readCount, termEndAfterMonths } from "./value-readers.js";

/** Places whose documents write dates day first: what decides the order when the currency does not. */
const DAY_FIRST_PLACES =
  /\b(?:United Kingdom|England|Scotland|Wales|UK|Ireland|Germany|France|Netherlands|Belgium|Spain|Italy|Austria|Switzerland|Sweden|Denmark|Norway|Finland|Portugal|Poland|Australia|New Zealand|India|Singapore|South Africa|EU|European)\b/;

/** The term's dates as read, and the warning to check them when a date could be read in either order. */
export interface TermDates {
  start: Found<string> | undefined;
  /** null when the agreement runs until terminated; left out when it would end before it starts. */
  end: Found<string | null> | undefined;
  warning: ExtractionWarning | undefined;
}

/** The term's dates, numeric ones read in the order the document's currency, places and other dates show. */
export function findTermDates(layout: Layout, currency: string | undefined): TermDates {
  const allText = layout.blocks.map((b) => b.text).join("\n");
  const dayFirst =
    currency !== undefined &&
    ["GBP", "EUR", "AUD", "NZD", "CHF", "INR", "SGD", "ZAR", "SEK", "DKK", "NOK", "PLN"].includes(currency)
      ? true
      : currency === "USD"
        ? false
        : DAY_FIRST_PLACES.test(allText);
  // A date of numbers that only one order can read (25/01/2026, 01/25/2026) shows the document's order.
  const numeric = [...allText.matchAll(/\b(\d{1,2})[/.](\d{1,2})[/.]\d{4}\b/g)].map((m) => [
    Number(m[1]),
    Number(m[2]),
  ]);
  const shown = numeric.some(([a]) => a! > 12) ? true : numeric.some(([, b]) => b! > 12) ? false : dayFirst;
  const shownBy =
    shown !== dayFirst || numeric.some(([a, b]) => a! > 12 || b! > 12)
      ? "another date in the document can only be read so"
      : undefined;
  const order = shown ? "day_first" : "month_first";
  let ambiguousDate: Source | undefined;

  const dateIn = (text: string) => findDates(text, order);
  const noteAmbiguous = (ambiguous: boolean, source: Source) => {
    if (ambiguous && ambiguousDate === undefined) ambiguousDate = source;
  };
  let start: Found<string> | undefined;
  let end: Found<string | null> | undefined;
  for (const found of labelledValues(
    layout,
    /^(?:effective|start|commencement|service start|contract start|subscription start|term start|begin)(?:\s+date)?$/i,
  )) {
    const d = dateIn(found.value)[0];
    if (d === undefined) continue;
    start = { value: d.date, source: lineSource(...found.lines), strength: 0.95 };
    noteAmbiguous(d.ambiguous, start.source);
    break;
  }
  for (const found of labelledValues(
    layout,
    /^(?:end|expiry|expiration|termination|contract end|term end|service end|subscription end)(?:\s+date)?$/i,
  )) {
    const d = dateIn(found.value)[0];
    if (d !== undefined) {
      end = { value: d.date, source: lineSource(...found.lines), strength: 0.95 };
      noteAmbiguous(d.ambiguous, end.source);
      break;
    }
    if (/^(?:none|n\/a|open[- ]ended|until terminated|no (?:fixed )?end)/i.test(found.value.trim())) {
      end = { value: null, source: lineSource(...found.lines), strength: 0.9 };
      break;
    }
  }
  // A "Term" label: "1 January 2026 – 31 December 2026", "January 5, 2026 to January 4, 2027".
  if (start === undefined || end === undefined) {
    for (const found of labelledValues(
      layout,
      /^(?:term|contract term|initial term|subscription term|period|service period)$/i,
    )) {
      const dates = dateIn(found.value);
      if (dates.length === 0) continue;
      const source = lineSource(...found.lines);
      if (start === undefined) start = { value: dates[0]!.date, source, strength: 0.9 };
      if (end === undefined && dates[1] !== undefined) end = { value: dates[1].date, source, strength: 0.9 };
      else if (end === undefined && /open[- ]ended|until terminated/i.test(found.value))
        end = { value: null, source, strength: 0.85 };
      noteAmbiguous(
        dates.some((d) => d.ambiguous),
        source,
      );
      break;
    }
  }
  if (start === undefined || end === undefined) {
    for (const block of layout.blocks) {
      for (const d of dateIn(block.text)) {
        const before = block.text.slice(Math.max(0, d.index - 70), d.index);
        const near = before.slice(-40);
        if (
          /\b(?:dated|signed|signature|executed|printed|generated|issued|revised|version|as at)\b[^.]*$/i.test(
            before.slice(-30),
          )
        )
          continue;
        const source = sourceOf(block, d.index, d.index + d.length);
        const isEnd =
          /\b(?:end(?:s|ing)?|expir(?:e|es|y|ation|ing)|terminat(?:e|es|ing)|until|through|to|and ending)\s+(?:on\s+|at\s+|the\s+)?(?:midnight\s+on\s+)?$/i.test(
            near,
          ) || /[–—-]\s*$/.test(near);
        const isStart =
          /\b(?:effective|commenc(?:e|es|ing|ement)|start(?:s|ing)?|begin(?:s|ning)?|from|as of|with effect from|on and after|into force|in force|go(?:es)? live|takes? effect)\b[^.]{0,30}$/i.test(
            near,
          ) || /\bEffective Date\b/.test(near);
        if (isEnd && end === undefined && start !== undefined && d.date >= start.value) {
          end = { value: d.date, source, strength: 0.85 };
          noteAmbiguous(d.ambiguous, source);
        } else if (isStart && !isEnd && start === undefined) {
          start = { value: d.date, source, strength: 0.85 };
          noteAmbiguous(d.ambiguous, source);
        }
      }
    }
  }
  if (start !== undefined && end === undefined) {
    // "Term: twelve (12) months from the start date".
    for (const found of labelledValues(layout, /^(?:term|contract term|initial term|subscription term)$/i)) {
      const m = new RegExp(String.raw`^(${COUNT_RE})\s+(months?|years?)\b`, "i").exec(found.value.trim());
      const count = m === null ? undefined : readCount(m[1]!);
      if (m === null || count === undefined || count <= 0 || count > 120) continue;
      const months = m[2]!.toLowerCase().startsWith("year") ? count * 12 : count;
      const value = termEndAfterMonths(start.value, months);
      if (value !== undefined) end = { value, source: lineSource(...found.lines), strength: 0.85 };
      break;
    }
  }
  if (start !== undefined && end === undefined) {
    for (const { block, m } of matches(
      layout,
      new RegExp(
        String.raw`\b(?:(?:initial\s+)?term|period)\s+of\s+(${COUNT_RE})\s+(months?|years?)|\bfor\s+(?:an?\s+(?:initial\s+)?(?:period|term)\s+of\s+)?(${COUNT_RE})\s+(months?|years?)`,
        "gi",
      ),
    )) {
      const sentence = sentenceAt(block.text, m.index ?? 0).text;
      if (!/\b(?:commenc|effective|start|term\b|continue|remain|begin|force|runs?\b|valid)/i.test(sentence)) continue;
      if (
        /\b(?:notice|within|after (?:the )?(?:termination|expiry)|retain|records|surviv|confidential|warrant)/i.test(
          sentence,
        )
      )
        continue;
      const count = readCount(m[1] ?? m[3] ?? "");
      const unit = (m[2] ?? m[4] ?? "").toLowerCase();
      if (count === undefined || count <= 0 || count > 120) continue;
      const months = unit.startsWith("year") ? count * 12 : count;
      const value = termEndAfterMonths(start.value, months);
      if (value !== undefined) end = { value, source: fromMatch(block, m), strength: 0.8 };
      break;
    }
  }
  if (end === undefined) {
    for (const { block, m } of matches(
      layout,
      /\b(?:until\s+terminated|open[- ]ended|no\s+fixed\s+(?:end|term|end date)|indefinite(?:ly)?\s+(?:term|period|until)|continue[sd]?\s+(?:in\s+(?:full\s+)?(?:force|effect)\s+)?until\s+(?:it\s+is\s+)?terminated)/i,
    )) {
      end = { value: null, source: fromMatch(block, m), strength: 0.8 };
      break;
    }
  }
  let warning: ExtractionWarning | undefined;
  if (ambiguousDate !== undefined) {
    warning = {
      code: "date_order",
      message: `Dates written in numbers only were read ${
        order === "day_first"
          ? `day first (05/01/2026 as 5 January 2026), as ${shownBy ?? "the document is British or European"}`
          : `month first (05/01/2026 as May 1, 2026), as ${shownBy ?? "the document is American"}`
      }: check the start and end dates against page ${ambiguousDate.page}.`,
      pages: [ambiguousDate.page],
    };
  }
  return {
    start,
    end: end !== undefined && (end.value === null || start === undefined || end.value >= start.value) ? end : undefined,
    warning,
  };
}
