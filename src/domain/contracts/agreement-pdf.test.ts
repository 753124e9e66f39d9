import assert from "node:assert/strict";
import { pdfText } from "../../../test/support/pdf-text.js";
import { describe, it } from "node:test";
import { inflateSync } from "node:zlib";
import { type AgreementPdfInput, renderAgreementPdf } from "./agreement-pdf.js";
import { agreementInput } from "../../../test/fixtures/agreement-input.js";

// ---------------------------------------------------------------------------------------------------------
// A small PDF text extractor, enough for what pdfkit writes: every object is in the clear (no object
// streams), content streams are Flate-compressed, and text is drawn with Identity-H fonts whose glyph ids
// map back to Unicode through each font's ToUnicode CMap. It decodes the glyph strings of Tj/TJ operators
// page by page, so the assertions read the text a viewer would show, not the bytes of the file.

interface PdfObject {
  dict: string;
  stream?: Buffer;
}

function parseObjects(pdf: Buffer): Map<number, PdfObject> {
  const source = pdf.toString("latin1");
  const objects = new Map<number, PdfObject>();
  const header = /(\d+) 0 obj\s*/g;
  let match: RegExpExecArray | null;
  while ((match = header.exec(source)) !== null) {
    const start = match.index + match[0].length;
    const end = source.indexOf("endobj", start);
    assert.ok(end > start, `object ${match[1]} is not closed`);
    const body = source.slice(start, end);
    const streamAt = body.indexOf("stream");
    const object: PdfObject = { dict: streamAt >= 0 ? body.slice(0, streamAt) : body };
    if (streamAt >= 0) {
      const dataStart = start + streamAt + "stream".length + (source[start + streamAt + 6] === "\r" ? 2 : 1);
      const dataEnd = source.lastIndexOf("endstream", end);
      const raw = pdf.subarray(dataStart, dataEnd);
      object.stream = /\/Filter\s*\/FlateDecode/.test(object.dict) ? inflateSync(raw) : raw;
    }
    objects.set(Number(match[1]), object);
    header.lastIndex = end;
  }
  return objects;
}

function utf16beHex(spaced: string): string {
  const hex = spaced.replace(/\s+/g, "");
  let out = "";
  for (let i = 0; i + 4 <= hex.length; i += 4) out += String.fromCharCode(parseInt(hex.slice(i, i + 4), 16));
  return out;
}

/** glyph id (hex, 4 digits) → text, from a ToUnicode CMap. */
function parseToUnicode(cmap: string): Map<number, string> {
  const map = new Map<number, string>();
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, src, dst] of (block[1] ?? "").matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F\s]*)>/g)) {
      map.set(parseInt(src ?? "0", 16), utf16beHex(dst ?? ""));
    }
  }
  for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    const ranges = /<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(\[[^\]]*\]|<[0-9a-fA-F\s]*>)/g;
    for (const [, lo, hi, dst] of (block[1] ?? "").matchAll(ranges)) {
      const from = parseInt(lo ?? "0", 16);
      const to = parseInt(hi ?? "0", 16);
      if (dst?.startsWith("[")) {
        // A ligature maps one glyph to several code units: <0066 0066> is "ff".
        const items = [...dst.matchAll(/<([0-9a-fA-F\s]*)>/g)].map((m) => utf16beHex(m[1] ?? ""));
        items.forEach((text, i) => map.set(from + i, text));
      } else {
        const first = dst?.slice(1, -1) ?? "";
        const base = utf16beHex(first);
        for (let gid = from; gid <= to; gid++) {
          const last = base.charCodeAt(base.length - 1) + (gid - from);
          map.set(gid, base.slice(0, -1) + String.fromCharCode(last));
        }
      }
    }
  }
  return map;
}

function ref(dict: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+) 0 R`).exec(dict);
  return m === null ? undefined : Number(m[1]);
}

/** The text of each page, one line per text object (BT … ET). */
function extractPages(pdf: Buffer): string[] {
  const objects = parseObjects(pdf);
  const get = (n: number | undefined): PdfObject => {
    const object = n === undefined ? undefined : objects.get(n);
    assert.ok(object !== undefined, `missing object ${n}`);
    return object;
  };
  const rootRef = /\/Root\s+(\d+) 0 R/.exec(pdf.toString("latin1"));
  const pagesRef = ref(get(Number(rootRef?.[1])).dict, "Pages");
  const kids = /\/Kids\s*\[([^\]]*)\]/.exec(get(pagesRef).dict)?.[1] ?? "";
  const pageRefs = [...kids.matchAll(/(\d+) 0 R/g)].map((m) => Number(m[1]));

  const unicodeByFontObject = new Map<number, Map<number, string>>();
  const fontMap = (fontObject: number): Map<number, string> => {
    let map = unicodeByFontObject.get(fontObject);
    if (map === undefined) {
      const toUnicode = ref(get(fontObject).dict, "ToUnicode");
      map = toUnicode === undefined ? new Map() : parseToUnicode(get(toUnicode).stream?.toString("latin1") ?? "");
      unicodeByFontObject.set(fontObject, map);
    }
    return map;
  };

  return pageRefs.map((pageRef) => {
    const page = get(pageRef).dict;
    const resourcesRef = ref(page, "Resources");
    const resources = resourcesRef === undefined ? page : get(resourcesRef).dict;
    const fontDict = /\/Font\s*<<([\s\S]*?)>>/.exec(resources)?.[1] ?? "";
    const fonts = new Map([...fontDict.matchAll(/\/(\S+)\s+(\d+) 0 R/g)].map((m) => [m[1] ?? "", Number(m[2])]));
    const content = get(ref(page, "Contents")).stream?.toString("latin1") ?? "";

    const lines: string[] = [];
    let line = "";
    let current = new Map<number, string>();
    const decode = (hex: string): string => {
      let out = "";
      for (let i = 0; i + 4 <= hex.length; i += 4) out += current.get(parseInt(hex.slice(i, i + 4), 16)) ?? "";
      return out;
    };
    const tokens = /\/(\S+)\s+[\d.]+\s+Tf|\[((?:[^\]])*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj|\bBT\b|\bET\b/g;
    for (const m of content.matchAll(tokens)) {
      if (m[1] !== undefined) {
        const fontObject = fonts.get(m[1]);
        current = fontObject === undefined ? new Map() : fontMap(fontObject);
      } else if (m[2] !== undefined) {
        for (const s of m[2].matchAll(/<([0-9a-fA-F]*)>/g)) line += decode(s[1] ?? "");
      } else if (m[3] !== undefined) {
        line += decode(m[3]);
      } else if (m[0] === "ET") {
        lines.push(line);
        line = "";
      }
    }
    return lines.join("\n");
  });
}

/** A string of the document information dictionary (pdfkit writes each value as its own object). */
function infoString(pdf: Buffer, key: string): string {
  const objects = parseObjects(pdf);
  const infoRef = /\/Info\s+(\d+) 0 R/.exec(pdf.toString("latin1"))?.[1];
  const info = objects.get(Number(infoRef))?.dict ?? "";
  const valueRef = ref(info, key);
  const raw = ((valueRef === undefined ? info.split(`/${key}`)[1] : objects.get(valueRef)?.dict) ?? "").trim();
  let bytes: string;
  if (raw.startsWith("<")) {
    bytes = Buffer.from(/<([0-9a-fA-F\s]*)>/.exec(raw)?.[1]?.replace(/\s+/g, "") ?? "", "hex").toString("latin1");
  } else {
    const literal = /^\(((?:\\[\s\S]|[^\\)])*)\)/.exec(raw)?.[1] ?? "";
    const escapes: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" };
    bytes = literal.replace(/\\([0-7]{1,3}|[\s\S])/g, (_, e: string) =>
      /^[0-7]+$/.test(e) ? String.fromCharCode(parseInt(e, 8)) : (escapes[e] ?? e),
    );
  }
  if (bytes.startsWith("\u00fe\u00ff")) return utf16beHex(Buffer.from(bytes.slice(2), "latin1").toString("hex"));
  return bytes;
}

// ---------------------------------------------------------------------------------------------------------

function baseInput(overrides: Partial<AgreementPdfInput> = {}): AgreementPdfInput {
  return agreementInput({
    contractId: "acme-corp-test",
    startDate: "2025-01-01",
    endDate: "2025-12-31",
    programVersion: 3,
    rules: [
      {
        id: "rule-sub",
        name: "Platform fee",
        type: "subscription",
        model: "flat",
        amount: "500.00",
        frequency: "monthly",
      },
      { id: "rule-dom", name: "Domestic wire", type: "usage", model: "flat", amount: "20", metric: "domestic_wire" },
      {
        id: "rule-vol",
        name: "Card volume",
        type: "usage",
        model: "percentage",
        rate: "0.05",
        metric: "card_volume",
        monthly_cap: "12500",
        counterparty: "Initech",
      },
    ],
    minimumAmount: "1000.00",
    generatedAt: new Date("2025-01-15T10:30:00.000Z"),
    ...overrides,
  });
}

function manyRules(count: number): AgreementPdfInput["rules"] {
  return Array.from({ length: count }, (_, i) => {
    const n = String(i + 1).padStart(2, "0");
    return i % 2 === 0
      ? {
          id: `r${n}`,
          name: `Usage rule ${n}`,
          type: "usage",
          model: "flat",
          amount: `${i + 1}.50`,
          metric: `metric_${n}`,
        }
      : {
          id: `r${n}`,
          name: `Percent rule ${n}`,
          type: "usage",
          model: "percentage",
          rate: "0.0125",
          metric: `metric_${n}`,
        };
  });
}

function pageCount(pdf: Buffer): number {
  return (pdf.toString("latin1").match(/\/Type\s*\/Page\b(?!s)/g) ?? []).length;
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe("renderAgreementPdf", () => {
  it("produces a complete PDF whose text carries the contract's identity and terms", async () => {
    const pdf = await renderAgreementPdf(baseInput());
    assert.ok(Buffer.isBuffer(pdf));
    assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-");
    assert.match(pdf.subarray(-16).toString("latin1"), /%%EOF\r?\n?$/);
    assert.equal(pageCount(pdf), 1);

    const text = extractPages(pdf).join("\n");
    for (const expected of [
      "Usage-based services agreement",
      "acme-corp-test",
      "CN-000001",
      "Acme Billing Inc.",
      "Globex Corporation",
      "1 January 2025 – 31 December 2025",
      "Monthly",
      "$1,000.00", // monthly minimum
      "$500.00", // flat subscription
      "$20.00 per unit", // flat usage
      "5% of the event's value", // percentage rule 0.05
      "$12,500.00", // monthly cap
      "Initech", // counterparty
      "domestic_wire",
      "Pricing program version 3",
      "Generated 2025-01-15 10:30 UTC",
      "Page 1 of 1",
    ]) {
      assert.ok(text.includes(expected), `missing ${JSON.stringify(expected)} in:\n${text}`);
    }
    assert.ok(!text.includes("SAMPLE"), "a real agreement carries no sample mark");
  });

  it("marks a sample contract and shows an open-ended term", async () => {
    const pdf = await renderAgreementPdf(baseInput({ sample: true, endDate: null, minimumAmount: null }));
    const text = extractPages(pdf).join("\n");
    assert.ok(text.includes("SAMPLE — for testing"));
    assert.ok(text.includes("1 January 2025 – open-ended"));
    assert.ok(text.includes("No monthly minimum commitment applies."));
    assert.ok(!text.includes("$1,000.00"));
  });

  it("is deterministic and stamps the metadata from generatedAt", async () => {
    const input = baseInput({ sample: true });
    const first = await renderAgreementPdf(input);
    const second = await renderAgreementPdf(structuredClone(input));
    assert.ok(first.equals(second), "same input, same bytes");

    assert.equal(infoString(first, "CreationDate"), "D:20250115103000Z");
    assert.equal(infoString(first, "ModDate"), "D:20250115103000Z");
    assert.equal(infoString(first, "Title"), "Usage-based services agreement CN-000001 (SAMPLE)");
    assert.equal(infoString(first, "Author"), "Acme Billing Inc.");

    const later = await renderAgreementPdf({ ...input, generatedAt: new Date("2025-02-01T00:00:00Z") });
    assert.ok(!later.equals(first));
  });

  it("renders accented names and survives CJK the font cannot draw", async () => {
    const pdf = await renderAgreementPdf(
      baseInput({ companyName: "Société Générale", customerName: "株式会社 Ōkami Müller", contractId: "sg-ōkami" }),
    );
    assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-");
    const text = extractPages(pdf).join("\n");
    assert.ok(text.includes("Société Générale"));
    assert.ok(text.includes("Ōkami Müller"));
    assert.ok(text.includes("sg-ōkami"));
    // DejaVu Sans has no CJK glyphs: each such character is drawn as U+FFFD rather than failing.
    assert.ok(text.includes("\uFFFD\uFFFD\uFFFD\uFFFD Ōkami Müller"), text);
    // The document metadata keeps the exact names.
    assert.ok(infoString(pdf, "Subject").includes("株式会社 Ōkami Müller"), infoString(pdf, "Subject"));
    assert.equal(infoString(pdf, "Author"), "Société Générale");
  });

  it("lists every rule of a 20-rule program, continuing the table on the next page when needed", async () => {
    const pdf = await renderAgreementPdf(baseInput({ rules: manyRules(20) }));
    const pages = extractPages(pdf);
    assert.ok(pages.length >= 1 && pages.length <= 2, `expected one or two pages, got ${pages.length}`);
    const text = pages.join("\n");
    for (let i = 1; i <= 20; i++) {
      const n = String(i).padStart(2, "0");
      assert.ok(text.includes(i % 2 === 1 ? `Usage rule ${n}` : `Percent rule ${n}`), `rule ${n} missing`);
    }
    assert.ok(text.includes("$19.50 per unit"));
    assert.ok(text.includes("1.25%"));
    pages.forEach((page, i) => assert.ok(page.includes(`Page ${i + 1} of ${pages.length}`)));
  });

  it("repeats the table header on each page of a long program", async () => {
    const pdf = await renderAgreementPdf(baseInput({ rules: manyRules(60) }));
    const pages = extractPages(pdf);
    assert.ok(pages.length >= 3, `expected the table to span pages, got ${pages.length}`);
    const tablePages = pages.filter((page) => page.includes("Usage rule") || page.includes("Percent rule"));
    assert.ok(tablePages.length >= 2);
    for (const page of tablePages)
      assert.ok(occurrences(page, "Counterparty\n") === 1, "one header row per table page");
    assert.ok(pages.slice(1).some((page) => page.includes("Pricing (continued)")));
    const text = pages.join("\n");
    assert.ok(text.includes("Usage rule 59") && text.includes("Percent rule 60"));
    assert.ok(pages.at(-1)?.includes(`Page ${pages.length} of ${pages.length}`));
  });

  it("handles a program without rules and odd values without throwing", async () => {
    const pdf = await renderAgreementPdf(
      baseInput({
        rules: [
          { id: "r-null-name", name: null, type: "one_time", model: "flat", amount: "abc" },
          {
            id: "r-jpy",
            name: "Yen fee",
            type: "usage",
            model: "flat",
            amount: "1500",
            currency: "JPY",
            metric: "calls",
          },
          { id: "r-long", name: "x".repeat(5000), type: "usage", model: "percentage", rate: null, metric: null },
        ],
        customerName: "Line\nbreak\u0000name",
      }),
    );
    const text = extractPages(pdf).join("\n");
    assert.ok(text.includes("r-null-name"), "a rule without a name shows its id");
    assert.ok(text.includes("¥1,500 per unit"), "zero-decimal currencies print no minor unit");
    assert.ok(text.includes("Line break name"));

    const empty = extractPages(await renderAgreementPdf(baseInput({ rules: [] }))).join("\n");
    assert.ok(empty.includes("no pricing rules"));

    await assert.rejects(renderAgreementPdf(baseInput({ generatedAt: new Date(Number.NaN) })), TypeError);
  });

  it("agrees with the service's own PDF reader (pdfjs-dist)", async () => {
    const text = await pdfText(await renderAgreementPdf(baseInput({ customerName: "Société Générale" })));
    for (const expected of [
      "Usage-based services agreement",
      "acme-corp-test",
      "CN-000001",
      "Société Générale",
      "5%",
    ]) {
      assert.ok(text.includes(expected), `the PDF reader is missing ${JSON.stringify(expected)}`);
    }
  });
});

describe("agreement PDF with tiered prices", () => {
  it("words a graduated rule's tiers, wrapped within the price column", async () => {
    const words =
      "graduated: $0.10 per unit up to 1,000; $0.08 per unit up to 10,000 + $5.00 on entering; $0.05 per unit above 10,000";
    const pdf = await renderAgreementPdf(
      baseInput({
        rules: [
          {
            id: "rule-tiers",
            name: "Card payments",
            type: "usage",
            model: "graduated",
            metric: "card_payment",
            tiers: [
              { up_to: "1000", unit_amount: "0.10", flat_amount: null },
              { up_to: "10000", unit_amount: "0.08", flat_amount: "5.00" },
              { up_to: null, unit_amount: "0.05", flat_amount: null },
            ],
          },
        ],
      }),
    );
    const lines = (await pdfText(pdf)).replace(/\u00a0/g, " ").split("\n");
    const first = lines.findIndex((line) => line.includes("graduated:"));
    assert.ok(first >= 0, `the tiers' words are in the PDF\n${lines.join("\n")}`);
    // The words run over several lines of the Price column; the row's first line ends with its empty cap and
    // counterparty cells.
    const head = lines[first] ?? "";
    const read = [head.slice(head.indexOf("graduated:")).replace(/(\s—)+$/, ""), ...lines.slice(first + 1)].join(" ");
    const squeeze = (text: string) => text.replace(/\s+/g, "");
    assert.ok(squeeze(read).includes(squeeze(words)), `every tier's words in order\n${lines.join("\n")}`);
    assert.ok(!lines.some((line) => line.includes(words)), "the words wrap");
  });
});

describe("agreement PDF with the largest amounts", () => {
  it("keeps every price's amount and every monthly cap whole on one line", async () => {
    const largest = "999999999999999.999999999999";
    const pdf = await renderAgreementPdf(
      baseInput({
        currency: "CHF",
        rules: [
          {
            id: "rule-big",
            name: "Largest per-unit price",
            type: "usage",
            model: "flat",
            amount: largest,
            metric: "domestic_wire",
            monthly_cap: "99999999999999.99",
          },
          {
            id: "rule-sub",
            name: "Platform fee",
            type: "subscription",
            model: "flat",
            amount: "99999999999999.99",
            frequency: "monthly",
          },
        ],
        minimumAmount: "99999999999999.99",
      }),
    );
    const text = (await pdfText(pdf)).replace(/\u00a0/g, " ");
    const lines = text.split("\n");
    // The per-unit price once; the cap, the fee and the minimum each on a line of their own.
    for (const [figure, times] of [
      ["CHF 999,999,999,999,999.999999999999", 1],
      ["CHF 99,999,999,999,999.99", 3],
    ] as const) {
      assert.ok(lines.filter((line) => line.includes(figure)).length >= times, `${figure} whole on one line\n${text}`);
    }
    assert.ok(
      lines.some((line) => /Name\s+Type\s+Metric\s+Price\s+Monthly cap\s+Counterparty/.test(line)),
      `the header's words whole\n${text}`,
    );
  });
});
