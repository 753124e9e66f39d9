/**
 * What the fuzz suites share: the odd characters they mix into strings, the generators of bad values and
 * bodies built from them, and a digest of a company's data.
 */
import fc from "fast-check";
import type { TestApp } from "./harness.js";

/** Characters that tend to break things: bidi and zero-width marks, lone surrogates, controls, quotes. */
export const ODD_CHARS = [
  "\u202e",
  "\u202d",
  "\u200f",
  "\u200e",
  "\u061c",
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u2028",
  "\u2029",
  "\u0085",
  "\u00a0",
  "\u3000",
  "\u0301",
  "\u20e3",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\ud83d\ude00",
  "\ud83d",
  "\ude00",
  "\u0000",
  "\u0007",
  "\u0008",
  "\u001b",
  "\u007f",
  "\u009f",
  "\uffff",
  "\ufffe",
  "\ufffd",
  "'",
  '"',
  "\\",
  "`",
  "%",
  "%00",
  "%s",
  "${x}",
  "{{x}}",
  "<script>",
  "' OR 1=1 --",
  "\n",
  "\r\n",
  "\t",
  " ",
  "\ud835\udfd8",
  "\ufdfa",
  "\u0130",
  "\u00df",
  "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
  "\u05e2\u05d1\u05e8\u05d9\u05ea",
  "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f",
  "NaN",
  "null",
  "undefined",
];

export const oddString: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(fc.constantFrom(...ODD_CHARS), fc.string({ unit: "binary", maxLength: 6 }), fc.string({ maxLength: 6 })),
    {
      minLength: 1,
      maxLength: 10,
    },
  )
  .map((parts) => parts.join(""));

/** Up to ~200 KB of one repeated unit (sometimes a bit over 1 MiB once JSON-escaped: a 413). */
export const hugeString: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.integer({ min: 1_000, max: 200_000 }), weight: 9 },
      { arbitrary: fc.constant(1_100_000), weight: 1 },
    ),
    fc.constantFrom("a", "\u00e9", "\u202e", "\u200b", "\ud800", "\ud83d\ude00", "0", " ", "\u0000", "\\", '"'),
  )
  .map(([length, unit]) => unit.repeat(Math.max(1, Math.floor(length / unit.length))));

export const NUMBER_STRINGS = [
  "1e309",
  "-1e309",
  "1E400",
  "1e-400",
  "-0",
  "0",
  "-0.0",
  "NaN",
  "Infinity",
  "-Infinity",
  "+1",
  "01",
  ".5",
  "1.",
  "0x10",
  "1_000",
  " 1",
  "1 ",
  "1,5",
  "-1",
  "1e15",
  "999999999999999.999999999999",
  "0.0000000000001",
  "9".repeat(400),
  "1e2",
  "5e-324",
  "",
  " ",
  "\u0661\u0662",
  "\uff11",
];

export const DATE_STRINGS = [
  "0000-01-01",
  "0000-12-31",
  "0001-01-01",
  "0050-03-01",
  "9999-12-31",
  "10000-01-01",
  "2026-02-29",
  "2024-02-29",
  "2026-02-30",
  "2026-13-01",
  "2026-00-10",
  "2026-3-1",
  "-2026-03-01",
  "+002026-03-01",
  "2026-03-01T00:00:00Z",
  "2026-03-15T25:00:00Z",
  "2026-03-15T12:00:00",
  "2026-03-15T12:00:00+24:00",
  "2026-03-15T12:00:00.1234567890Z",
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999Z",
  "-000001-01-01T00:00:00Z",
  "+275760-09-13T00:00:00Z",
  "1970-01-01T00:00:00Z",
  "2026-03-15T12:00:00-23:59",
  "2026-03-15T12:00:00+14:00",
  "2026-03-15 12:00:00Z",
  "20260315T120000Z",
  "2026-W11-7",
  "2026-074",
  "2026-03-20T10:00:00.000Z",
  "2026-03-01",
  "2026-03-31",
  "2027-03-14",
];

/** `YYYY-MM-DD`, mostly real calendar days, with edge years (0000, 0001, 0099, 9999) often. */
const calendarDay: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constantFrom(0, 1, 9999), weight: 3 },
      { arbitrary: fc.constantFrom(99, 100, 1969, 1970, 2026, 2027), weight: 2 },
      { arbitrary: fc.integer({ min: 0, max: 9999 }), weight: 1 },
    ),
    fc.oneof(
      { arbitrary: fc.integer({ min: 1, max: 12 }), weight: 5 },
      { arbitrary: fc.constantFrom(0, 13), weight: 1 },
    ),
    fc.oneof(
      { arbitrary: fc.integer({ min: 1, max: 28 }), weight: 5 },
      { arbitrary: fc.constantFrom(0, 29, 30, 31, 32), weight: 1 },
    ),
  )
  .map(([y, m, d]) => `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`);

const TIMES = ["T00:00:00Z", "T23:59:59.999+14:00", "T12:00:00-12:00", "T24:00:00Z", "T12:00:00.123456789Z"];

/** Dates (and a few timestamps where a date belongs). */
export const dateLike: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...DATE_STRINGS), weight: 2 },
  { arbitrary: calendarDay, weight: 4 },
  { arbitrary: fc.tuple(calendarDay, fc.constantFrom(...TIMES)).map(([d, t]) => d + t), weight: 1 },
);

/** Timestamps (and a few dates where a timestamp belongs). */
export const timestampLike: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...DATE_STRINGS), weight: 2 },
  { arbitrary: fc.tuple(calendarDay, fc.constantFrom(...TIMES)).map(([d, t]) => d + t), weight: 4 },
  { arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), weight: 1 },
);

export const anyString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: oddString, weight: 6 },
  { arbitrary: fc.constantFrom(...NUMBER_STRINGS), weight: 2 },
  { arbitrary: dateLike, weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 40 }), weight: 2 },
  { arbitrary: hugeString, weight: 1 },
);

export const anyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2, 1e15, 0.1 + 0.2, 1e-13, 3651, 101, -1),
);

/** Nested arrays or objects a few hundred levels deep. */
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 20, max: 400 }), fc.boolean(), fc.oneof(fc.constant(null), oddString, anyNumber))
  .map(([depth, arrays, leaf]) => {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
    return value;
  });

export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 4 }), weight: 6 },
  { arbitrary: anyString, weight: 3 },
  { arbitrary: anyNumber, weight: 2 },
  { arbitrary: deepValue, weight: 1 },
);

export type JsonType = "string" | "number" | "boolean" | "null" | "array" | "object";

const OF_TYPE: Record<JsonType, fc.Arbitrary<unknown>> = {
  string: anyString,
  number: anyNumber,
  boolean: fc.boolean(),
  null: fc.constant(null),
  array: fc.oneof(
    fc.array(anyJson, { maxLength: 4 }),
    deepValue.map((v) => [v]),
  ),
  object: fc.oneof(
    fc.dictionary(oddString, anyJson, { maxKeys: 4 }),
    deepValue.map((v) => ({ x: v })),
  ),
};

/** A value of none of the given JSON types. */
export const otherThan = (accepted: JsonType[]): fc.Arbitrary<unknown> =>
  fc.oneof(...(Object.keys(OF_TYPE) as JsonType[]).filter((t) => !accepted.includes(t)).map((t) => OF_TYPE[t]));

/** A path segment: percent-encoded (lone surrogates as the invalid UTF-8 they would be), or raw garbage. */
export function percentEncode(text: string): string {
  let out = "";
  for (const ch of text) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join("");
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

export const RAW_SEGMENTS = [
  "%",
  "%%",
  "%zz",
  "%E0%A4%A",
  "%C0%AF",
  "%ED%A0%80",
  "%FF",
  "%00",
  "%2F",
  "..",
  "%2e%2e",
  "%252F",
  "%0A",
  "%20",
  "+",
  "%u0041",
  "%F4%90%80%80",
  "%EF%BB%BF",
  "%E2%80%AE",
  "%E2%80%8B",
  ";",
  ",",
  "*",
  "'",
  "~",
  "-",
  "_",
  ".",
  "a.pdf",
  "INV-0",
  "INV-999999",
  "CN-000001",
  "rule_0000000000000000",
];

/** A path id that names nothing of the company's. */
export const randomId: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: oddString.map(percentEncode), weight: 4 },
  { arbitrary: fc.uuid(), weight: 2 },
  { arbitrary: fc.constantFrom(...RAW_SEGMENTS), weight: 2 },
  {
    arbitrary: fc.array(fc.constantFrom(...RAW_SEGMENTS), { minLength: 2, maxLength: 5 }).map((s) => s.join("")),
    weight: 1,
  },
  { arbitrary: fc.integer({ min: 64, max: 5_000 }).map((n) => "a".repeat(n)), weight: 1 },
  { arbitrary: fc.integer({ min: 20, max: 800 }).map((n) => "%E2%80%AE".repeat(n)), weight: 1 },
  { arbitrary: fc.string({ unit: "binary-ascii", maxLength: 30 }).map(percentEncode), weight: 2 },
);

/** Raw JSON literals that JSON.stringify never writes: 1e309 parses to Infinity, "\ud800" to a lone surrogate. */
export const RAW_LITERALS = [
  "1e309",
  "-1e309",
  "1E400",
  "1e-400",
  "-0",
  "-0.0",
  "0e0",
  "123456789012345678901234567890",
  "5e-324",
  "0.1e1",
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '"x\\uDBFF"',
  '"\\uD83D\\uDE00"',
  '"\\uDE00\\uD83D"',
  '"\\u202e\\u200b"',
  '"\\u0000"',
  '"\\u0085\\u2028"',
  '"\\ufeff"',
  "true",
  "null",
  "[]",
  "{}",
  '"1e309"',
  '"-0"',
  '"NaN"',
  '"Infinity"',
  // not JSON at all: a 400 invalid_json
  "NaN",
  "Infinity",
  "-Infinity",
  "+1",
  "01",
  ".5",
  "1.",
  "0x10",
  "1_0",
  "undefined",
  "'x'",
  '"\\x41"',
  '"\\u12"',
  '"unterminated',
  '"tab\tinside"',
  '"\\ud800',
  "[1,]",
  "{,}",
  "\u0000",
];

export const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=utf-16",
  "multipart/form-data; boundary=x",
  "",
  "application/json, text/plain",
  "APPLICATION/JSON",
  "application/vnd.api+json",
  "application/json;;",
  "*/*",
];

/** A body as text, with its content type (mostly application/json). */
export function encodedBody(
  body: fc.Arbitrary<unknown>,
): fc.Arbitrary<{ payload: string; contentType: string | undefined }> {
  const contentType = fc.oneof(
    { arbitrary: fc.constant<string | undefined>("application/json"), weight: 8 },
    { arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined), weight: 1 },
  );
  return fc
    .tuple(body, contentType)
    .map(([value, type]) => ({ payload: JSON.stringify(value) ?? "null", contentType: type }));
}

export const rawBody = (template: (literal: string) => string) =>
  fc
    .oneof(
      { arbitrary: fc.constantFrom(...RAW_LITERALS).map(template), weight: 6 },
      {
        arbitrary: fc.constantFrom(
          "",
          " ",
          "{",
          "}",
          "[",
          '\ufeff{"zz_unknown":1}',
          '{"a":1}{"b":2}',
          "{'a':1}",
          '{"a":1,}',
          "\u0000{}",
          "nul",
        ),
        weight: 2,
      },
      {
        arbitrary: fc.constantFrom('{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '{"a":1,"a":2}'),
        weight: 1,
      },
      {
        // nesting far deeper than any schema, with a NUL or a lone surrogate at the bottom
        arbitrary: fc
          .tuple(
            fc.integer({ min: 100, max: 100_000 }),
            fc.constantFrom('"\\u0000"', '"\\ud800"', "1", "{}"),
            fc.boolean(),
          )
          .map(([depth, leaf, arrays]) =>
            arrays
              ? `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`
              : `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}`,
          ),
        weight: 1,
      },
    )
    .map((payload) => ({ payload, contentType: "application/json" as string | undefined }));

/** Row counts and digests of everything a company has stored: equal before and after = nothing written. */
export async function storedState(t: TestApp, companyId: string): Promise<string> {
  const count = (table: string) => `(SELECT count(*) FROM ${table} WHERE company_id = $1) AS ${table}`;
  const { rows } = await t.app.db.query(
    `SELECT ${["customers", "contracts", "pricing_program_versions", "usage_events", "invoices", "invoice_lines", "webhook_endpoints", "webhook_deliveries", "events", "company_counters", "credit_grants", "credit_ledger"].map(count).join(", ")},
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, url, description, array_to_string(events, ','), enabled, secret), ';' ORDER BY id), ''))
          FROM webhook_endpoints WHERE company_id = $1) AS endpoints_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', number, status, minimum_amount, projected_at, updated_at), ';' ORDER BY number), ''))
          FROM invoices WHERE company_id = $1) AS invoices_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', invoice_number, line_key, quantity, charge_total), ';' ORDER BY invoice_number, line_key), ''))
          FROM invoice_lines WHERE company_id = $1) AS lines_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, status, current_version), ';' ORDER BY id), ''))
          FROM contracts WHERE company_id = $1) AS contracts_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, balance, status, invoice_number), ';' ORDER BY id), ''))
          FROM credit_grants WHERE company_id = $1) AS grants_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, status, attempts, next_attempt_at), ';' ORDER BY id), ''))
          FROM webhook_deliveries WHERE company_id = $1) AS deliveries_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('=', name, value), ';' ORDER BY name), ''))
          FROM company_counters WHERE company_id = $1) AS counters_digest`,
    [companyId],
  );
  return JSON.stringify(rows[0]);
}

/** Row counts and digests of the authorization server's tables: equal before and after = nothing written. */
export async function storedOAuthState(t: TestApp): Promise<string> {
  const digest = (table: string, columns: string, order: string) =>
    `(SELECT count(*) FROM ${table}) AS ${table}, ` +
    `(SELECT md5(coalesce(string_agg(concat_ws('|', ${columns}), ';' ORDER BY ${order}), '')) FROM ${table}) AS ${table}_digest`;
  const { rows } = await t.app.db.query(
    `SELECT ${[
      digest("oauth_clients", "client_id, metadata::text", "client_id"),
      digest("oauth_requests", "id, client_id, params::text, user_id, company_id, expires_at", "id"),
      digest("oauth_codes", "encode(code_hash, 'hex'), client_id, used_at", "code_hash"),
      digest("oauth_tokens", "encode(token_hash, 'hex'), kind, client_id, revoked_at", "token_hash"),
    ].join(", ")}`,
  );
  return JSON.stringify(rows[0]);
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * Instants from the whole ISO 8601 grammar and a little past it: years 0001 to 9999 (edges often), every
 * hour including 24, leap seconds (:60), 0 to 12 fractional digits, and zones Z/z, ±hh:mm to ±23:59, ±hhmm and
 * ±hh; with the basic (no separators) form, week and ordinal dates, and a space for the T now and then.
 */
export const iso8601Instant: fc.Arbitrary<string> = fc
  .record({
    year: fc.oneof(
      { arbitrary: fc.constantFrom(1, 99, 1969, 1970, 9989, 9990, 9999), weight: 3 },
      { arbitrary: fc.constantFrom(2026, 2027), weight: 3 },
      { arbitrary: fc.integer({ min: 1, max: 9999 }), weight: 1 },
    ),
    month: fc.oneof(
      { arbitrary: fc.integer({ min: 1, max: 12 }), weight: 9 },
      { arbitrary: fc.constantFrom(0, 13), weight: 1 },
    ),
    day: fc.oneof(
      { arbitrary: fc.integer({ min: 1, max: 28 }), weight: 6 },
      { arbitrary: fc.constantFrom(0, 29, 30, 31, 32), weight: 2 },
    ),
    hour: fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: 23 }), weight: 9 },
      { arbitrary: fc.constant(24), weight: 1 },
    ),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: 59 }), weight: 9 },
      { arbitrary: fc.constant(60), weight: 2 },
    ),
    fraction: fc.oneof(
      { arbitrary: fc.constant(""), weight: 3 },
      { arbitrary: fc.integer({ min: 1, max: 12 }).map((n) => `.${"9".repeat(n)}`), weight: 2 },
    ),
    zone: fc.oneof(
      { arbitrary: fc.constantFrom("Z", "z", "+00:00", "-00:00"), weight: 3 },
      {
        arbitrary: fc
          .tuple(
            fc.constantFrom("+", "-"),
            fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(14, 15, 16, 20, 23)),
            fc.constantFrom(0, 30, 45, 59),
          )
          .map(([sign, h, m]) => `${sign}${pad2(h)}:${pad2(m)}`),
        weight: 5,
      },
      {
        arbitrary: fc
          .tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 23 }), fc.constantFrom("", "00", "59"))
          .map(([sign, h, m]) => `${sign}${pad2(h)}${m}`),
        weight: 1,
      },
      { arbitrary: fc.constant(""), weight: 1 },
    ),
    form: fc.oneof(
      { arbitrary: fc.constant("extended"), weight: 12 },
      { arbitrary: fc.constantFrom("basic", "space", "week", "ordinal"), weight: 1 },
    ),
  })
  .map(({ year, month, day, hour, minute, second, fraction, zone, form }) => {
    const y = String(year).padStart(4, "0");
    const time = `${pad2(hour)}:${pad2(minute)}:${pad2(second)}${fraction}${zone}`;
    if (form === "basic") return `${y}${pad2(month)}${pad2(day)}T${time.replace(/:/g, "")}`;
    if (form === "space") return `${y}-${pad2(month)}-${pad2(day)} ${time}`;
    if (form === "week") return `${y}-W${pad2(Math.min(month * 4, 53))}-${(day % 7) + 1}T${time}`;
    if (form === "ordinal") return `${y}-${String(day * 12).padStart(3, "0")}T${time}`;
    return `${y}-${pad2(month)}-${pad2(day)}T${time}`;
  });

/** Calendar months `[first day, last day]` from year 0001 to 9999, edges often, as a projection takes them. */
export const anyCalendarMonth: fc.Arbitrary<[string, string]> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constantFrom(1, 99, 1969, 1970, 2026, 9989, 9990, 9999), weight: 3 },
      { arbitrary: fc.integer({ min: 1, max: 9999 }), weight: 1 },
    ),
    fc.integer({ min: 1, max: 12 }),
  )
  .map(([year, month]) => {
    const prefix = `${String(year).padStart(4, "0")}-${pad2(month)}`;
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    const last = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
    return [`${prefix}-01`, `${prefix}-${last}`];
  });

/** A multipart body as sent on the wire, whatever it holds: the bytes and the request's content type. */
export interface AbusiveUpload {
  /** Which family of abuse it is, for the failure message and the statistics. */
  family: string;
  payload: Buffer;
  contentType: string;
}

/** The PDFs the upload generators put in file parts; built beforehand (fast-check generates synchronously). */
export interface UploadSamples {
  /** A small valid PDF. */
  pdf: Buffer;
  /** One saved with a password. */
  encrypted: Buffer;
  /** Small, valid, and unpacking into more than one file may take (bombPdf in uploads.ts). */
  bomb: Buffer;
}

interface RawPart {
  name: string;
  body: Buffer | string;
  filename?: string;
  type?: string;
  /** Header lines as sent, in place of those built from the fields above. */
  headers?: string;
}

/** The bytes of a multipart body, written by hand: what a browser would never send is sent as asked. */
function rawMultipart(boundary: string, parts: readonly RawPart[], closing = true): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
    const headers =
      part.headers ?? [disposition, ...(part.type === undefined ? [] : [`Content-Type: ${part.type}`])].join("\r\n");
    pieces.push(Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(part.body), Buffer.from("\r\n"));
  }
  if (closing) pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

/**
 * Abusive multipart uploads of a file form: missing and wrong boundaries, duplicate parts, huge names and
 * headers, bombs, files that are PDFs only by name, truncated bodies, nested and odd content types, encrypted
 * PDFs. `fields` are the form's own text parts (the API's `terms`, the dashboard's `_csrf`), sent with each
 * body so that the file is what the service judges; the file part is named `file`.
 */
export function abusiveUploads(
  fields: ReadonlyArray<readonly [string, string]>,
  samples: UploadSamples,
): fc.Arbitrary<AbusiveUpload> {
  const boundary = "fuzzboundary0123456789";
  const text = fields.map(([name, value]): RawPart => ({ name, body: value }));
  const file = (body: Buffer | string, more: Partial<RawPart> = {}): RawPart => ({
    name: "file",
    body,
    filename: "agreement.pdf",
    type: "application/pdf",
    ...more,
  });
  const form = (
    family: string,
    parts: RawPart[],
    contentType = `multipart/form-data; boundary=${boundary}`,
    closing = true,
  ): AbusiveUpload => ({
    family,
    payload: rawMultipart(boundary, parts, closing),
    contentType,
  });
  // The families about the body's shape send a file that is a PDF by name only: refused without starting the
  // child process that reads PDFs (a second each), so that the run stays short; the PDFs go in the others.
  const junk = Buffer.from("%PDX: a PDF by name only");
  const valid = [...text, file(junk)];
  const pdfOrJunk = fc.constantFrom(samples.pdf, samples.encrypted, Buffer.from("not a pdf"), Buffer.alloc(0));

  const boundaries = fc
    .constantFrom(
      "multipart/form-data",
      "multipart/form-data; boundary=",
      'multipart/form-data; boundary=""',
      "multipart/form-data; boundary=other",
      `multipart/form-data; boundary=${"b".repeat(200)}`,
      `multipart/form-data; boundary="${boundary}"; boundary=other`,
      `multipart/form-data; boundary=${boundary}\u0000`,
      `multipart/form-data;boundary=${boundary.toUpperCase()}`,
      `multipart/form-data; charset=utf-16; boundary=${boundary}`,
    )
    .map((contentType) => form("boundary", valid, contentType));

  const duplicates = fc
    .shuffledSubarray(
      [
        file(junk),
        file(samples.pdf),
        file(junk, { name: "other" }),
        ...text,
        ...text,
        { name: "file", body: "as text" },
      ],
      { minLength: 2 },
    )
    .map((parts) => form("duplicate parts", parts));

  const hugeNames = fc
    .tuple(fc.integer({ min: 1_000, max: 200_000 }), fc.constantFrom("name", "filename", "header"))
    .map(([length, where]) => {
      const huge = "n".repeat(length);
      if (where === "name") return form("huge names", [...text, { name: huge, body: "x" }, file(junk)]);
      if (where === "filename") return form("huge names", [...text, file(junk, { filename: `${huge}.pdf` })]);
      return form("huge names", [
        ...text,
        file(junk, { headers: `Content-Disposition: form-data; name="file"; filename="a.pdf"\r\nX-Padding: ${huge}` }),
      ]);
    });

  const bombs = fc.constantFrom(samples.bomb).map((bomb) => form("bomb", [...text, file(bomb)]));

  const notPdf = fc
    .tuple(
      fc.uint8Array({ maxLength: 2048 }),
      fc.constantFrom("agreement.pdf", "AGREEMENT.PDF", "a.pdf.exe", ".pdf", "../../etc/passwd.pdf"),
    )
    .map(([bytes, filename]) => form("not a PDF", [...text, file(Buffer.from(bytes), { filename })]));

  const truncated = fc.double({ min: 0, max: 1, noNaN: true }).map((at) => {
    const whole = rawMultipart(boundary, valid);
    return {
      family: "truncated",
      payload: whole.subarray(0, Math.floor(whole.length * at)),
      contentType: `multipart/form-data; boundary=${boundary}`,
    };
  });

  const oddTypes = fc
    .tuple(
      fc.constantFrom(
        "multipart/mixed; boundary=inner",
        "application/json",
        "text/html",
        "application/x-www-form-urlencoded",
        "application/octet-stream",
        "image/svg+xml",
        "",
      ),
      fc.constantFrom(
        `multipart/form-data; boundary=${boundary}`,
        `multipart/mixed; boundary=${boundary}`,
        `multipart/related; boundary=${boundary}`,
      ),
      pdfOrJunk,
    )
    .map(([partType, requestType, body]) => {
      // A part that is itself a multipart body, with the PDF inside.
      const nested = partType.startsWith("multipart/") ? rawMultipart("inner", [file(body)]) : body;
      return form("odd content types", [...text, file(nested, { type: partType })], requestType);
    });

  const encrypted = pdfOrJunk.map((body) =>
    form("encrypted or junk", [...text, file(body === samples.pdf ? samples.encrypted : body)]),
  );

  return fc.oneof(
    { arbitrary: boundaries, weight: 3 },
    { arbitrary: duplicates, weight: 3 },
    { arbitrary: hugeNames, weight: 2 },
    // Each bomb is read until the budget stops it (seconds): rare, so that the run stays short.
    { arbitrary: bombs, weight: 1 },
    { arbitrary: notPdf, weight: 3 },
    { arbitrary: truncated, weight: 3 },
    { arbitrary: oddTypes, weight: 3 },
    { arbitrary: encrypted, weight: 1 },
  );
}

/**
 * Byte sequences that are not UTF-8, each of a kind a lenient decoder turns into U+FFFD: an overlong form
 * (C0 AF, a "/"; E0 80 AF), a lone continuation byte, a sequence cut short, an encoded UTF-16 surrogate half,
 * a code point past U+10FFFF, and bytes UTF-8 never uses (FE, FF).
 */
export const MALFORMED_UTF8: readonly (readonly number[])[] = [
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0x80],
  [0xbf, 0x41],
  [0xc3],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xfe],
  [0xff],
];

const malformedUtf8: fc.Arbitrary<Buffer> = fc.constantFrom(...MALFORMED_UTF8).map((bytes) => Buffer.from(bytes));

/** Text with malformed bytes put in it: `before`, the bytes, `after` (both valid text). */
export const withMalformedUtf8: fc.Arbitrary<{ before: string; bytes: Buffer; after: string }> = fc.record({
  before: fc.string({ maxLength: 8 }),
  bytes: malformedUtf8,
  after: fc.string({ maxLength: 8 }),
});

/** The bytes as `%XX` escapes, for a URL. */
export const percentEscaped = (bytes: Buffer): string =>
  [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
