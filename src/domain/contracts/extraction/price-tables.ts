// Usage prices in fee tables: a header row says which column names what is priced and which holds its price (a
// cap, counterparty, metric, type or notes column may add to it); a row may wrap onto the lines below; rows named
// by quantity ranges are one rule's tiers, named by the caption above them; and with no header, a line of a name
// cell and a price cell, or "Label: price", is a row of its own. Every line read as a table's is put in the set
// handed in, so that the prose reader leaves it alone.
import type { ExtractedRule, ExtractedValue } from "./extraction-types.js";
import { FEE_LABELS } from "./fees.js";
import { lineSource, type RuleFinding } from "./found-values.js";
import { capitalised, NOT_PRICES, type PriceReading, priceFields, readPrices, readTiers } from "./price-reading.js";
import type { Layout, Line } from "./text-layout.js";
import { findMoney, metricIdOf } from "./value-readers.js";

const NAME_HEADER =
  /^(?:service|services|item|items|description|product|products|usage|usage type|metric|transaction(?: type)?|fee type|fee|charge|activity|unit|name|line item|component|feature|event|services? description)s?$/i;
const PRICE_HEADER =
  /^(?:(?:unit |list |net |usage |transaction )?(?:price|prices|rate|rates|fee|fees|amount|pricing|cost|charge|charges)(?:\s+per\s+[a-z ]{2,20})?(?:\s*\(?(?:[A-Z]{3}|[$€£¥]|per [a-z ]{2,20})\)?)?)$/i;
const CAP_HEADER =
  /^(?:monthly cap|cap|maximum|max(?:imum)? per month|monthly maximum|cap per month|monthly cap \(?[A-Z]{3}\)?)$/i;
const COUNTERPARTY_HEADER =
  /^(?:counterparty|bank|partner|network|corridor|destination|counterparty bank|recipient bank|via)$/i;
const METRIC_HEADER = /^(?:metric|metric id|usage metric|meter|event type)$/i;
const TYPE_HEADER = /^(?:type|fee type|charge type|billing type)$/i;
const NOTES_HEADER = /^(?:notes?|comments?|remarks?|details|conditions|terms)$/i;

type Column = "name" | "price" | "cap" | "counterparty" | "metric" | "type" | "notes";

/** A header row: two cells or more, none a price, one naming what is priced and one the price. */
function headerOf(line: Line): Array<{ x: number; column: Column | undefined }> | undefined {
  const parts = line.cells.flatMap((cell) => cell.parts);
  if (parts.length < 2) return undefined;
  const texts = parts.map((part) => part.text.replace(/[:*]$/, "").trim());
  if (texts.some((t) => findMoney(t).length > 0 || /\d%/.test(t))) return undefined;
  const columns = texts.map((t): Column | undefined =>
    PRICE_HEADER.test(t)
      ? "price"
      : METRIC_HEADER.test(t)
        ? "metric"
        : TYPE_HEADER.test(t)
          ? "type"
          : CAP_HEADER.test(t)
            ? "cap"
            : COUNTERPARTY_HEADER.test(t)
              ? "counterparty"
              : NOTES_HEADER.test(t)
                ? "notes"
                : NAME_HEADER.test(t)
                  ? "name"
                  : undefined,
  );
  if (!columns.includes("name") && columns.filter((c) => c === "price").length > 1 && NAME_HEADER.test(texts[0]!)) {
    columns[0] = "name";
  }
  if (!columns.includes("name")) {
    const metric = columns.indexOf("metric");
    const first = columns.findIndex((c) => c === undefined);
    if (metric >= 0) columns[metric] = "name";
    else if (first === 0) columns[0] = "name";
  }
  if (columns.filter((c) => c === "name").length > 1) columns[columns.lastIndexOf("name")] = undefined;
  if (!columns.includes("price") || !columns.includes("name")) return undefined;
  if (columns.filter((c) => c === undefined).length > 1) return undefined;
  return parts.map((part, k) => ({ x: part.x, column: columns[k] }));
}

/** A table row being read: its text by column, over the lines it wraps onto. */
interface Row {
  byColumn: Map<Column, string[]>;
  lines: Line[];
}

const priceOf = (text: string): PriceReading | undefined => readPrices(text, { inCell: true })[0];

export function tablePrices(layout: Layout, rowsUsed: Set<Line>): RuleFinding[] {
  const found: RuleFinding[] = [];
  let header: Array<{ x: number; column: Column | undefined }> | undefined;
  let row: Row | undefined;
  // Tiers: rows named by a quantity range ("First 10,000", "10,001 – 50,000", "Over 50,000") are one rule's,
  // named by the caption above them (a heading, or a row with a name and no price).
  let caption: { text: string; line: Line } | undefined;
  let tierRows: Row[] = [];
  const flushTiers = () => {
    const rows = tierRows;
    tierRows = [];
    if (rows.length < 2) return;
    const text = rows
      .map((r) => `${r.byColumn.get("name")?.join(" ")} ${r.byColumn.get("price")?.join(" ")}`)
      .join("; ");
    const tiers = readTiers(text);
    const name = captionName(caption?.text) ?? (tiers?.unit === undefined ? undefined : capitalised(tiers.unit));
    if (tiers === undefined || name === undefined) return;
    const lines = [...(caption !== undefined ? [caption.line] : []), ...rows.flatMap((r) => r.lines)];
    const source = lineSource(...lines);
    const rule: ExtractedRule = {
      name,
      type: "usage",
      metric: metricIdOf(name),
      model: tiers.model,
      tiers: tiers.tiers,
    };
    const entry: RuleFinding = { rule, found: {} };
    for (const key of ["name", "metric", "tiers"] as const)
      entry.found[key] = { value: rule[key] as ExtractedValue, source, strength: 0.85 };
    found.push(entry);
    for (const line of lines) rowsUsed.add(line);
  };
  const finish = () => {
    if (row !== undefined) {
      const name = row.byColumn.get("name")?.join(" ") ?? "";
      if (TIER_NAME.test(name) && row.byColumn.has("price")) {
        tierRows.push(row);
        row = undefined;
        return;
      }
      flushTiers();
      const rule = readRow(row);
      // A row with a name and no price ("API calls | Tiered, see below") captions the tier rows under it.
      const price = row.byColumn.get("price")?.join(" ") ?? "";
      if (rule === undefined && findMoney(price).length === 0 && name !== "" && name.split(" ").length <= 8)
        caption = { text: name, line: row.lines[0]! };
      if (rule !== undefined) {
        found.push(rule);
        for (const line of row.lines) rowsUsed.add(line);
      } else if (header === undefined) for (const line of row.lines) rowsUsed.delete(line);
    }
    row = undefined;
  };
  for (const [at, line] of layout.lines.entries()) {
    const isHeader = headerOf(line);
    if (isHeader !== undefined) {
      finish();
      flushTiers();
      header = isHeader;
      continue;
    }
    if (
      header === undefined &&
      line.cells.length === 1 &&
      line.text.split(" ").length <= 8 &&
      priceOf(line.text) === undefined
    ) {
      flushTiers();
      caption = { text: line.text, line };
    }
    const last = row?.lines.at(-1);
    if (header !== undefined) {
      const left = header[0]!.x;
      // A cell running across the next column's start is running text, not a cell of this table.
      const spans = line.cells.some((cell) => {
        const next = header?.find((h) => h.x > cell.x + 12);
        return (
          next !== undefined && cell.parts.length === 1 && cell.end > next.x + 6 && cell.text.split(" ").length >= 6
        );
      });
      const sameTable =
        (last === undefined || (last.page === line.page && last.y - line.y < 4 * line.size)) &&
        line.cells[0]!.x >= left - 12 &&
        !spans;
      if (!sameTable) {
        finish();
        header = undefined;
      }
    }
    if (header !== undefined) {
      rowsUsed.add(line); // a line of a table is never read as running text, whether or not it is a price
      const byColumn = new Map<Column, string[]>();
      let stray = false;
      for (const part of line.cells.flatMap((cell) => cell.parts)) {
        let k = 0;
        header.forEach((h, i) => {
          if (part.x >= h.x - 12) k = i;
        });
        const column = header[k]!.column;
        if (column === undefined) {
          stray = true;
          continue;
        }
        byColumn.set(column, [...(byColumn.get(column) ?? []), part.text]);
      }
      const name = byColumn.get("name")?.join(" ");
      // A line with no price under a row, close to it: the row's cells wrapped.
      const wraps =
        row !== undefined &&
        last !== undefined &&
        last.y - line.y < 1.8 * line.size &&
        (name === undefined || /^[a-z(&/]/.test(name) || !byColumn.has("price"));
      if (wraps && row !== undefined && (name === undefined || !byColumn.has("price"))) {
        for (const [column, texts] of byColumn)
          row.byColumn.set(column, [...(row.byColumn.get(column) ?? []), ...texts]);
        row.lines.push(line);
        continue;
      }
      finish();
      if (!stray || byColumn.has("price")) row = { byColumn, lines: [line] };
      continue;
    }
    // No header: a line of a name cell and a price cell is a row of its own.
    const cells = line.cells;
    if (
      cells.length >= 2 &&
      (/[A-Za-z]{3}/.test(cells[0]!.text) || TIER_NAME.test(cells[0]!.text)) &&
      priceOf(cells[0]!.text) === undefined
    ) {
      row = {
        byColumn: new Map<Column, string[]>([
          ["name", [cells[0]!.text]],
          ["price", cells.slice(1).map((c) => c.text)],
        ]),
        lines: [line],
      };
      finish();
      continue;
    }
    // "• Chargebacks: $15.00 each": a label and its price on one line is a row too.
    const labelled = cells.length === 1 ? LABELLED_PRICE.exec(cells[0]!.text) : null;
    // Its price may wrap onto the lines below, up to the next label or bullet.
    const wrapped = labelled === null ? [] : continuationLines(layout.lines, at);
    const value = [labelled?.[2] ?? "", ...wrapped.map((next) => next.text)].join(" ");
    if (
      labelled !== null &&
      !NOT_PRICES.test(labelled[1]!) &&
      labelled[1]!.split(" ").length <= 5 &&
      !/\b(?:is|are|was|will|shall|be|billed|charged|priced|invoiced|pays?|follows)\b/i.test(labelled[1]!) &&
      (startsWithPrice(labelled[2]!) || readTiers(value) !== undefined)
    ) {
      row = {
        byColumn: new Map<Column, string[]>([
          ["name", [labelled[1]!]],
          ["price", [readTiers(value) !== undefined ? value : labelled[2]!]],
        ]),
        lines: readTiers(value) !== undefined ? [line, ...wrapped] : [line],
      };
      finish();
    }
  }
  finish();
  flushTiers();
  return found;
}

/** A row named by a quantity range: one tier of a rule. */
const TIER_NAME =
  /^(?:for\s+)?(?:(?:the\s+)?first|(?:the\s+)?next|up\s+to|over|above|beyond|more than|in excess of|thereafter|\d[\d,]*\s*(?:-|–|—|to|\+|and\s+(?:above|over|more)))/i;

/** A caption as a rule's name: "API calls (graduated pricing)" → "API calls"; a heading in capitals is no name. */
function captionName(text: string | undefined): string | undefined {
  const name = text
    ?.replace(/\s*\([^)]*\)\s*$/, "")
    .replace(/[:–—-]+$/, "")
    .replace(/^\d+(?:\.\d+)*\.?\s+/, "")
    .trim();
  if (name === undefined || name.length < 3 || !/[a-z]/.test(name)) return undefined;
  if (/\b(?:schedule|fees|pricing|prices|annex|appendix|exhibit|table)\b/i.test(name) && name.split(" ").length <= 2)
    return undefined;
  return capitalised(name);
}

/** The lines a line's text runs on to: close below it, one cell each, none starting a label or a bullet. */
function continuationLines(lines: readonly Line[], at: number): Line[] {
  const out: Line[] = [];
  let last = lines[at]!;
  for (let k = at + 1; k < lines.length && out.length < 3; k++) {
    const next = lines[k]!;
    if (next.page !== last.page || last.y - next.y > 2 * last.size || next.cells.length !== 1) break;
    if (LABELLED_PRICE.test(next.text) || /^[^\p{L}\p{N}\s]/u.test(next.text)) break;
    out.push(next);
    last = next;
  }
  return out;
}

/** "Label: value" at a line's start, after a bullet or a list letter. */
const LABELLED_PRICE =
  /^(?:[^\p{L}\p{N}\s(]{1,2}\s*|\(?[a-z0-9]{1,2}[.)]\s+)?([A-Z][\p{L}0-9&/ ()'’-]{2,60}?)\s*:\s+(.+)$/u;

/** Whether a value starts with a price (not a price somewhere in a sentence). */
function startsWithPrice(value: string): boolean {
  const price = priceOf(value);
  return price !== undefined && price.index <= 4;
}

/** A table row as a rule: a usage price, or a monthly fee the Type column names. */
function readRow(row: Row): RuleFinding | undefined {
  const text = (column: Column) => {
    const texts = row.byColumn.get(column);
    return texts === undefined ? undefined : texts.join(" ").replace(/\s+/g, " ").trim();
  };
  const nameText = text("name");
  const priceText = text("price");
  if (nameText === undefined || priceText === undefined) return undefined;
  const name = nameText
    .replace(/[\s:*–—-]+$/, "")
    .replace(/^\d+(?:\.\d+)*\.?\s+/, "")
    .trim();
  if (!/[A-Za-z]{2}/.test(name) || name.length > 80 || NOT_A_PRICE_ROW.test(name)) return undefined;
  const tiers = readTiers(priceText);
  if (tiers !== undefined) {
    const rule: ExtractedRule = {
      name: capitalised(name),
      type: "usage",
      metric: metricIdOf(name),
      model: tiers.model,
      tiers: tiers.tiers,
    };
    const source = lineSource(...row.lines);
    return {
      rule,
      found: Object.fromEntries(
        (["name", "metric", "tiers"] as const).map((key) => [
          key,
          { value: rule[key] as ExtractedValue, source, strength: 0.9 },
        ]),
      ),
    };
  }
  const price = priceOf(priceText);
  if (price === undefined) return undefined;
  const type = text("type") ?? "";
  const source = lineSource(...row.lines);
  const strength = row.lines.length > 1 ? 0.9 : 0.95;
  const entry = (rule: ExtractedRule): RuleFinding => {
    const found: RuleFinding["found"] = {};
    for (const [key, value] of Object.entries(rule)) {
      if (key === "type" || key === "model" || key === "frequency" || value === undefined) continue;
      found[key] = { value: value as ExtractedValue, source, strength };
    }
    return { rule, found };
  };
  const monthly = /\b(?:per|a|\/)\s*(?:calendar\s+)?month\b|\bmonthly\b/i.test(priceText);
  if (/minimum/i.test(type) || FEE_LABELS.minimum.test(name)) return undefined; // read by findFee
  if (
    /subscription|recurring/i.test(type) ||
    (price.model === "flat" && (monthly || FEE_LABELS.subscription.test(name)))
  ) {
    if (price.model !== "flat" || price.amount === undefined) return undefined;
    return entry({
      name: capitalised(name),
      type: "subscription",
      model: "flat",
      frequency: "monthly",
      amount: price.amount,
    });
  }
  if (/one[- ]time|setup|set-up/i.test(type)) return undefined;
  const cap = text("cap");
  // A Notes column may say what a column would: "Capped at CHF 2,000.00 per month", "Counterparty: HSBC UK".
  const notes = text("notes") ?? "";
  const notedCap = /\b(?:capped|cap|maximum|max\.?|not to exceed)\b/i.test(notes)
    ? readPrices(`${priceText} ${notes}`, { inCell: true })[0]?.monthly_cap
    : undefined;
  const capAmount = cap === undefined ? notedCap : findMoney(cap)[0]?.amount;
  const notedCounterparty = /\b(?:counterparty|bank|via|to)\s*:?\s+([A-Z][\p{L}0-9&.'’ -]{1,60}?)\s*(?:[;,]|$)/u.exec(
    notes,
  )?.[1];
  const counterpartyText = text("counterparty") ?? notedCounterparty;
  const counterparty =
    counterpartyText !== undefined &&
    /[A-Za-z]/.test(counterpartyText) &&
    !/^(?:—|-|n\/a|none|any|all)$/i.test(counterpartyText)
      ? counterpartyText
      : undefined;
  // Without a counterparty column, a row may name it: "International wire (via Citibank N.A.)", "Wires to HSBC UK".
  let rowName = name;
  let named: string | undefined;
  if (counterpartyText === undefined) {
    const m =
      /^(.*?)\s*\((?:via|to|with|through)\s+([^)]+)\)$/i.exec(name) ??
      /^(.*?[a-z])\s+(?:to|via|through)\s+((?:[A-Z][\p{L}0-9&.'’-]*)(?:\s+(?:[A-Z][\p{L}0-9&.'’-]*|&|of))*)$/u.exec(
        name,
      );
    if (m !== null && m[1]!.length >= 3) [rowName, named] = [m[1]!.trim(), m[2]!.trim()];
  }
  const metricText = text("metric")?.replace(/\s+/g, "");
  const metric = metricText !== undefined && /^[A-Za-z0-9_.:-]+$/.test(metricText) ? metricText : metricIdOf(rowName);
  const fields = priceFields(price);
  if (capAmount !== undefined) fields.monthly_cap = capAmount;
  if (counterparty !== undefined) fields.counterparty = counterparty;
  else if (named !== undefined) fields.counterparty = named;
  return entry({ name: capitalised(rowName), type: "usage", metric, ...fields });
}

/** Rows of a fees table that are not usage prices. */
const NOT_A_PRICE_ROW =
  /^(?:total|subtotal|late|interest|liability|discount|tax|vat|deposit|setup|set-up|implementation|onboarding|one[- ]time|termination)/i;
