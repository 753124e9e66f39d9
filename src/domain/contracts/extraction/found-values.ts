// What every reader of an agreement's terms hands back, and the two ways they look for a value. A value found is
// kept with its source (the page, the exact text, the OCR confidence) and how sure its wording makes it; it is
// looked for under a label or by a pattern in the running text. One home for these, so that every reader
// (parties, contract number, dates, money, fees, price tables, prices in sentences) finds and reports alike.
import type { ExtractedRule, ExtractedValue } from "./extraction-types.js";
import { type Block, type Cell, type Layout, type Line, sourceOf } from "./text-layout.js";

/** Where a value was read: the page, the exact text, and the OCR confidence of that text (1 for a text layer). */
export interface Source {
  page: number;
  source_text: string;
  confidence: number;
}

export const lineSource = (...lines: Line[]): Source => ({
  page: lines[0]!.page,
  source_text: lines.map((line) => line.text).join(" "),
  confidence: Math.min(...lines.map((line) => line.confidence)),
});

/** A found value, its source and how sure the wording makes it (before OCR's confidence). */
export interface Found<T> {
  value: T;
  source: Source;
  strength: number;
}

/** A pricing rule found, with the finding behind each of its fields (its value, source and strength). */
export interface RuleFinding {
  rule: ExtractedRule;
  found: Record<string, Found<ExtractedValue>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Labels: "Label: value" on a line, a label cell and the cell beside it, or a label above its value.

/** A value written under or beside a label, with the lines it stands on. */
interface Labelled {
  value: string;
  lines: Line[];
  /** The value's cell, when the value stands in a cell of its own (a box's first line): what is below it. */
  cell?: { line: number; x: number };
}

export function labelledValues(layout: Layout, label: RegExp): Labelled[] {
  const found: Labelled[] = [];
  const { lines } = layout;
  lines.forEach((line, at) => {
    line.cells.forEach((cell, k) => {
      const value = labelledValue(lines, at, cell, k, label);
      if (value !== undefined) found.push(value);
    });
  });
  return found;
}

/** The value of a cell that starts with a label: after its colon, in the next cell, or in the cell below it. */
function labelledValue(lines: readonly Line[], at: number, cell: Cell, k: number, label: RegExp): Labelled | undefined {
  const line = lines[at]!;
  const m = /^(.{1,48}?)\s*(?::|\s[–—-]\s|$)\s*(.*)$/.exec(cell.text);
  if (m === null || !label.test(m[1]!.trim().replace(/\.$/, ""))) return undefined;
  const rest = m[2] ?? "";
  if (rest !== "" && !/:|\s[–—-]\s/.test(cell.text.slice(m[1]!.length, m[1]!.length + 4))) return undefined;
  if (rest !== "") return { value: rest, lines: [line] };
  const beside = line.cells[k + 1];
  if (beside !== undefined) return { value: beside.text, lines: [line] };
  // A label alone: its value is the next line's cell that starts where the label does.
  for (let next = at + 1; next < Math.min(lines.length, at + 3); next++) {
    const below = lines[next]!;
    if (below.page !== line.page || line.y - below.y > 3 * line.size) break;
    const under = below.cells.find((c) => Math.abs(c.x - cell.x) <= 8);
    if (under !== undefined) return { value: under.text, lines: [below], cell: { line: next, x: under.x } };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Running text

/** Every block whose text matches, with the match: a sentence-level search over the running text. */
export function* matches(layout: Layout, pattern: RegExp): Generator<{ block: Block; m: RegExpExecArray }> {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  for (const block of layout.blocks) {
    for (const m of block.text.matchAll(global)) yield { block, m: m as RegExpExecArray };
  }
}

export const fromMatch = (block: Block, m: RegExpExecArray): Source =>
  sourceOf(block, m.index ?? 0, (m.index ?? 0) + m[0].length);
