import assert from "node:assert/strict";
import { inspectPdf } from "../../src/platform/pdf-text.js";

/**
 * A PDF's text as the service itself reads it (pdf-text.ts: pdfjs-dist in a child process), laid out as on the
 * page: each page's runs of text grouped into lines by their baseline, top to bottom, each line's runs left to
 * right with a space between them, pages one after the other. So a test reads what a viewer shows, and needs
 * no tool beyond the service's own dependencies.
 */
export async function pdfText(pdf: Buffer): Promise<string> {
  const inspection = await inspectPdf(pdf, { queueKey: "tests", textPages: Number.MAX_SAFE_INTEGER });
  assert.equal(inspection.kind, "readable", `the PDF reads: ${JSON.stringify(inspection)}`);
  if (inspection.kind !== "readable") return "";
  const lines = new Map<string, { page: number; y: number; runs: { x: number; text: string }[] }>();
  for (const item of inspection.items) {
    if (item.text.trim() === "") continue;
    // A baseline within half a point of another's is the same line (runs of one line share it exactly).
    const y = Math.round(item.y * 2) / 2;
    const key = `${item.page}:${y}`;
    const line = lines.get(key) ?? { page: item.page, y, runs: [] };
    line.runs.push({ x: item.x, text: item.text });
    lines.set(key, line);
  }
  return [...lines.values()]
    .sort((a, b) => a.page - b.page || b.y - a.y)
    .map((line) =>
      line.runs
        .sort((a, b) => a.x - b.x)
        .map((run) => run.text)
        .join(" "),
    )
    .join("\n");
}
