// Usage prices as agreements write them, in a table's cell or in a sentence: "$0.28 per ACH debit",
// "2.35% of card volume, capped at $4,000 per month", "2.9% + $0.30 per transaction", "$18.00 per
// international wire to HSBC UK". Each reading keeps where in the text it stands, so its source can be shown.
import type { ExtractedRule } from "./extraction-types.js";
import { sentenceAt } from "./text-layout.js";
import { findMoney, findPercents, type MoneyMatch, type PercentMatch } from "./value-readers.js";

/** A price read from text: the rule's pricing fields, the priced thing's name when written, and where. */
export interface PriceReading {
  model: "flat" | "percentage";
  amount?: string;
  rate?: string;
  fixed_fee?: string;
  min_fee?: string;
  max_fee?: string;
  monthly_cap?: string;
  counterparty?: string;
  /** The noun phrase priced ("ACH debit"), when the text names it. */
  unit?: string;
  /** The currencies the amounts were written in (codes), to check against the contract's. */
  currencies: string[];
  index: number;
  end: number;
}

/** Periods: a price per month is a fee, not a usage price. */
const PERIODS = /^(?:[mn]onth|calendar month|year|annum|quarter|week|day|hour|billing period|period|invoice)s?\b/i;

/** Words that end a priced noun phrase: what follows is about it, not part of its name. */
const PHRASE_STOP = new Set(
  (
    "to with via through from capped subject up and plus in on at for where which that including excluding per " +
    "billed charged payable under over above below exceeding within during thereafter is are was will shall " +
    "or as by after before each every if when than more less not"
  ).split(" "),
);
const LEADING = /^(?:the|each|every|a|an|all|any|one|such)\s+/i;
const TRAILING =
  /\s+(?:processed|initiated|originated|submitted|sent|received|completed|executed|settled|made|issued|performed|handled|delivered|routed|transmitted|used|consumed|requested|created|verified|run)$/i;

/** Sentences (and labels) about other money than usage prices: interest, liability, taxes, one-time fees. */
export const NOT_PRICES =
  /\b(?:late|interest|overdue|unpaid|outstanding|liabilit|penalt|discount|increase|tax|taxes|VAT|indemn|insurance|damages|credit note|service credit|escalat|inflation|CPI|security deposit|termination|aggregate|setup|set-up|implementation|onboarding|one[- ]time)/i;

/** The noun phrase at the start of `text`: words up to a stop word or punctuation, at most six. */
function nounPhrase(text: string): string | undefined {
  const words: string[] = [];
  for (const match of text.matchAll(/[^\s,;:.()]+|[,;:.()]/g)) {
    const word = match[0];
    if (/^[,;:.()]$/.test(word) || word === "+") break;
    if (words.length > 0 && PHRASE_STOP.has(word.toLowerCase())) break;
    if (/^[$€£¥\d]/.test(word)) break;
    words.push(word);
    if (words.length >= 7) return undefined;
  }
  let phrase = words.join(" ").replace(LEADING, "");
  while (TRAILING.test(phrase)) phrase = phrase.replace(TRAILING, "");
  phrase = phrase.replace(/[-–—/]+$/, "").trim();
  if (phrase === "" || !/[A-Za-z]/.test(phrase)) return undefined;
  return phrase;
}

/** "ach debit" → "Ach debit"; "ACH debit" stays; the name as written with its first letter capitalised. */
export const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

const CAP_RE =
  /(?:capped at|up to a maximum of|(?:subject to )?a (?:monthly )?(?:cap|maximum) of|not to exceed|not exceeding|maximum of|max\.?|cap of|cap:)\s*$/i;
const MONTHLY_AFTER = /^\s*(?:per|a|each|every|\/|in any|in a|in each)\s*(?:calendar\s+)?month|^\s*monthly/i;
const MIN_FEE_BEFORE = /(?:minimum(?: fee| charge)?(?: of)?|at least|no less than|not less than|min\.?)\s*$/i;
const MAX_FEE_BEFORE = /(?:maximum(?: fee| charge)?(?: of)?|at most|no more than|max\.?)\s*$/i;
const PER_AFTER = /^\s*(?:per|\/|for each|for every|each|an?)\s+/i;

/**
 * The prices written in `text` (a sentence, or a table's cell): each anchored on an amount "per" a thing, or a
 * percentage "of" a thing, with what qualifies it in the same clause: a fixed fee after the percentage, a
 * monthly cap, a minimum or maximum per event, a counterparty after the thing ("to HSBC UK").
 */
export function readPrices(text: string, options: { inCell?: boolean } = {}): PriceReading[] {
  const money = findMoney(text);
  const percents = findPercents(text);
  const used = new Set<MoneyMatch>();
  const readings: PriceReading[] = [];

  // Amounts that qualify another price: caps, minimums and maximums.
  const qualifiers = new Map<MoneyMatch, "cap" | "min" | "max">();
  for (const m of money) {
    const before = text.slice(Math.max(0, m.index - 48), m.index);
    const after = text.slice(m.index + m.length, m.index + m.length + 30);
    if (CAP_RE.test(before) && (MONTHLY_AFTER.test(after) || /monthly/i.test(before))) qualifiers.set(m, "cap");
    else if (MIN_FEE_BEFORE.test(before)) qualifiers.set(m, "min");
    else if (MAX_FEE_BEFORE.test(before)) qualifiers.set(m, "max");
  }

  for (const p of percents) {
    const after = text.slice(p.index + p.length);
    const reading: PriceReading = {
      model: "percentage",
      rate: p.rate,
      currencies: [],
      index: p.index,
      end: p.index + p.length,
    };
    // "2.9% + $0.30": the fixed fee right after the percentage.
    const plus = /^\s*(?:\+|plus)\s*/i.exec(after);
    const fixed = plus ? money.find((m) => m.index === p.index + p.length + plus[0].length) : undefined;
    let rest = after;
    if (fixed !== undefined) {
      reading.fixed_fee = fixed.amount;
      if (fixed.currency) reading.currencies.push(fixed.currency);
      used.add(fixed);
      reading.end = fixed.index + fixed.length;
      rest = text.slice(reading.end);
    }
    const of = /^\s*(?:of|on)\s+(?:the\s+)?/i.exec(rest);
    const per = PER_AFTER.exec(rest);
    if (of) {
      const unit = nounPhrase(rest.slice(of[0].length));
      if (unit !== undefined) reading.unit = unit;
      reading.end += of[0].length + (unit?.length ?? 0);
      // "2.9% of the event's value + $0.30": the fixed fee after what the percentage is of.
      const unitAt = unit === undefined ? -1 : text.indexOf(unit, reading.end - unit.length - 1);
      const afterUnit = unitAt < 0 ? -1 : unitAt + (unit?.length ?? 0);
      const plusLater = afterUnit < 0 ? null : /^\s*(?:\+|plus)\s*/i.exec(text.slice(afterUnit));
      const later = plusLater ? money.find((m) => m.index === afterUnit + plusLater[0].length) : undefined;
      if (reading.fixed_fee === undefined && later !== undefined) {
        reading.fixed_fee = later.amount;
        if (later.currency) reading.currencies.push(later.currency);
        used.add(later);
        reading.end = later.index + later.length;
      }
    } else if (per) {
      const unit = nounPhrase(rest.slice(per[0].length));
      if (unit !== undefined && PERIODS.test(unit)) continue; // "1.5% per month": interest, not a price
      if (unit !== undefined) reading.unit = unit;
    } else if (!options.inCell) continue; // a percentage of nothing named, in a sentence: not a price
    readings.push(reading);
  }

  for (const m of money) {
    if (used.has(m) || qualifiers.has(m)) continue;
    const after = text.slice(m.index + m.length);
    const per = PER_AFTER.exec(after) ?? /^\s*(?:each)\b/i.exec(after);
    const unit = per ? nounPhrase(after.slice(per[0].length)) : undefined;
    // A monthly fee is read elsewhere; in a table's price cell, "per invoice" is a price like any.
    if (unit !== undefined && PERIODS.test(unit) && !(options.inCell && /^invoice/i.test(unit))) continue;
    if (per === null && !options.inCell) continue;
    if (per !== null && unit === undefined && !/^\s*each\b/i.test(after) && !options.inCell) continue;
    readings.push({
      model: "flat",
      amount: m.amount,
      ...(unit !== undefined && { unit }),
      currencies: m.currency ? [m.currency] : [],
      index: m.index,
      end: m.index + m.length + (per?.[0].length ?? 0) + (unit?.length ?? 0),
    });
  }
  readings.sort((a, b) => a.index - b.index);
  // In running text, a price stated in a sentence about interest, liability, taxes … is no usage price.
  if (!options.inCell) {
    const kept = readings.filter((r) => !NOT_PRICES.test(sentenceAt(text, r.index).text));
    readings.length = 0;
    readings.push(...kept);
  }

  // Qualifiers go to the price before them in the text (or the only one).
  for (const [m, kind] of qualifiers) {
    const owner = [...readings].reverse().find((r) => r.index < m.index) ?? readings[0];
    if (owner === undefined) continue;
    if (kind === "cap") owner.monthly_cap ??= m.amount;
    else if (owner.model === "percentage" && kind === "min") owner.min_fee ??= m.amount;
    else if (owner.model === "percentage" && kind === "max") owner.max_fee ??= m.amount;
    if (m.currency) owner.currencies.push(m.currency);
  }

  // A counterparty named right after the priced thing: "per international wire to HSBC UK".
  for (const reading of readings) {
    if (reading.unit === undefined) continue;
    const at = text.indexOf(reading.unit, reading.index);
    if (at < 0) continue;
    const tail = text.slice(at + reading.unit.length);
    const named =
      /^\s+(?:processed\s+|sent\s+|routed\s+|made\s+)?(?:to|with|via|through)\s+(?:the\s+)?((?:[A-Z][A-Za-z0-9&.'’-]*)(?:\s+(?:[A-Z][A-Za-z0-9&.'’-]*|&|of))*)/.exec(
        tail,
      );
    const name = named?.[1] === undefined ? undefined : counterpartyName(named[1]);
    if (name !== undefined && !ROLE_WORDS.test(name)) reading.counterparty = name;
  }
  return readings;
}

/**
 * A counterparty's name up to the end of its sentence: "Citibank N.A.. Customer pays" is "Citibank N.A.";
 * a full stop is kept where it ends an abbreviation (N.A., Inc., Ltd.), dropped where it ends the sentence.
 */
function counterpartyName(text: string): string | undefined {
  const [written = ""] = text.split(/(?<=\.)\s+/);
  // "… to Citibank N.A.." : the abbreviation's full stop, then the sentence's.
  const first = written.replace(/\.\.$/, ".");
  const name = /(?:\b[A-Z]\.[A-Z]\.|\b(?:Inc|Ltd|Co|Corp|Bhd|Pte)\.)$/.test(first)
    ? first
    : first.replace(/[.,]+$/, "");
  return name === "" ? undefined : name;
}

/** Defined terms for the parties themselves: never a counterparty. */
const ROLE_WORDS = /^(?:Customer|Client|Provider|Supplier|Vendor|Company|Merchant|Agreement|Party|Parties)$/;

/** A reading's pricing fields as a rule's (the name, type and metric are the caller's). */
export function priceFields(reading: PriceReading): Omit<ExtractedRule, "name" | "type"> {
  return {
    model: reading.model,
    ...(reading.amount !== undefined && { amount: reading.amount }),
    ...(reading.rate !== undefined && { rate: reading.rate }),
    ...(reading.fixed_fee !== undefined && { fixed_fee: reading.fixed_fee }),
    ...(reading.min_fee !== undefined && { min_fee: reading.min_fee }),
    ...(reading.max_fee !== undefined && { max_fee: reading.max_fee }),
    ...(reading.monthly_cap !== undefined && { monthly_cap: reading.monthly_cap }),
    ...(reading.counterparty !== undefined && { counterparty: reading.counterparty }),
  };
}

/** Graduated or volume tiers written in a sentence or a table's rows, and the thing they price. */
export interface TierReading {
  model: "graduated" | "volume";
  tiers: Array<{ up_to: string | null; unit_amount: string }>;
  unit?: string;
  index: number;
  end: number;
}

const QUANTITY = String.raw`(\d{1,3}(?:,\d{3})+|\d+)`;
/** One tier's quantity words: "first 10,000", "next 40,000", "10,001 – 50,000", "above 50,000", "50,001+". */
const TIER_RANGE = new RegExp(
  [
    String.raw`(?<first>(?:the\s+)?first|up\s+to|0\s*(?:-|–|—|to)\s*)\s*${QUANTITY}`,
    String.raw`(?<next>(?:the\s+)?next)\s+${QUANTITY}`,
    String.raw`(?<from>${QUANTITY})\s*(?:-|–|—|to)\s*${QUANTITY}`,
    String.raw`(?<over>above|over|beyond|more than|in excess of|exceeding|thereafter|after)\s*${QUANTITY}?`,
    String.raw`(?<plus>${QUANTITY})\s*(?:\+|and (?:above|over|more))`,
  ].join("|"),
  "gi",
);

/**
 * Tiers: two pieces or more, each a quantity range and then its price per unit ("first 10,000 calls at $0.010
 * each, next 40,000 at $0.008, above 50,000 at $0.005"). The upper bounds add up ("next 40,000" after 10,000 is
 * up to 50,000); the last tier has none. Volume pricing when the text says every unit is priced at the tier
 * reached.
 */
export function readTiers(text: string): TierReading | undefined {
  const pieces: Array<{ upTo: string | null; amount: string; index: number; end: number; unit?: string }> = [];
  let reached = 0n;
  for (const m of text.matchAll(TIER_RANGE)) {
    const start = m.index ?? 0;
    if (pieces.length > 0 && start < pieces.at(-1)!.end) continue;
    const g = m.groups ?? {};
    const numbers = m
      .slice(1)
      .filter((v): v is string => v !== undefined && /^\d[\d,]*$/.test(v))
      .map((v) => BigInt(v.replace(/,/g, "")));
    const after = text.slice(start + m[0].length, start + m[0].length + 60);
    const money = findMoney(after)[0];
    if (money === undefined || money.index > 40) continue;
    const between = after.slice(0, money.index);
    if (/[.;]/.test(between)) continue;
    let upTo: bigint | null;
    if (g.first !== undefined) upTo = numbers.at(-1) ?? null;
    else if (g.next !== undefined) upTo = reached + (numbers[0] ?? 0n);
    else if (g.from !== undefined) upTo = numbers.at(-1) ?? null;
    else upTo = null;
    if (upTo !== null && upTo <= reached) return undefined;
    if (upTo !== null) reached = upTo;
    const unit = nounPhrase(between.replace(/^\s*/, "").replace(/\s*(?:at|:|@|[-–—])\s*$/, ""));
    pieces.push({
      upTo: upTo === null ? null : upTo.toString(),
      amount: money.amount,
      index: start,
      end: start + m[0].length + money.index + money.length,
      ...(unit !== undefined && { unit }),
    });
    if (upTo === null) break;
  }
  if (pieces.length < 2 || pieces.at(-1)!.upTo !== null) return readTiersPriceFirst(text);
  const first = pieces[0]!;
  const last = pieces.at(-1)!;
  const perUnit = /^\s*(?:each|per\s+([A-Za-z][A-Za-z ]*))/i.exec(text.slice(first.end));
  const unit = first.unit ?? (perUnit?.[1] ? nounPhrase(perUnit[1]) : undefined);
  return {
    model: /\bvolume (?:pricing|tiers?|discount)\b|\ball units\b|\bevery unit\b|\bentire volume\b/i.test(text)
      ? "volume"
      : "graduated",
    tiers: pieces.map((p) => ({ up_to: p.upTo, unit_amount: p.amount })),
    ...(unit !== undefined && { unit }),
    index: first.index,
    end: last.end,
  };
}

/**
 * Tiers written price first: "A$1.50 each for the first 1,000, A$1.20 each for the next 4,000, A$0.90 for each
 * above 5,000". The same bounds as readTiers; the thing priced is not named in such a sentence.
 */
function readTiersPriceFirst(text: string): TierReading | undefined {
  const tiers: Array<{ up_to: string | null; unit_amount: string }> = [];
  let reached = 0n;
  let first = -1;
  let end = -1;
  for (const money of findMoney(text)) {
    if (money.index < end) continue;
    const after = text.slice(money.index + money.length);
    const range =
      /^\s*(?:each|per\s+\w+)?\s*(?:for|on)\s+(?:each\s+|every\s+)?(?:unit\s+)?(?:(?:the\s+)?(first|next)\s+(\d{1,3}(?:,\d{3})+|\d+)|(above|over|beyond|in excess of|thereafter)\s*(\d{1,3}(?:,\d{3})+|\d+)?)/i.exec(
        after,
      );
    if (range === null) {
      if (tiers.length > 0) break;
      continue;
    }
    const quantity = BigInt((range[2] ?? "0").replace(/,/g, ""));
    const upTo = range[1]?.toLowerCase() === "first" ? quantity : range[1] !== undefined ? reached + quantity : null;
    if (upTo !== null && upTo <= reached) return undefined;
    if (upTo !== null) reached = upTo;
    if (first < 0) first = money.index;
    end = money.index + money.length + range[0].length;
    tiers.push({ up_to: upTo === null ? null : upTo.toString(), unit_amount: money.amount });
    if (upTo === null) break;
  }
  if (tiers.length < 2 || tiers.at(-1)!.up_to !== null) return undefined;
  return {
    model: /\bvolume (?:pricing|tiers?|discount)\b|\ball units\b|\bevery unit\b|\bentire volume\b/i.test(text)
      ? "volume"
      : "graduated",
    tiers,
    index: first,
    end,
  };
}
