import { randomBytes } from "node:crypto";

/**
 * JSON whose numbers never pass through a double (docs/api.md, "Numbers"). `JSON.parse` turns
 * 99999999999999.99 into …99.98 before any validation could see the difference, and `JSON.stringify` of a
 * number prints the double, not the decimal stored; money is exact only if both edges keep the text.
 */

/** The grammar of a JSON number (RFC 8259 section 6). */
const JSON_NUMBER_PATTERN = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A JSON number kept as its text. On the way in, the parser below gives one for every number a double
 * cannot hold exactly; on the way out, a decimal presented as one is written as its text, unquoted.
 */
export class JsonNumber {
  constructor(readonly text: string) {
    if (!JSON_NUMBER_PATTERN.test(text)) throw new TypeError(`not a JSON number: ${text.slice(0, 50)}`);
  }
  toString(): string {
    return this.text;
  }
  toJSON(): string {
    return MARK + this.text;
  }
}

// JsonNumber.toJSON's stand-in string, swapped for the bare number once the text is written. It starts with
// a NUL, which no stored or accepted text holds (storable-text.ts), and carries a token of this process, so
// that no string a client sends can be taken for it.
const MARK = `\u0000${randomBytes(8).toString("hex")}:`;
const MARK_IN_JSON = JSON.stringify(MARK).slice(1, -1);
const MARKED_NUMBER = new RegExp(`"${MARK_IN_JSON.replaceAll("\\", "\\\\")}(-?[0-9][0-9.eE+-]*)"`, "g");

/** `JSON.stringify`, with every JsonNumber written as its own text (a bare JSON number). */
export function stringifyJson(value: unknown, space?: number): string {
  const text = JSON.stringify(value, undefined, space);
  return text !== undefined && text.includes(MARK_IN_JSON) ? text.replace(MARKED_NUMBER, "$1") : text;
}

/**
 * stringifyJson for a value whose JsonNumbers may write themselves otherwise (the typed client's Decimal writes
 * its digits as a string for a plain JSON.stringify): every JsonNumber is written as its bare number all the same.
 */
export function stringifyJsonNumbers(value: unknown): string {
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, written: unknown) {
    const original = this[key];
    return original instanceof JsonNumber ? MARK + original.text : written;
  });
  return text === undefined ? text : unmarkNumbers(text);
}

/** Swaps the stand-ins of JsonNumbers in JSON text that was written by a plain `JSON.stringify`. */
export function unmarkNumbers(json: string): string {
  return json.includes(MARK_IN_JSON) ? json.replace(MARKED_NUMBER, "$1") : json;
}

/**
 * Whether a number's text means exactly the double JavaScript reads from it. Up to 15 significant digits
 * always do (a double tells every such decimal apart, and prints the shortest one back); longer ones, and
 * exponents that leave the double's range, are checked digit by digit.
 */
export function isExactDouble(text: string): boolean {
  const value = Number(text);
  if (!Number.isFinite(value)) return false;
  return sameDecimal(text, String(value));
}

/** Whether two decimal texts (JSON number grammar, any exponent) are the same number. */
function sameDecimal(a: string, b: string): boolean {
  const x = normalize(a);
  const y = normalize(b);
  return x.negative === y.negative && x.digits === y.digits && x.exponent === y.exponent;
}

/** Sign, significant digits without leading or trailing zeros, and the power of ten of the first one. */
function normalize(text: string): { negative: boolean; digits: string; exponent: number } {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const whole = match[2] ?? "";
  const fraction = match[3] ?? "";
  let digits = whole + fraction;
  let exponent = whole.length - 1 + Number(match[4] ?? 0);
  const lead = digits.search(/[^0]/);
  if (lead === -1) return { negative: false, digits: "", exponent: 0 }; // every zero is the same number
  digits = digits.slice(lead).replace(/0+$/, "");
  exponent -= lead;
  return { negative: match[1] === "-", digits, exponent };
}

/**
 * Whether the text may hold a number that is not an exact double: where a value starts (after a colon, a
 * comma or a bracket), sixteen or more digits and points, or an exponent. Such characters inside strings
 * ("10:00:00", "a,1") are looked at too; a false alarm only costs the slow path. Cheaper than a regular
 * expression over the whole text: indexOf jumps from one delimiter to the next (together about a third of
 * JSON.parse's own time for a 100-event batch).
 */
function mayHoldInexactNumber(text: string): boolean {
  if (text.charCodeAt(0) !== 0x7b && text.charCodeAt(0) !== 0x5b) return true; // a bare value, or leading spaces: rare, take the slow path
  for (const delimiter of [":", ",", "["]) {
    for (let i = text.indexOf(delimiter); i !== -1; i = text.indexOf(delimiter, i + 1)) {
      if (inexactNumberAt(text, i + 1)) return true;
    }
  }
  return false;
}

/** Whether a number that may not be an exact double starts at `from` (after JSON whitespace). */
function inexactNumberAt(text: string, from: number): boolean {
  let j = from;
  let c = text.charCodeAt(j);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++j);
  if (c === 0x2d) c = text.charCodeAt(++j);
  const start = j;
  while ((c >= 0x30 && c <= 0x39) || c === 0x2e) c = text.charCodeAt(++j);
  return j > start && (j - start >= 16 || c === 0x65 || c === 0x45);
}

/**
 * Parses JSON text as `parse` would (the caller's parser: Fastify's keeps its prototype-poisoning checks),
 * except that a number whose text a double cannot hold exactly becomes a JsonNumber with that text.
 * Numbers that fit stay plain numbers, so bodies without such numbers cost one regular-expression test.
 * With `everyNumber`, every number is a JsonNumber: for a reader that knows which fields are decimals (the
 * typed client), and wants their digits as written (`1000.00`, not 1000).
 */
export function parseJsonExact(
  text: string,
  parse: (text: string) => unknown = JSON.parse,
  options: { everyNumber?: boolean } = {},
): unknown {
  if (!options.everyNumber && !mayHoldInexactNumber(text)) return parse(text);
  const found: string[] = [];
  const token = `${MARK}${randomBytes(4).toString("hex")}:`;
  const rewritten = replaceInexactNumbers(text, !!options.everyNumber, (number) => {
    found.push(number);
    return JSON.stringify(`${token}${found.length - 1}`);
  });
  const value = parse(rewritten);
  if (found.length === 0) return value;
  return restoreNumbers(value, token, found);
}

/**
 * The text with each number token outside strings that is not an exact double replaced by `replace`'s
 * answer. A token that is not a valid JSON number is left alone, for the parser to refuse.
 */
function replaceInexactNumbers(text: string, everyNumber: boolean, replace: (number: string) => string): string {
  let out = "";
  let from = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < n && /[0-9.eE+-]/.test(text[j]!)) j++;
      const number = text.slice(i, j);
      if (JSON_NUMBER_PATTERN.test(number) && (everyNumber || !isExactDouble(number))) {
        out += text.slice(from, i) + replace(number);
        from = j;
      }
      i = j;
    } else {
      i++;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * The parsed value with the stand-in strings swapped for JsonNumbers. A stand-in used as an object key
 * means the text had a number where a key belongs: not JSON.
 */
function restoreNumbers(root: unknown, token: string, found: string[]): unknown {
  const swap = (value: unknown): unknown =>
    typeof value === "string" && value.startsWith(token)
      ? new JsonNumber(found[Number(value.slice(token.length))]!)
      : value;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (let k = 0; k < node.length; k++) {
        node[k] = swap(node[k]);
        if (node[k] !== null && typeof node[k] === "object" && !(node[k] instanceof JsonNumber)) stack.push(node[k]);
      }
    } else if (node !== null && typeof node === "object") {
      const record = node as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (key.startsWith(token)) throw new SyntaxError("Unexpected number in JSON where a property name belongs");
        record[key] = swap(record[key]);
        const child = record[key];
        if (child !== null && typeof child === "object" && !(child instanceof JsonNumber)) stack.push(child);
      }
    }
  }
  return swap(root);
}
