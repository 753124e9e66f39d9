// Reads the terms back from the text of one of the service's own agreements: the customer, the contract ID,
// the term, the currency and every row of the pricing table, from where the words stand on the pages
// (platform/pdf-text.ts), never from the PDF's metadata. It is the inverse of the layout agreement-text.ts
// words and agreement-pdf.ts draws: a title; the parties' boxes, the customer's name under its label; key
// terms as label/value pairs in two columns; the pricing table, its columns starting where its header row's
// cells do, continued on later pages under the header repeated. Pure. A field it cannot read is null and a
// row it cannot read is left out: nothing is guessed.
import type { PdfTextItem } from "../../platform/pdf-text.js";
import {
  AGREEMENT_HEADINGS,
  AGREEMENT_PARTIES,
  AGREEMENT_TITLE,
  AGREEMENT_WATERMARK,
  KEY_TERM_LABELS,
  NO_VALUE,
  readAgreementTerm,
  readRuleType,
  RULE_COLUMNS,
  type RuleColumn,
} from "./agreement-text.js";
import type { RuleModel, RuleType } from "./pricing-rule.js";
import { moneyWords, readMoneyWords, readRulePriceWords, rulePriceWords } from "./rule-price-wording.js";

export interface AgreementReading {
  customer_name: string | null;
  contract_id: string | null;
  start_date: string | null; // YYYY-MM-DD
  end_date: string | null; // null when open-ended or not read
  currency: string | null; // ISO code as printed in Key terms
  rules: ReadRule[]; // every row of the pricing table it could read, in order
}

export interface ReadRule {
  name: string;
  type: RuleType;
  model: RuleModel;
  amount?: string;
  rate?: string;
  metric?: string;
  monthly_cap?: string;
  counterparty?: string;
}

/** Points two baselines may differ by on one line; the lines of a text are 9 points apart or more. */
const SAME_LINE = 1.5;
/** Points a text may start from where its column starts. */
const SAME_X = 1.5;
/** Drawn in place of a character the font lacks: text that has one is not the text that was written. */
const REPLACEMENT = "\uFFFD";

/** The items on one baseline of a page, left to right. */
interface Line {
  page: number;
  y: number;
  items: PdfTextItem[];
}

function linesOf(items: readonly PdfTextItem[]): Line[] {
  const lines: Line[] = [];
  for (const item of [...items].sort((a, b) => a.page - b.page || b.y - a.y)) {
    const last = lines.at(-1);
    if (last !== undefined && last.page === item.page && last.y - item.y <= SAME_LINE) last.items.push(item);
    else lines.push({ page: item.page, y: item.y, items: [item] });
  }
  for (const line of lines) line.items.sort((a, b) => a.x - b.x);
  return lines;
}

/** An item's words with runs of whitespace as one space (a double space splits a line into two items). */
const words = (item: PdfTextItem): string => item.text.replace(/\s+/g, " ").trim();
const wordsOf = (items: readonly PdfTextItem[]): string =>
  items
    .map(words)
    .filter((w) => w !== "")
    .join(" ");
const near = (a: number, b: number): boolean => Math.abs(a - b) <= SAME_X;

/**
 * The lines of a wrapped text as one: a line break is a space, except after a hyphen or slash that ends a word
 * ("long-" + "distance"), where the layout breaks lines too. A word too long for its column, which the layout
 * breaks anywhere, reads with a space where it was broken: the positions of the words cannot tell.
 */
function joinLines(lines: readonly string[]): string {
  return lines.reduce(
    (text, line) => (text === "" ? line : /\S[-/]$/.test(text) ? text + line : `${text} ${line}`),
    "",
  );
}

/** Text as read, or null when it is empty or lost characters to the font. */
function readable(text: string): string | null {
  return text === "" || text.includes(REPLACEMENT) ? null : text;
}

export function readAgreementTerms(items: readonly PdfTextItem[]): AgreementReading | null {
  const lines = linesOf(items);
  const find = (from: number, test: (item: PdfTextItem) => boolean): { at: number; item: PdfTextItem } | null => {
    for (let at = Math.max(from, 0); at < lines.length; at++) {
      const item = lines[at]?.items.find(test);
      if (item !== undefined) return { at, item };
    }
    return null;
  };
  const title = find(0, (item) => words(item) === AGREEMENT_TITLE);
  const keyTerms = title && find(title.at + 1, (item) => words(item) === AGREEMENT_HEADINGS.keyTerms.toUpperCase());
  if (title === null || keyTerms === null) return null;
  // Section headings stand at the left margin, where the key terms' heading does.
  const heading = (text: string) => (item: PdfTextItem) =>
    words(item) === text.toUpperCase() && near(item.x, keyTerms.item.x);
  const keyTermsEnd =
    find(keyTerms.at + 1, heading(AGREEMENT_HEADINGS.pricing))?.at ??
    find(keyTerms.at + 1, heading(AGREEMENT_HEADINGS.terms))?.at ??
    lines.length;

  const values = readKeyValues(lines.slice(keyTerms.at + 1, keyTermsEnd));
  const code = joinLines(values.get(KEY_TERM_LABELS.currency) ?? []);
  const currency = /^[A-Z]{3}$/.test(code) ? code : null;
  const term = readAgreementTerm(joinLines(values.get(KEY_TERM_LABELS.term) ?? []));
  return {
    customer_name: readCustomerName(lines.slice(title.at + 1, keyTerms.at), keyTerms.item.x),
    contract_id: readContractId(values.get(KEY_TERM_LABELS.contractId) ?? [], items),
    start_date: term?.start_date ?? null,
    end_date: term?.end_date ?? null,
    currency,
    rules: readPricingTable(lines.slice(keyTermsEnd), currency),
  };
}

/**
 * The customer's name: in the customer's box, the lines under its label and above its role. The box ends where
 * the text below it starts, at the left margin.
 */
function readCustomerName(lines: readonly Line[], margin: number): string | null {
  const { label, role } = AGREEMENT_PARTIES.customer;
  const isLabel = (item: PdfTextItem): boolean => words(item) === label.toUpperCase();
  const at = lines.findIndex((line) => line.items.some(isLabel));
  const x = lines[at]?.items.find(isLabel)?.x;
  if (x === undefined) return null;
  const below = lines.slice(at + 1);
  const end = below.findIndex((line) => line.items.some((item) => near(item.x, margin)));
  const box = below
    .slice(0, end < 0 ? undefined : end)
    .map((line) => wordsOf(line.items.filter((item) => item.x >= x - SAME_X)))
    .filter((text) => text !== "");
  for (let k = box.length - 1; k > 0; k--) {
    if (joinLines(box.slice(k)) !== role) continue;
    const name = joinLines(box.slice(0, k));
    // A blank name is printed as the party's label: that is no name to read.
    return name === label ? null : readable(name);
  }
  return null;
}

/**
 * Key terms: each label's value, as the lines it wraps over. A value starts right of its label and runs down
 * its column until the next row of labels.
 */
function readKeyValues(lines: readonly Line[]): Map<string, string[]> {
  const labels = new Set<string>(Object.values(KEY_TERM_LABELS));
  const isLabel = (item: PdfTextItem): boolean => labels.has(words(item));
  const values = new Map<string, string[]>();
  lines.forEach((line, at) => {
    line.items.forEach((label, k) => {
      const first = line.items[k + 1];
      if (!isLabel(label) || first === undefined || isLabel(first) || values.has(words(label))) return;
      const end = line.items.slice(k + 1).find(isLabel)?.x ?? Infinity;
      const next = lines.findIndex((later, i) => i > at && later.items.some(isLabel));
      const value = lines
        .slice(at, next < 0 ? undefined : next)
        .map((row) => wordsOf(row.items.filter((item) => item.x >= first.x - SAME_X && item.x < end - SAME_X)));
      values.set(
        words(label),
        value.filter((text) => text !== ""),
      );
    });
  });
  return values;
}

/**
 * The contract ID as the key terms print it. One that wraps may have been broken inside a word, so it is read
 * from the footer's reference instead ("CN-000001 · acme-corp-test", never wrapped), when the two agree.
 */
function readContractId(lines: readonly string[], items: readonly PdfTextItem[]): string | null {
  if (lines.length <= 1) return readable(lines[0] ?? "");
  const squeezed = lines.join("").replace(/\s+/g, "");
  for (const item of items) {
    const at = item.text.indexOf(" · ");
    const id = at < 0 ? "" : item.text.slice(at + 3).trim();
    if (id.replace(/\s+/g, "") === squeezed) return readable(id);
  }
  return null;
}

/** A row's cells, each as the lines it wraps over. */
type Cells = Record<RuleColumn["field"], string[]>;
const noCells = (): Cells => ({ name: [], type: [], metric: [], price: [], monthly_cap: [], counterparty: [] });

/**
 * The pricing table's rows, on every page it spans. A header row fixes the columns on its page; the rows
 * under it end at the first line reaching left of the table (a heading, the footer). Each rule's row starts
 * on the line its Type cell is on (a type is one short word, never wrapped); the lines down to the next row
 * belong to it.
 */
function readPricingTable(lines: readonly Line[], currency: string | null): ReadRule[] {
  const headers = RULE_COLUMNS.map((column) => column.header);
  const typeColumn = RULE_COLUMNS.findIndex((column) => column.field === "type");
  const rows: Cells[] = [];
  let columns: number[] | null = null;
  let page = 0;
  for (const line of lines) {
    if (line.items.length === headers.length && line.items.every((item, k) => words(item) === headers[k])) {
      [columns, page] = [line.items.map((item) => item.x), line.page];
      continue;
    }
    const left = columns?.[0];
    if (columns === null || left === undefined) continue;
    if (line.page !== page || line.items.some((item) => item.x < left - SAME_X)) {
      columns = null;
      continue;
    }
    const cells = RULE_COLUMNS.map(() => [] as string[]);
    for (const item of line.items) {
      // A cell's text starts at its column; what starts further right on the line is more of it (a double
      // space splits a line). The sample watermark, drawn across the page, is no cell's.
      if (words(item) === AGREEMENT_WATERMARK && !columns.some((x) => near(x, item.x))) continue;
      const k = columns.filter((x) => x <= item.x + SAME_X).length - 1;
      cells[k]?.push(words(item));
    }
    if ((cells[typeColumn] ?? []).length > 0) rows.push(noCells());
    const row = rows.at(-1);
    RULE_COLUMNS.forEach((column, k) => {
      const text = (cells[k] ?? []).join(" ");
      if (row !== undefined && text !== "") row[column.field].push(text);
    });
  }
  return rows.flatMap((row) => readRule(row, currency) ?? []);
}

/** A row of the pricing table as a rule; undefined when a cell does not read as what that column prints. */
function readRule(cells: Cells, currency: string | null): ReadRule | undefined {
  const name = readable(joinLines(cells.name));
  const type = readRuleType(joinLines(cells.type));
  const priceText = joinLines(cells.price);
  const price = readRulePriceWords(priceText);
  // Metrics have no spaces (contract-schemas.ts): a metric's lines are pieces of one word.
  const metric = optional(cells.metric.join(""));
  const capText = joinLines(cells.monthly_cap);
  const cap = optional(capText, readMoneyWords);
  const counterparty = optional(joinLines(cells.counterparty));
  if (name === null || type === undefined || price === undefined) return undefined;
  if (metric === null || cap === null || counterparty === null) return undefined;
  // A usage rule's flat price is per unit; any other rule's is an amount.
  if (price.model === "flat" && price.perUnit !== (type === "usage")) return undefined;
  const rule: ReadRule = {
    name,
    type,
    model: price.model,
    ...(price.model === "flat" ? { amount: price.amount } : { rate: price.rate }),
    ...(metric !== undefined && { metric }),
    ...(cap !== undefined && { monthly_cap: cap }),
    ...(counterparty !== undefined && { counterparty }),
  };
  // Written again in the contract's currency, the rule must print as it reads: the symbol is the currency's.
  const same = (a: string, b: string): boolean => a.replace(/\s+/g, "") === b.replace(/\s+/g, "");
  if (currency !== null && !same(rulePriceWords(rule, currency), priceText)) return undefined;
  if (currency !== null && cap !== undefined && !same(moneyWords(cap, currency), capText)) return undefined;
  return rule;
}

/** An optional cell: undefined when it shows no value, null when it does not read. */
function optional(
  text: string,
  read: (text: string) => string | null | undefined = readable,
): string | null | undefined {
  return text === NO_VALUE || text === "" ? undefined : (read(text) ?? null);
}
