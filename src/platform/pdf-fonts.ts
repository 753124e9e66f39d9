// DejaVu Sans for PDF documents: the @fontsource package ships its full glyph set as WOFF, which is unwrapped
// once per process into the TrueType data pdfkit embeds (subset) and fontkit answers glyph questions from.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { inflateSync } from "node:zlib";
import * as fontkit from "fontkit";

const FONT_FILES = {
  regular: "@fontsource/dejavu-sans/files/dejavu-sans-latin-400-normal.woff",
  bold: "@fontsource/dejavu-sans/files/dejavu-sans-latin-700-normal.woff",
} as const;

/** The names the faces are registered under in a document (`registerFont`). */
export const REGULAR = "DejaVuSans";
export const BOLD = "DejaVuSans-Bold";

export interface PdfFonts {
  regular: Buffer;
  bold: Buffer;
  /** Whether both faces have a glyph for the code point. */
  covers(codePoint: number): boolean;
}

let fontCache: PdfFonts | undefined;

/**
 * A WOFF 1.0 font as the TrueType/OpenType file it wraps: each table is inflated once with node's zlib.
 * fontkit can read WOFF itself, but it inflates tables with a pure-JavaScript inflater on every access,
 * which makes laying out and subsetting DejaVu take seconds per document; from the sfnt it takes milliseconds.
 */
function woffToSfnt(woff: Buffer): Buffer {
  if (woff.toString("latin1", 0, 4) !== "wOFF") throw new Error("not a WOFF 1.0 font");
  const flavor = woff.readUInt32BE(4);
  const numTables = woff.readUInt16BE(12);
  const tables: Array<{ tag: number; checksum: number; data: Buffer }> = [];
  for (let i = 0; i < numTables; i++) {
    const entry = 44 + i * 20;
    const offset = woff.readUInt32BE(entry + 4);
    const compLength = woff.readUInt32BE(entry + 8);
    const origLength = woff.readUInt32BE(entry + 12);
    const stored = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? inflateSync(stored) : Buffer.from(stored);
    if (data.length !== origLength) throw new Error("WOFF table has the wrong length");
    tables.push({ tag: woff.readUInt32BE(entry), checksum: woff.readUInt32BE(entry + 16), data });
  }
  tables.sort((a, b) => a.tag - b.tag);
  const pad4 = (n: number): number => (n + 3) & ~3;
  const headerLength = 12 + 16 * numTables;
  const out = Buffer.alloc(tables.reduce((sum, t) => sum + pad4(t.data.length), headerLength));
  let pow2 = 1;
  let log2 = 0;
  while (pow2 * 2 <= numTables) {
    pow2 *= 2;
    log2 += 1;
  }
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(numTables, 4);
  out.writeUInt16BE(pow2 * 16, 6);
  out.writeUInt16BE(log2, 8);
  out.writeUInt16BE(numTables * 16 - pow2 * 16, 10);
  let offset = headerLength;
  tables.forEach((table, i) => {
    const entry = 12 + i * 16;
    out.writeUInt32BE(table.tag, entry);
    out.writeUInt32BE(table.checksum, entry + 4);
    out.writeUInt32BE(offset, entry + 8);
    out.writeUInt32BE(table.data.length, entry + 12);
    table.data.copy(out, offset);
    offset += pad4(table.data.length);
  });
  return out;
}

function openFont(data: Buffer, file: string): fontkit.Font {
  const font = fontkit.create(data);
  if (!("hasGlyphForCodePoint" in font)) throw new Error(`${file} is a font collection, expected a single font`);
  return font;
}

/** DejaVu Sans regular and bold, read once per process. */
export function loadPdfFonts(): PdfFonts {
  if (fontCache === undefined) {
    const require = createRequire(import.meta.url);
    const regular = woffToSfnt(readFileSync(require.resolve(FONT_FILES.regular)));
    const bold = woffToSfnt(readFileSync(require.resolve(FONT_FILES.bold)));
    const faces = [openFont(regular, FONT_FILES.regular), openFont(bold, FONT_FILES.bold)];
    const known = new Map<number, boolean>();
    fontCache = {
      regular,
      bold,
      covers(codePoint) {
        let covered = known.get(codePoint);
        if (covered === undefined) {
          covered = faces.every((face) => face.hasGlyphForCodePoint(codePoint));
          known.set(codePoint, covered);
        }
        return covered;
      },
    };
  }
  return fontCache;
}

/** Shown in place of a character DejaVu Sans has no glyph for (CJK, for one). */
const REPLACEMENT = "\uFFFD";

/**
 * Text as it can be drawn: characters the fonts lack become U+FFFD and control characters become spaces;
 * past `maxChars` characters the text ends in "…". (pdfkit would draw a missing character with the font's
 * .notdef glyph, but it declares that glyph's width unscaled for fonts whose units per em are not 1000, as
 * DejaVu's 2048 are, so the line overflows.)
 */
export function drawableText(text: string, fonts: PdfFonts, maxChars: number): string {
  let out = "";
  let count = 0;
  for (const ch of text) {
    if (++count > maxChars) return `${out}…`;
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) out += " ";
    else if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0xfe0f || fonts.covers(cp)) out += ch;
    else out += REPLACEMENT;
  }
  return out;
}
