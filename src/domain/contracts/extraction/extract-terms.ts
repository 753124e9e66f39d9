// Reads an agreement in any layout (docs/api.md, "Reading an agreement"): from the runs of text on its pages,
// the terms it proposes, each with the page and text it came from. Pure: the same runs always read the same.
// Every value comes from words on a page: what no sentence, label or table row states is left out, never
// guessed. Confidence is how sure the reading is: 0.95 for a labelled value or a table row, less for looser
// wording, times the OCR engine's confidence for scanned pages.
import { addPricingRuleInput } from "../contract-schemas.js";
import { MAX_PROGRAM_RULES } from "../pricing-rule.js";
import { normalizeRule } from "../pricing-rule.js";
import type {
  ExtractedField,
  ExtractedRule,
  ExtractedTerms,
  ExtractedValue,
  ExtractionItem,
  ExtractionWarning,
} from "./extraction-types.js";
import { capitalised, NOT_PRICES, type PriceReading, priceFields, readPrices, readTiers } from "./price-reading.js";
import {
  type Block,
  type Cell,
  flowsOf,
  type Layout,
  type Line,
  layoutOf,
  sentenceAt,
  sourceOf,
} from "./text-layout.js";
import {
  COUNT_RE,
  currencyNamed,
  findDates,
  findEmails,
  findMoney,
  isCurrencyCode,
  metricIdOf,
  readCount,
  termEndAfterMonths,
} from "./value-readers.js";

export interface ExtractionContext {
  /** The seller's names (the account's legal name and its name): the customer is the other party. */
  sellerNames: readonly string[];
}

export interface TermsReading {
  terms: ExtractedTerms;
  fields: ExtractedField[];
  warnings: ExtractionWarning[];
}

/** Where a value was read: the page, the exact text, and the OCR confidence of that text (1 for a text layer). */
interface Source {
  page: number;
  source_text: string;
  confidence: number;
}

const lineSource = (...lines: Line[]): Source => ({
  page: lines[0]!.page,
  source_text: lines.map((line) => line.text).join(" "),
  confidence: Math.min(...lines.map((line) => line.confidence)),
});

/** A found value, its source and how sure the wording makes it (before OCR's confidence). */
interface Found<T> {
  value: T;
  source: Source;
  strength: number;
}

const confidenceOf = (found: Found<unknown>): number =>
  Math.round(found.strength * Math.min(1, found.source.confidence) * 100) / 100;

// ---------------------------------------------------------------------------------------------------------------
// Labels: "Label: value" on a line, a label cell and the cell beside it, or a label above its value.

/** A value written under or beside a label, with the lines it stands on. */
interface Labelled {
  value: string;
  lines: Line[];
  /** The value's cell, when the value stands in a cell of its own (a box's first line): what is below it. */
  cell?: { line: number; x: number };
}

function labelledValues(layout: Layout, label: RegExp): Labelled[] {
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

/** The lines under a box's first line, in its column, until a gap or a label: an address's further lines. */
function linesBelow(layout: Layout, start: { line: number; x: number }, max = 4): Array<{ text: string; line: Line }> {
  const out: Array<{ text: string; line: Line }> = [];
  let previous = layout.lines[start.line]!;
  for (let at = start.line + 1; at < layout.lines.length && out.length < max; at++) {
    const line = layout.lines[at]!;
    if (line.page !== previous.page || previous.y - line.y > 2 * previous.size) break;
    const cell = line.cells.find((c) => Math.abs(c.x - start.x) <= 8);
    if (cell === undefined) break;
    out.push({ text: cell.text, line });
    previous = line;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Parties

const LEGAL_SUFFIX = String.raw`(?:Inc\.?|Incorporated|L\.?L\.?C\.?|Ltd\.?|Limited|GmbH|AG|S\.A\.S\.?|S\.A\.|SA|SAS|SARL|S\.à r\.l\.|B\.V\.|BV|N\.V\.|NV|Pty\.? Ltd\.?|P\.?L\.?C\.?|plc|Corp\.?|Corporation|LLP|L\.P\.|LP|Co\.|Oy|AB|ApS|A/S|S\.p\.A\.|S\.r\.l\.|K\.K\.|Pte\.? Ltd\.?|ULC|Group|Holdings)`;
const NAME_WITH_SUFFIX = new RegExp(
  String.raw`^((?:[A-Z0-9&][\p{L}0-9&'’.-]*,?\s+){0,7}?${LEGAL_SUFFIX})(?=$|[\s,;()])`,
  "u",
);

const ADDRESS_WORDS =
  /\b(?:Avenue|Ave|Street|St|Road|Rd|Suite|Floor|Building|Square|Boulevard|Blvd|Lane|Drive|Way|Plaza|Park|Box|Agreement|Schedule|Order Form)\b/i;
const CUSTOMER_ROLES = /^(?:Customer|Client|Buyer|Purchaser|Licensee|Subscriber|Merchant)$/i;
/** Defined terms that are not a party's name (the Agreement, the Effective Date …): not parties at all. */
const NOT_PARTIES =
  /^(?:Agreement|Effective Date|Services?|Fees|Order Form|Term|Schedule|Party|Parties|Confidential Information|Territory|Platform|Data|Documentation)$/i;
const SELLER_ROLES = /^(?:Provider|Service Provider|Supplier|Vendor|Seller|Licensor|Processor)$/i;

/** A party's name from the words that start with it: up to its legal suffix, or to the first comma or bracket. */
function partyName(text: string): { name: string; strength: number } | undefined {
  const t = text
    .replace(/^(?:\(\d+\)|\d+\.|[a-z]\))\s*/, "")
    .replace(/^(?:by and between|between|and|by)\s+/i, "")
    .replace(/^the\s+(?=[A-Z])/, "")
    .trim();
  const suffixed = NAME_WITH_SUFFIX.exec(t);
  if (suffixed) {
    // "Oakridge Dental Group Inc.": a second suffix after the first belongs to the name.
    const more =
      /^,?\s+(?:Inc\.?|Ltd\.?|LLC|L\.L\.C\.|Limited|Corp\.?|Corporation|plc|PLC|GmbH|AG|S\.A\.|SA|B\.V\.|N\.V\.|Pty\.? Ltd\.?|LLP)(?=$|[\s,;()])/.exec(
        t.slice(suffixed[1]!.length),
      );
    return { name: `${suffixed[1]!}${more?.[0] ?? ""}`.trim(), strength: 0.95 };
  }
  const plain =
    /^([A-Z][\p{L}0-9&'’.-]*(?:\s+(?:[A-Z0-9&][\p{L}0-9&'’.-]*|of|and|de|la|&)){0,5})(?=$|\s*[,;(]|\s+(?:a|an|with|having|whose|located|of)\s)/u.exec(
      t,
    );
  const name = plain?.[1]?.replace(/[.,]$/, "").trim();
  // No legal suffix: a name only if it does not read as part of an address or a heading.
  if (name !== undefined && name.length >= 3 && !ADDRESS_WORDS.test(name) && name !== name.toUpperCase())
    return { name, strength: 0.8 };
  return undefined;
}

const nameKey = (name: string): string[] =>
  name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(
      /\b(?:inc|incorporated|llc|ltd|limited|gmbh|ag|sa|sas|sarl|bv|nv|pty|plc|corp|corporation|llp|lp|co|company|oy|ab|aps|spa|srl|kk|pte|ulc|the)\b/g,
      " ",
    )
    .replace(/[^a-z0-9]+/g, " ")
    .trim()
    .split(" ")
    .filter((w) => w !== "");

/** Whether a name is the seller's: the same words, once legal suffixes and punctuation are set aside. */
function isSeller(name: string, sellers: readonly string[]): boolean {
  const key = nameKey(name).join(" ");
  if (key === "") return false;
  return sellers.some((seller) => {
    const s = nameKey(seller).join(" ");
    return s !== "" && (s === key || (s.length >= 6 && (key.startsWith(`${s} `) || s.startsWith(`${key} `))));
  });
}

/** An address in a party's description: after "at", "located at", "principal place of business at" … */
function addressIn(text: string): string | undefined {
  const m =
    /(?:place of business|principal office|registered (?:office|address)|offices?|address|located|domiciled|headquartered)(?:\s+(?:is|are))?\s*(?:at|in|:|(?=\s+\d))\s+(.+)/i.exec(
      text,
    ) ??
    /^\s*,\s*(?!(?:a|an|the|with|having|whose|located|registered|incorporated|acting|represented)\b)([\p{Lu}0-9][^()]*\d[^()]*)$/u.exec(
      text,
    );
  if (m === null) return undefined;
  const address = m[1]!
    .split(
      /\s*(?:\(|;|\s+and\s+its\b|,\s+(?:and|hereinafter|acting|represented|registered|company number|with company|(?:billing\s+|invoice\s+)?e-?mail|tel|telephone|phone|fax|attn|attention|vat|tax)\b|,?\s+[\w.+-]+@)/i,
    )[0]!
    .replace(/[,.\s]+$/, "")
    .trim();
  return /\d/.test(address) && address.length >= 8 && address.length <= 250 ? address : undefined;
}

interface Party {
  name: Found<string>;
  role: "customer" | "seller" | undefined;
  address?: Found<string>;
  block?: Block;
}

/** Where the sentence holding a party's defined term starts: after a full stop that ends no abbreviation. */
function partySentenceStart(text: string, at: number): number {
  let start = 0;
  for (const m of text.slice(0, at).matchAll(/[.;:](?=\s+[A-Z])/g)) {
    const before = text.slice(Math.max(0, (m.index ?? 0) - 6), (m.index ?? 0) + 1);
    if (/\b(?:Inc|Ltd|Co|Corp|Pty|N\.A|S\.A|L\.L\.C|No|St|Ave|Jr|Sr|Mr|Ms|Dr)\.$/.test(before)) continue;
    start = (m.index ?? 0) + 1;
  }
  return start;
}

const DEFINED_TERM =
  /\((?:the\s+|each\s+a\s+|hereinafter(?:\s+referred\s+to\s+as)?\s+|herein\s+)?(?:the\s+)?["“”'‘’]{1,2}([A-Z][A-Za-z ]{2,24})["“”'‘’]{1,2}\)/g;

/** Parties named in running text, each with the role its defined term gives it ("Customer", "Provider"). */
function partiesInProse(layout: Layout): Party[] {
  const parties: Party[] = [];
  for (const block of flowsOf(layout)) {
    let from = 0;
    const between = /\b(?:by and )?between\b/i.exec(block.text);
    if (between) from = between.index;
    for (const m of block.text.matchAll(DEFINED_TERM)) {
      const term = m[1]!.trim();
      const role = CUSTOMER_ROLES.test(term) ? "customer" : SELLER_ROLES.test(term) ? "seller" : undefined;
      if (role === undefined && NOT_PARTIES.test(term)) continue;
      // A party's words start after the previous party's defined term, "between", or the sentence's start.
      const start = Math.max(from, partySentenceStart(block.text, m.index ?? 0));
      const text = block.text.slice(start, m.index).replace(/^[\s,;]*(?:and\s+)?/, "");
      from = (m.index ?? 0) + m[0].length;
      const named = partyName(text);
      if (named === undefined) continue;
      const source = sourceOf(block, start, m.index ?? start);
      const party: Party = { name: { value: named.name, source, strength: named.strength }, role, block };
      const address = addressIn(text.slice(named.name.length));
      if (address !== undefined) party.address = { value: address, source, strength: 0.85 };
      else {
        // "… ("Customer"), with its principal place of business at …": the address after the defined term.
        const after = block.text.slice(from);
        const next = after.search(/\(["“'‘]|\band\s+[A-Z]|\.\s+[A-Z0-9]|\.$/);
        const tail = after.slice(0, next < 0 ? undefined : next);
        const later = /^\s*,?\s*(?:a|an|with|having|whose|located|of)\b/i.test(tail) ? addressIn(tail) : undefined;
        if (later !== undefined)
          party.address = { value: later, source: sourceOf(block, start, from + tail.length), strength: 0.8 };
      }
      parties.push(party);
    }
  }
  if (parties.length > 0) return parties;
  // No defined terms: "between A and B".
  for (const block of layout.blocks) {
    const m = /\bbetween\s+(.+?)\s+and\s+(?=[A-Z])(.+?)(?:\.\s|\.$|;|$)/.exec(block.text);
    if (m === null) continue;
    for (const [text, at] of [
      [m[1]!, m.index + m[0].indexOf(m[1]!)],
      [m[2]!, m.index + m[0].lastIndexOf(m[2]!)],
    ] as const) {
      const named = partyName(text);
      if (named === undefined) continue;
      const source = sourceOf(block, at, at + text.length);
      const party: Party = {
        name: { value: named.name, source, strength: named.strength - 0.05 },
        role: undefined,
        block,
      };
      const address = addressIn(text.slice(named.name.length));
      if (address !== undefined) party.address = { value: address, source, strength: 0.8 };
      parties.push(party);
    }
    if (parties.length > 0) break;
  }
  return parties;
}

const CUSTOMER_LABEL =
  /^(?:the\s+)?(?:customer|client|buyer|purchaser|licensee|subscriber|merchant|bill to|billed to|sold to)(?:\s+(?:name|legal name|entity|details|information|company))?$/i;
const SELLER_LABEL =
  /^(?:the\s+)?(?:provider|service provider|supplier|vendor|seller|licensor)(?:\s+(?:name|legal name|entity|details|information))?$/i;

/** Parties under labels: "Customer: Acme Inc.", a "CUSTOMER" box with the name under it. */
function labelledParties(layout: Layout): Party[] {
  const parties: Party[] = [];
  for (const [label, role] of [
    [CUSTOMER_LABEL, "customer"],
    [SELLER_LABEL, "seller"],
  ] as const) {
    for (const found of labelledValues(layout, label)) {
      // A label's whole value is the name when it is only a name: a few words, no address after a comma.
      const whole = found.value.trim();
      const bare = !/[,;:()@]/.test(whole) && whole.split(" ").length <= 6 && !ADDRESS_WORDS.test(whole);
      const named = bare && /^\p{Lu}/u.test(whole) ? { name: whole, strength: 0.9 } : partyName(found.value);
      if (named === undefined) continue;
      const party: Party = {
        name: { value: named.name, source: lineSource(...found.lines), strength: named.strength },
        role,
      };
      const rest = found.value.slice(found.value.indexOf(named.name) + named.name.length).replace(/^[\s,]+/, "");
      const inline =
        addressIn(found.value.slice(found.value.indexOf(named.name) + named.name.length)) ??
        (/\d/.test(rest) && rest.length >= 8 ? rest : undefined);
      if (inline !== undefined) party.address = { value: inline, source: lineSource(...found.lines), strength: 0.85 };
      else if (found.cell !== undefined) {
        // A box: the address is the lines under the name, up to an email, a phone or a label.
        const below = linesBelow(layout, found.cell).filter((_, k, all) => k < all.length);
        const lines: Array<{ text: string; line: Line }> = [];
        for (const entry of below) {
          if (
            /@|^(?:tel|phone|fax|attn|attention|email|e-mail|contact|vat|tax|reg)/i.test(entry.text) ||
            /:\s/.test(entry.text)
          )
            break;
          lines.push(entry);
        }
        const text = lines.map((l) => l.text.replace(/,$/, "")).join(", ");
        if (lines.length > 0 && /\d/.test(text))
          party.address = { value: text, source: lineSource(...lines.map((l) => l.line)), strength: 0.85 };
      }
      if (party.address === undefined) {
        const address = labelledAddress(layout, found.lines[0]!);
        if (address !== undefined) party.address = address;
      }
      parties.push(party);
    }
  }
  return parties;
}

const ADDRESS_LABEL =
  /^(?:address|billing address|registered address|registered office|principal office|business address|head office|postal address|mailing address)$/i;
const PARTY_LABEL = (text: string) => CUSTOMER_LABEL.test(text) || SELLER_LABEL.test(text);

/** The "Address:" line of a party's labelled block: after its name's line, before the next party's label. */
function labelledAddress(layout: Layout, nameLine: Line): Found<string> | undefined {
  const at = layout.lines.indexOf(nameLine);
  for (const found of labelledValues(layout, ADDRESS_LABEL)) {
    const k = layout.lines.indexOf(found.lines[0]!);
    if (k <= at || k > at + 6) continue;
    const between = layout.lines.slice(at + 1, k);
    if (between.some((line) => line.cells.some((cell) => PARTY_LABEL(cell.text.split(":")[0]!.trim())))) continue;
    if (!/\d/.test(found.value)) continue;
    return { value: found.value.replace(/[,.\s]+$/, ""), source: lineSource(...found.lines), strength: 0.9 };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------

/** Every block whose text matches, with the match: a sentence-level search over the running text. */
function* matches(layout: Layout, pattern: RegExp): Generator<{ block: Block; m: RegExpExecArray }> {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  for (const block of layout.blocks) {
    for (const m of block.text.matchAll(global)) yield { block, m: m as RegExpExecArray };
  }
}

const fromMatch = (block: Block, m: RegExpExecArray): Source =>
  sourceOf(block, m.index ?? 0, (m.index ?? 0) + m[0].length);

// ---------------------------------------------------------------------------------------------------------------
// Currency and dates

const DAY_FIRST_PLACES =
  /\b(?:United Kingdom|England|Scotland|Wales|UK|Ireland|Germany|France|Netherlands|Belgium|Spain|Italy|Austria|Switzerland|Sweden|Denmark|Norway|Finland|Portugal|Poland|Australia|New Zealand|India|Singapore|South Africa|EU|European)\b/;

function findCurrency(layout: Layout): Found<string> | undefined {
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

// ---------------------------------------------------------------------------------------------------------------

class Findings {
  readonly fields: ExtractedField[] = [];
  readonly warnings: ExtractionWarning[] = [];

  add(field: string, found: Found<ExtractedValue>): void {
    this.fields.push({
      field,
      value: found.value,
      confidence: confidenceOf(found),
      page: found.source.page,
      source_text: found.source.source_text,
    });
  }
}

export function extractTerms(items: readonly ExtractionItem[], context: ExtractionContext): TermsReading {
  const layout = layoutOf(items);
  const findings = new Findings();
  const terms: ExtractedTerms = {};
  if (layout.lines.length === 0) return { terms, fields: [], warnings: [] };

  // --- Currency, and the order numeric dates are read in.
  const currency = findCurrency(layout);
  const allText = layout.blocks.map((b) => b.text).join("\n");
  const dayFirst =
    currency !== undefined &&
    ["GBP", "EUR", "AUD", "NZD", "CHF", "INR", "SGD", "ZAR", "SEK", "DKK", "NOK", "PLN"].includes(currency.value)
      ? true
      : currency?.value === "USD"
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

  // --- Parties
  const parties = [...labelledParties(layout), ...partiesInProse(layout)];
  const sellers = [...context.sellerNames, ...parties.filter((p) => p.role === "seller").map((p) => p.name.value)];
  const customer =
    parties.find((p) => p.role === "customer" && !isSeller(p.name.value, context.sellerNames)) ??
    (context.sellerNames.length > 0
      ? parties.find((p) => p.role === undefined && !isSeller(p.name.value, sellers))
      : undefined);
  if (customer !== undefined) {
    const withAddress =
      customer.address ??
      parties.find((p) => p !== customer && p.name.value === customer.name.value && p.address)?.address;
    terms.customer = { name: customer.name.value };
    findings.add("customer.name", customer.name);
    if (withAddress !== undefined) {
      terms.customer.address = withAddress.value;
      findings.add("customer.address", withAddress);
    }
    const email = customerEmail(layout, customer.name.value, sellers);
    if (email !== undefined) {
      terms.customer.email = email.value;
      findings.add("customer.email", email);
    }
  }

  // --- Contract number
  const number = contractNumber(layout);
  if (number !== undefined) {
    terms.contract_id = number.value;
    findings.add("contract_id", number);
  }

  // --- Dates
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
  if (start !== undefined) {
    terms.start_date = start.value;
    findings.add("start_date", start);
  }
  if (end !== undefined && (end.value === null || start === undefined || end.value >= start.value)) {
    terms.end_date = end.value;
    findings.add("end_date", end);
  }
  if (ambiguousDate !== undefined) {
    findings.warnings.push({
      code: "date_order",
      message: `Dates written in numbers only were read ${
        order === "day_first"
          ? `day first (05/01/2026 as 5 January 2026), as ${shownBy ?? "the document is British or European"}`
          : `month first (05/01/2026 as May 1, 2026), as ${shownBy ?? "the document is American"}`
      }: check the start and end dates against page ${ambiguousDate.page}.`,
      pages: [ambiguousDate.page],
    });
  }

  if (currency !== undefined) {
    terms.currency = currency.value;
    findings.add("currency", currency);
  }

  // --- Payment terms
  const paymentTerms = findPaymentTerms(layout);
  if (paymentTerms !== undefined) {
    terms.payment_terms_days = paymentTerms.value;
    findings.add("payment_terms_days", paymentTerms);
  }

  // --- Prices
  const rules: Array<{ rule: ExtractedRule; found: Record<string, Found<ExtractedValue>> }> = [];
  const minimum = findFee(layout, "minimum");
  if (minimum !== undefined) rules.push(minimum);
  const subscription = findFee(layout, "subscription");
  if (subscription !== undefined) rules.push(subscription);
  const tableRows = new Set<Line>();
  for (const usage of [...tablePrices(layout, tableRows), ...prosePrices(layout, tableRows)]) {
    if (usage.rule.type !== "usage") {
      if (!rules.some((r) => r.rule.type === usage.rule.type)) rules.push(usage);
      continue;
    }
    const metric = usage.rule.metric;
    if (metric === undefined || metric === "" || rules.some((r) => r.rule.metric === metric)) continue;
    rules.push(usage);
  }
  // A rule is proposed only as one the upload would take: its fields through the rule's own schema and checks.
  const valid = rules
    .filter(
      (r) =>
        addPricingRuleInput.safeParse(r.rule).success &&
        normalizeRule(r.rule, terms.currency ?? "USD").errors === undefined,
    )
    .slice(0, MAX_PROGRAM_RULES);
  if (valid.length > 0) {
    terms.rules = valid.map((r) => r.rule);
    valid.forEach((r, k) => {
      for (const [key, found] of Object.entries(r.found)) findings.add(`rules.${k}.${key}`, found);
    });
  }
  if (findings.fields.length === 0) {
    findings.warnings.push({
      code: "nothing_found",
      message: "The document was read, but none of the terms it looks for were found in it: type them in.",
    });
  }
  return { terms, fields: findings.fields, warnings: findings.warnings };
}

// ---------------------------------------------------------------------------------------------------------------

function customerEmail(layout: Layout, customer: string, sellers: readonly string[]): Found<string> | undefined {
  const tokens = (names: readonly string[]) => names.flatMap((n) => nameKey(n)).filter((w) => w.length >= 4);
  const customerTokens = tokens([customer]);
  const sellerTokens = tokens(sellers);
  const domainOf = (email: string) => (email.split("@")[1] ?? "").toLowerCase().replace(/[^a-z0-9]/g, "");
  let best: { score: number; found: Found<string> } | undefined;
  layout.blocks.forEach((block) => {
    for (const { email, index } of findEmails(block.text)) {
      const domain = domainOf(email);
      if (sellerTokens.some((t) => domain.includes(t))) continue;
      const around = sentenceAt(block.text, index).text;
      let score = 0;
      if (customerTokens.some((t) => domain.includes(t))) score += 2;
      if (/\b(?:billing|invoices?|accounts payable|AP|remittance|finance)\b/i.test(around)) score += 1;
      if (
        /\b(?:Customer|Client|Buyer|Licensee|Subscriber|Merchant)\b/.test(around) ||
        customerTokens.some((t) => around.toLowerCase().includes(t))
      )
        score += 1;
      if (sellers.some((s) => around.includes(s)) || /\b(?:Provider|Supplier|Vendor|Seller|Licensor)\b/.test(around))
        score -= 1;
      if (score <= 0) continue;
      if (best === undefined || score > best.score) {
        best = {
          score,
          found: {
            value: email,
            source: sourceOf(block, index, index + email.length),
            strength: score >= 3 ? 0.95 : 0.85,
          },
        };
      }
    }
  });
  return best?.found;
}

const NUMBER_TOKEN = String.raw`([A-Z0-9][A-Za-z0-9]*(?:[-/_.][A-Za-z0-9]+)*)`;

function contractNumber(layout: Layout): Found<string> | undefined {
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

function findPaymentTerms(layout: Layout): Found<number> | undefined {
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

interface RuleFinding {
  rule: ExtractedRule;
  found: Record<string, Found<ExtractedValue>>;
}

const FEE_LABELS = {
  minimum:
    /^(?:monthly minimum(?:\s+(?:commitment|fee|charge|spend|amount))?|minimum monthly(?:\s+(?:commitment|fee|charge|spend|amount))?|minimum(?:\s+(?:commitment|fee|charge|spend|amount))?(?:\s+per month)?|minimum commitment \(monthly\))$/i,
  subscription:
    /^(?:monthly\s+)?(?:platform|subscription|access|base|license|licence|service|support|account|maintenance|monthly)(?:\s+access)?\s+fee(?:\s*\(monthly\)|\s+per month)?$|^monthly (?:subscription|fee)$/i,
} as const;
const FEE_PROSE = {
  minimum:
    /\b(?:minimum monthly (?:commitment|fee|charge|spend|amount)|monthly minimum(?: (?:commitment|fee|charge|spend|amount))?|minimum (?:commitment|spend|fee|charge|amount)|minimum of)\b/i,
  subscription:
    /\b((?:monthly )?(?:platform|subscription|access|base|license|licence|support|maintenance|account)(?: access)? fee|monthly (?:access|service|platform|subscription) fee|monthly fee)\b/i,
} as const;
const MONTHLY = /\b(?:per|a|each|every)\s+(?:calendar\s+)?month\b|\bmonthly\b|\/\s*(?:mo|month)\b|\bper mensem\b/i;

/** A monthly minimum or a monthly fee: under its label, or in a sentence that says it is monthly. */
function findFee(layout: Layout, kind: "minimum" | "subscription"): RuleFinding | undefined {
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

// ---------------------------------------------------------------------------------------------------------------
// Usage prices in tables

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

function tablePrices(layout: Layout, rowsUsed: Set<Line>): RuleFinding[] {
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

// ---------------------------------------------------------------------------------------------------------------
// Usage prices in sentences

function prosePrices(layout: Layout, tableRows: ReadonlySet<Line>): RuleFinding[] {
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
