/**
 * test/fixtures/scans/: the prose agreement (test/support/agreement-files.ts) scanned, stored as the tests read
 * it. A scan made at run time is drawn by Skia (@napi-rs/canvas), whose output differs by a pixel here and there
 * between processors; OCR of a grainy scan is sensitive to such pixels, so a test that made its scan at run time
 * read differently from one machine to the next. The stored bytes read the same everywhere (`npm run corpus`
 * writes them again; commit them only when a scan's options change).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { proseAgreement, type ScanOptions, scanPdf, STORED_SCANS } from "../test/support/agreement-files.js";

const OUT = join(import.meta.dirname, "..", "test", "fixtures", "scans");
mkdirSync(OUT, { recursive: true });
const prose = await proseAgreement();
for (const [name, options] of Object.entries(STORED_SCANS) as [string, ScanOptions][]) {
  writeFileSync(join(OUT, `${name}.pdf`), await scanPdf(prose, options));
  console.log(`test/fixtures/scans/${name}.pdf`);
}
