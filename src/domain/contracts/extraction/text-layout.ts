// The runs of text of an agreement's pages as a reader sees them: lines (runs on one baseline), cells (the
// parts of a line set apart by a wide gap: a table's columns, a label and its value), the two columns of a
// page set in two, and blocks of running text whose sentences may wrap from line to line. Every piece keeps
// the lines it came from, so a value read anywhere can show the exact text and page it stands on.
import type { ExtractionItem } from "./extraction-types.js";

export interface Cell {
  x: number;
  /** Right edge, estimated where the run's width is not known. */
  end: number;
  text: string;
  confidence: number;
  /** The runs the cell was made of, each where it starts: a table's columns may be closer than a cell's gap. */
  parts: Array<{ x: number; text: string }>;
}

export interface Line {
  page: number;
  y: number;
  /** Font size, estimated: what distances on the line are measured in. */
  size: number;
  cells: Cell[];
  /** The line's words, cells joined by a space. */
  text: string;
  confidence: number;
}

/** Running text: lines read one after another, joined by spaces; `starts[k]` is where line k begins in `text`. */
export interface Block {
  page: number;
  lines: Line[];
  text: string;
  starts: number[];
}

export interface Layout {
  /** Every line in reading order (a page set in two columns: its left column, then its right). */
  lines: Line[];
  blocks: Block[];
}

const DEFAULT_SIZE = 10;

function itemSize(item: ExtractionItem): number {
  return item.height !== undefined && item.height > 2 ? item.height : DEFAULT_SIZE;
}

/** A run's right edge: its width where known, else about half the font size per character. */
function itemEnd(item: ExtractionItem): number {
  return item.x + (item.width ?? item.text.length * itemSize(item) * 0.5);
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Groups runs into lines by baseline, and a line's runs into cells where the gap between them is wide. */
function linesOf(items: readonly ExtractionItem[]): Line[] {
  // OCR reads specks and rules as strokes ("~~", "=", "|"): no word is made of those alone.
  const words = items.filter(
    (item) => clean(item.text) !== "" && !(item.confidence !== undefined && /^[~_=|'`.,:;^*]+$/.test(clean(item.text))),
  );
  const sorted = words.sort((a, b) => a.page - b.page || b.y - a.y);
  const groups: ExtractionItem[][] = [];
  for (const item of sorted) {
    const last = groups.at(-1);
    const head = last?.[0];
    if (head !== undefined && head.page === item.page && Math.abs(head.y - item.y) <= 0.45 * itemSize(head)) {
      last!.push(item);
    } else groups.push([item]);
  }
  return groups.map((group) => {
    group.sort((a, b) => a.x - b.x);
    const size = Math.max(...group.map(itemSize));
    const cells: Cell[] = [];
    const counts = new Map<Cell, number>();
    let partEnd = 0;
    for (const item of group) {
      const last = cells.at(-1);
      const confidence = item.confidence ?? 1;
      if (last !== undefined && item.x - last.end <= 1.5 * size) {
        // OCR gives a run per word: words always stand apart. A text layer's runs may split a word.
        const apart = item.confidence !== undefined || item.x - last.end > 0.15 * size;
        const glue = apart && !last.text.endsWith(" ") ? " " : "";
        last.text = clean(last.text + glue + item.text);
        last.end = Math.max(last.end, itemEnd(item));
        // The mean of the words' confidences: Tesseract gives some well-read words 0, one such word must not
        // make a whole line's reading worthless.
        const runs = (counts.get(last) ?? 1) + 1;
        counts.set(last, runs);
        last.confidence += (confidence - last.confidence) / runs;
        // Runs a word space apart are one part (OCR gives a run per word); a wider gap starts another.
        const part = last.parts.at(-1)!;
        if (item.x - partEnd <= 0.6 * size) part.text = clean(part.text + glue + item.text);
        else last.parts.push({ x: item.x, text: clean(item.text) });
        partEnd = Math.max(partEnd, itemEnd(item));
      } else {
        partEnd = itemEnd(item);
        cells.push({
          x: item.x,
          end: itemEnd(item),
          text: clean(item.text),
          confidence,
          parts: [{ x: item.x, text: clean(item.text) }],
        });
      }
    }
    return {
      page: group[0]!.page,
      y: group[0]!.y,
      size,
      cells,
      text: cells.map((cell) => cell.text).join(" "),
      confidence: cells.reduce((sum, cell) => sum + cell.confidence, 0) / cells.length,
    };
  });
}

/**
 * A page set in two columns, read left column first: when most of its lines of more than a few words break
 * into two cells of running text at one place near the middle, the cells right of it are the second column.
 */
function readingOrder(lines: Line[]): Line[] {
  const ordered: Line[] = [];
  const pages = [...new Set(lines.map((line) => line.page))];
  for (const page of pages) {
    const onPage = lines.filter((line) => line.page === page);
    const split = columnSplit(onPage);
    if (split === undefined) {
      ordered.push(...onPage);
      continue;
    }
    const left: Line[] = [];
    const right: Line[] = [];
    for (const line of onPage) {
      const l = line.cells.filter((cell) => cell.x < split - 2);
      const r = line.cells.filter((cell) => cell.x >= split - 2);
      if (l.length > 0) left.push({ ...line, cells: l, text: l.map((c) => c.text).join(" ") });
      if (r.length > 0) right.push({ ...line, cells: r, text: r.map((c) => c.text).join(" ") });
    }
    ordered.push(...left, ...right);
  }
  return ordered;
}

function columnSplit(lines: readonly Line[]): number | undefined {
  const right = Math.max(...lines.flatMap((line) => line.cells.map((cell) => cell.end)));
  const left = Math.min(...lines.map((line) => line.cells[0]!.x));
  const width = right - left;
  if (!(width > 200)) return undefined;
  // Where running text starts in the middle of the page, line after line: the second column's margin.
  const starts = lines
    .flatMap((line) =>
      line.cells.filter((cell, k) => (k > 0 || line.cells.length === 1) && cell.text.split(" ").length >= 3),
    )
    .map((cell) => cell.x)
    .filter((x) => x > left + 0.3 * width && x < left + 0.7 * width)
    .sort((a, b) => a - b);
  if (starts.length < 5) return undefined;
  const median = starts[Math.floor(starts.length / 2)]!;
  const at = lines.filter((line) => line.cells.some((cell) => Math.abs(cell.x - median) <= 6));
  if (at.length < 5 || at.length < lines.length * 0.25) return undefined;
  // Beside it, running text too (a table's first column is short names): most left cells have many words.
  const beside = at.map((line) => line.cells[0]!).filter((cell) => cell.x < median - 6);
  const wordy = beside.filter((cell) => cell.text.split(" ").length >= 4).length;
  return beside.length === 0 || wordy >= beside.length * 0.6 ? median : undefined;
}

/**
 * Running text: lines of one cell that follow each other closely on a page. A line of several cells (a table's
 * row, a label and its value) stands alone as a block of its own, its cells joined.
 */
function blocksOf(lines: readonly Line[]): Block[] {
  const blocks: Block[] = [];
  let current: Line[] = [];
  const flush = () => {
    if (current.length === 0) return;
    const starts: number[] = [];
    let text = "";
    for (const line of current) {
      if (text !== "") text += /\S-$/.test(text) && /^[a-z]/.test(line.text) ? "" : " ";
      starts.push(text.length);
      text += line.text;
    }
    blocks.push({ page: current[0]!.page, lines: current, text, starts });
    current = [];
  };
  for (const line of lines) {
    const last = current.at(-1);
    const gap = last === undefined ? 0 : last.y - line.y;
    const joins =
      last !== undefined &&
      last.page === line.page &&
      isProse(line) &&
      isProse(last) &&
      gap > 0 &&
      gap <= 2.2 * Math.max(last.size, line.size) &&
      !startsClause(line.text);
    if (!joins) flush();
    current.push(line);
  }
  flush();
  return blocks;
}

/**
 * A line of running text: one cell, or a first cell of many words that a wide gap (a word OCR could not read, a
 * speck beside the text) split from the rest. A table's row has short cells.
 */
function isProse(line: Line): boolean {
  return line.cells.length === 1 || line.cells[0]!.text.split(" ").length >= 6;
}

/** A numbered clause or a lettered item starts a new block: "4.", "2.1", "(a)", "Section 3". */
function startsClause(text: string): boolean {
  return /^(?:\d{1,2}\.(?:\d{1,2}\.?)*\s|\([a-z0-9]{1,3}\)\s|Section\s+\d|Schedule\s|SCHEDULE\s|Article\s+\d|§\s*\d)/.test(
    text,
  );
}

/**
 * Running text across block breaks: the blocks of one page made of lines of one cell, read as one. A scan's
 * uneven line spacing can break a paragraph in two; who the parties are is read across such a break.
 */
export function flowsOf(layout: Layout): Block[] {
  const flows: Block[] = [];
  for (const block of layout.blocks) {
    const last = flows.at(-1);
    const prose = block.lines.every(isProse);
    const lastProse = last?.lines.every(isProse) ?? false;
    if (last !== undefined && prose && lastProse && last.page === block.page) {
      const offset = last.text.length + 1;
      flows[flows.length - 1] = {
        page: last.page,
        lines: [...last.lines, ...block.lines],
        text: `${last.text} ${block.text}`,
        starts: [...last.starts, ...block.starts.map((start) => start + offset)],
      };
    } else flows.push(block);
  }
  return flows;
}

export function layoutOf(items: readonly ExtractionItem[]): Layout {
  const lines = readingOrder(linesOf(items));
  return { lines, blocks: blocksOf(lines) };
}

/** The exact text of the lines a stretch of a block stands on, and its page and lowest OCR confidence. */
export function sourceOf(
  block: Block,
  from: number,
  to: number,
): { page: number; source_text: string; confidence: number } {
  const touched = block.lines.filter((line, k) => {
    const start = block.starts[k]!;
    const end = start + line.text.length;
    return start < Math.max(to, from + 1) && end > from;
  });
  const lines = touched.length > 0 ? touched : block.lines.slice(0, 1);
  return {
    page: lines[0]!.page,
    source_text: lines.map((line) => line.text).join(" "),
    confidence: Math.min(...lines.map((line) => line.confidence)),
  };
}

/** The sentence of a block around a position: from the last full stop before it to the next after it. */
export function sentenceAt(text: string, at: number): { text: string; start: number } {
  let start = 0;
  for (const m of text.slice(0, at).matchAll(/[.;:](?=\s+[A-Z(0-9])/g)) start = (m.index ?? 0) + 1;
  const after = text.slice(at).search(/[.;](?:\s+[A-Z(0-9]|$)/);
  const end = after < 0 ? text.length : at + after + 1;
  return { text: text.slice(start, end), start };
}
