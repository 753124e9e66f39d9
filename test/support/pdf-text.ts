import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether poppler's pdftotext is installed (.ci/run installs it). */
export const hasPdftotext = spawnSync("pdftotext", ["-v"]).error === undefined;

/** A PDF's text as poppler reads it, laid out as on the page. */
export function pdftotext(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), "pdf-text-"));
  try {
    const file = join(dir, "document.pdf");
    writeFileSync(file, pdf);
    const run = spawnSync("pdftotext", ["-layout", "-enc", "UTF-8", file, "-"], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
