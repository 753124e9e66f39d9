// The child process that opens an uploaded PDF (pdf-text.ts starts it): pdfjs-dist runs here, so that a file
// built to unpack into gigabytes, or to parse for minutes, takes this process down and not the service.
// One request, { bytes, textPages }; one answer, a PdfInspection (pdf-text.ts). Plain JavaScript, so that the
// child starts as fast from the sources (tests) as from the build: no TypeScript loader to start first.
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";

/** @param {Uint8Array} bytes @param {number} textPages */
async function inspect(bytes, textPages) {
  // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
  const task = getDocument({
    data: new Uint8Array(bytes),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  try {
    const doc = await task.promise;
    const { info } = await doc.getMetadata();
    if (/** @type {{ EncryptFilterName?: string | null }} */ (info).EncryptFilterName) return { kind: "encrypted" };
    const items = [];
    const textless = [];
    // Every page's content is unpacked and read, its text kept only for the first `textPages`: a page that
    // unpacks into gigabytes must be refused (by the budget) whether its text is wanted or not.
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await doc.getPage(number);
      const content = await page.getTextContent();
      if (number <= textPages) {
        const before = items.length;
        for (const item of content.items) {
          if (!("str" in item) || item.str.trim() === "") continue;
          items.push({
            page: number,
            x: item.transform[4],
            y: item.transform[5],
            text: item.str,
            width: item.width,
            height: item.height,
          });
        }
        if (items.length === before) textless.push(number);
      }
      page.cleanup();
    }
    return { kind: "readable", pageCount: doc.numPages, items, textless };
  } catch (error) {
    if (error?.name === "PasswordException") return { kind: "encrypted" };
    return { kind: "unreadable", reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await task.destroy();
  }
}

process.once("message", (/** @type {{ bytes: Uint8Array, textPages: number }} */ request) => {
  inspect(request.bytes, request.textPages).then(
    (answer) => process.send?.(answer, () => process.exit(0)),
    (error) => process.send?.({ kind: "unreadable", reason: String(error) }, () => process.exit(0)),
  );
});
