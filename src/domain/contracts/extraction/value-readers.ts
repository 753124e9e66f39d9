// The values an agreement writes in words: amounts of money, percentages, dates in their common written
// forms, numbers written out ("fifteen (15)"), currencies by code, symbol or name. Pure and exact: an amount
// is kept as the digits written (never through a JavaScript number), a date is checked against the calendar.
import { MONTH_NAMES } from "../../kernel/calendar-date.js";
import { SUPPORTED_CURRENCIES } from "../../kernel/money.js";

/** A currency symbol as printed before an amount, and the ISO code it stands for. */
const SYMBOLS: ReadonlyArray<[string, string]> = [
  ["US$", "USD"],
  ["CA$", "CAD"],
  ["C$", "CAD"],
  ["AU$", "AUD"],
  ["A$", "AUD"],
  ["NZ$", "NZD"],
  ["HK$", "HKD"],
  ["S$", "SGD"],
  ["R$", "BRL"],
  ["$", "USD"],
  ["€", "EUR"],
  ["£", "GBP"],
  ["¥", "JPY"],
  ["₹", "INR"],
  ["CHF", "CHF"],
];

/** A currency's name as an agreement writes it ("in US dollars", "pounds sterling"). */
const CURRENCY_NAMES: ReadonlyArray<[RegExp, string]> = [
  [/\b(?:US|U\.S\.|United States) dollars?\b/i, "USD"],
  [/\bCanadian dollars?\b/i, "CAD"],
  [/\bAustralian dollars?\b/i, "AUD"],
  [/\bNew Zealand dollars?\b/i, "NZD"],
  [/\bSingapore dollars?\b/i, "SGD"],
  [/\beuros?\b/i, "EUR"],
  [/\bpounds? sterling\b|\bBritish pounds?\b|\bGBP sterling\b/i, "GBP"],
  [/\bSwiss francs?\b/i, "CHF"],
  [/\bJapanese yen\b|\byen\b/i, "JPY"],
];

/** The symbol's code: "$" alone is USD unless the document says its dollars are another country's. */
function symbolCurrency(symbol: string): string | undefined {
  return SYMBOLS.find(([s]) => s === symbol)?.[1];
}

/** The currency a phrase names ("in euros", "Canadian dollars"), if any. */
export function currencyNamed(text: string): string | undefined {
  return CURRENCY_NAMES.find(([pattern]) => pattern.test(text))?.[1];
}

export const isCurrencyCode = (code: string): boolean => /^[A-Z]{3}$/.test(code) && SUPPORTED_CURRENCIES.has(code);

const SYMBOL_RE = SYMBOLS.map(([s]) => s.replace(/[$]/g, "\\$")).join("|");
/** A number as written: 1,500.00 or 1500 or 0.28 or .5 (thousands by commas, a dot for decimals). */
const NUMBER_RE = String.raw`(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+`;
/** Codes recognised beside an amount: three capitals that are a currency (checked after the match). */
const CODE_RE = "[A-Z]{3}";

/** An amount of money found in text: its digits as a decimal string, the currency if written, and where. */
export interface MoneyMatch {
  amount: string;
  currency: string | undefined; // code, or undefined when the amount has no symbol or code
  /** A symbol that means the contract's currency whatever it is ("$" in a CAD agreement): the sign only. */
  symbol: string | undefined;
  index: number;
  length: number;
}

/** "1,500.00" → "1500.00"; ".5" → "0.5". */
function plainNumber(written: string): string {
  const digits = written.replace(/,/g, "");
  return digits.startsWith(".") ? `0${digits}` : digits;
}

const MONEY_RE = new RegExp(
  String.raw`(?<sym>${SYMBOL_RE})\s?(?<n1>${NUMBER_RE})(?!\s?%)|(?<code1>${CODE_RE})\s?(?<n2>${NUMBER_RE})(?!\s?%)|(?<n3>${NUMBER_RE})\s?(?:(?<code2>${CODE_RE})\b|(?<cents>¢|cents?\b))`,
  "g",
);

/** Every amount of money in the text, in order. Cents ("30¢") are read as hundredths of the currency. */
export function findMoney(text: string): MoneyMatch[] {
  const found: MoneyMatch[] = [];
  for (const m of text.matchAll(MONEY_RE)) {
    const g = m.groups ?? {};
    const code = g.code1 ?? g.code2;
    if (code !== undefined && !isCurrencyCode(code)) continue;
    const written = g.n1 ?? g.n2 ?? g.n3 ?? "";
    let amount = plainNumber(written);
    if (g.cents !== undefined) amount = centsToUnits(amount);
    const symbol = g.sym;
    found.push({
      amount,
      currency: code ?? (symbol === undefined ? undefined : symbolCurrency(symbol)),
      symbol,
      index: m.index ?? 0,
      length: m[0].length,
    });
  }
  return found;
}

/** "30" cents → "0.30"; "2.5" cents → "0.025". Exact: the decimal point moves two places. */
function centsToUnits(cents: string): string {
  const [whole = "0", fraction = ""] = cents.split(".");
  const padded = whole.padStart(3, "0");
  const units = padded.slice(0, -2).replace(/^0+(?=\d)/, "");
  return `${units}.${padded.slice(-2)}${fraction}`;
}

/** A percentage found in text: the written percent, the rate as a fraction ("2.35" → "0.0235"), and where. */
export interface PercentMatch {
  percent: string;
  rate: string;
  index: number;
  length: number;
}

const PERCENT_RE = new RegExp(String.raw`(${NUMBER_RE})\s?(?:%|percent\b|per cent\b)`, "g");

export function findPercents(text: string): PercentMatch[] {
  return [...text.matchAll(PERCENT_RE)].map((m) => {
    const percent = plainNumber(m[1] ?? "0");
    return { percent, rate: percentToRate(percent), index: m.index ?? 0, length: m[0].length };
  });
}

/** "2.35" → "0.0235", exactly: the decimal point moves two places left. */
export function percentToRate(percent: string): string {
  const [whole = "0", fraction = ""] = percent.split(".");
  const padded = whole.padStart(3, "0");
  const units = padded.slice(0, -2).replace(/^0+(?=\d)/, "");
  const digits = `${padded.slice(-2)}${fraction}`.replace(/0+$/, "");
  return digits === "" ? units : `${units}.${digits}`;
}

const SMALL_NUMBERS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};

/** "forty-five" → 45, "fifteen" → 15, "30" → 30; undefined for anything else. */
function numberWords(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (/^\d+$/.test(t)) return Number(t);
  const parts = t.split(/[-\s]+/);
  let total = 0;
  for (const part of parts) {
    const n = SMALL_NUMBERS[part];
    if (n === undefined) return undefined;
    total += n;
  }
  return parts.length > 0 ? total : undefined;
}

/** A count as agreements write it: "fifteen (15)", "15", "fifteen"; the pattern's text for a regex. */
export const COUNT_RE = String.raw`(?:[a-z]+(?:[-\s][a-z]+)?\s*\(\s*\d{1,4}\s*\)|\d{1,4}|[a-z]+(?:-[a-z]+)?)`;

/** The number a COUNT_RE match says: the digits in brackets win over the words before them. */
export function readCount(text: string): number | undefined {
  const bracketed = /\(\s*(\d{1,4})\s*\)/.exec(text);
  if (bracketed) return Number(bracketed[1]);
  return numberWords(text);
}

function monthNumber(word: string): number | undefined {
  const w = word.toLowerCase().replace(/\.$/, "");
  if (w.length < 3) return undefined;
  const index = MONTH_NAMES.map((name) => name.toLowerCase()).findIndex(
    (m) => m === w || (w.length >= 3 && m.startsWith(w) && (w.length === 3 || w === "sept")),
  );
  return index < 0 ? undefined : index + 1;
}

function isoDate(year: number, month: number, day: number): string | undefined {
  if (year < 1900 || year > 2200 || month < 1 || month > 12 || day < 1) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  if (day > days) return undefined;
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** A date found in text, as YYYY-MM-DD; `ambiguous` when its numbers alone could be day-first or month-first. */
export interface DateMatch {
  date: string;
  ambiguous: boolean;
  index: number;
  length: number;
}

const MONTH_WORD = String.raw`(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?`;
const ORDINAL = String.raw`(?:st|nd|rd|th)?`;
const DATE_RE = new RegExp(
  [
    String.raw`(?<m1>${MONTH_WORD})\s+(?<d1>\d{1,2})${ORDINAL},?\s+(?<y1>\d{4})`,
    String.raw`(?<d2>\d{1,2})${ORDINAL}(?:\s+day\s+of)?\s+(?<m2>${MONTH_WORD}),?\s+(?<y2>\d{4})`,
    String.raw`(?<y3>\d{4})-(?<mo3>\d{1,2})-(?<d3>\d{1,2})`,
    String.raw`(?<a4>\d{1,2})[/.](?<b4>\d{1,2})[/.](?<y4>\d{4})`,
  ].join("|"),
  "gi",
);

/**
 * Every date in the text. A date of numbers only whose first two could both be the month ("05/01/2026") is
 * read in `order`: day-first where the document is British or European, month-first otherwise (dates.ts
 * decides, and says so in a warning).
 */
export function findDates(text: string, order: "day_first" | "month_first"): DateMatch[] {
  const found: DateMatch[] = [];
  for (const m of text.matchAll(DATE_RE)) {
    const g = m.groups ?? {};
    let date: string | undefined;
    let ambiguous = false;
    if (g.m1 !== undefined) {
      const month = monthNumber(g.m1);
      date = month === undefined ? undefined : isoDate(Number(g.y1), month, Number(g.d1));
    } else if (g.m2 !== undefined) {
      const month = monthNumber(g.m2);
      date = month === undefined ? undefined : isoDate(Number(g.y2), month, Number(g.d2));
    } else if (g.y3 !== undefined) {
      date = isoDate(Number(g.y3), Number(g.mo3), Number(g.d3));
    } else {
      const [a, b, year] = [Number(g.a4), Number(g.b4), Number(g.y4)];
      if (a > 12) date = isoDate(year, b, a);
      else if (b > 12) date = isoDate(year, a, b);
      else {
        ambiguous = a !== b;
        date = order === "day_first" ? isoDate(year, b, a) : isoDate(year, a, b);
      }
    }
    if (date !== undefined) found.push({ date, ambiguous, index: m.index ?? 0, length: m[0].length });
  }
  return found;
}

/** The day before `date` plus `months` months: the last day of a term of that many months. */
export function termEndAfterMonths(date: string, months: number): string | undefined {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const total = y * 12 + (m - 1) + months;
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 31;
  const day = Math.min(d, days);
  const at = new Date(Date.UTC(year, month - 1, day) - 86_400_000);
  return at.toISOString().slice(0, 10);
}

const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

export function findEmails(text: string): Array<{ email: string; index: number }> {
  return [...text.matchAll(EMAIL_RE)].map((m) => ({ email: m[0].replace(/\.$/, ""), index: m.index ?? 0 }));
}

/**
 * A name as a metric id: lower case, accents dropped, every run of other characters one "_"
 * ("ACH debit origination" → "ach_debit_origination").
 */
export function metricIdOf(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 100)
    .replace(/_+$/g, "");
}
