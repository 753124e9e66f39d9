// Reading a PDF someone uploaded: whether it opens, whether it is encrypted, and the words on its first
// pages with where they stand. pdfjs-dist (Mozilla's PDF.js) does the parsing, in this process, with eval
// off; it is imported on first use, so a process that never reads an upload never loads it.

/** A run of text on a page, placed by its baseline's start in PDF points (origin bottom left). */
export interface PdfTextItem {
  page: number;
  x: number;
  y: number;
  text: string;
}

export type PdfInspection =
  | { kind: "readable"; pageCount: number; items: PdfTextItem[] }
  | { kind: "encrypted" }
  | { kind: "unreadable"; reason: string };

/** The first bytes of every PDF (ISO 32000-1, 7.5.2); a file that does not start so is not one. */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return bytes.length >= 5 && Buffer.from(bytes.subarray(0, 5)).toString("latin1") === "%PDF-";
}

/**
 * Opens the PDF and reads the text of its first `textPages` pages (0: none, only the checks). Encrypted
 * means any encryption, an owner password included: such a file cannot be shown to everyone who may read
 * the contract, nor its text trusted to be the one printed.
 */
export async function inspectPdf(bytes: Uint8Array, options: { textPages?: number } = {}): Promise<PdfInspection> {
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
  const task = getDocument({ data: new Uint8Array(bytes), verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: false });
  try {
    const doc = await task.promise;
    const { info } = (await doc.getMetadata()) as { info: { EncryptFilterName?: string | null } };
    if (info.EncryptFilterName) return { kind: "encrypted" };
    const items: PdfTextItem[] = [];
    const pages = Math.min(doc.numPages, options.textPages ?? 0);
    for (let number = 1; number <= pages; number++) {
      const page = await doc.getPage(number);
      const content = await page.getTextContent();
      for (const item of content.items) {
        if (!("str" in item) || item.str.trim() === "") continue;
        items.push({ page: number, x: item.transform[4] as number, y: item.transform[5] as number, text: item.str });
      }
      page.cleanup();
    }
    return { kind: "readable", pageCount: doc.numPages, items };
  } catch (error) {
    const name = (error as { name?: string } | null)?.name;
    if (name === "PasswordException") return { kind: "encrypted" };
    return { kind: "unreadable", reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await task.destroy();
  }
}
