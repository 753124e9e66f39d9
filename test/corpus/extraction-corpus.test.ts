/**
 * The agreement corpus (docs/testing.md, "The agreement corpus"): every agreement in test/fixtures/agreements/
 * and test/fixtures/contract-corpus/, made by `npm run corpus` in varied layouts and wordings, scanned ones
 * included, read by the real pipeline (the PDF child, OCR, the extraction) and scored against the terms it
 * states. The two sets were written apart, by two people from the same brief; each is scored alone and both
 * together. Overall precision (proposed values that are right) must stay at 0.95 or more and recall (stated
 * values found) at 0.85 or more; the table of each field's figures, and each file's misses, is printed with the
 * test's output.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { readAgreementForExtraction } from "../../src/domain/contracts/agreement-upload.js";
import { extractTerms } from "../../src/domain/contracts/extraction/extract-terms.js";
import type { ExtractedTerms } from "../../src/domain/contracts/extraction/extraction-types.js";
import { type Miss, rates, type Score, scoreExtraction, total } from "../support/extraction-score.js";

const SETS = ["agreements", "contract-corpus"];

interface Case {
  set: string;
  name: string;
  file: string;
  seller: string;
  scanned: boolean;
  expected: ExtractedTerms;
}

const cases: Case[] = SETS.flatMap((set) => {
  const dir = join(import.meta.dirname, "..", "fixtures", set);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => ({
      set,
      name: name.replace(/\.json$/, ""),
      file: join(dir, name.replace(/\.json$/, ".pdf")),
      ...JSON.parse(readFileSync(join(dir, name), "utf8")),
    }));
});

const pct = (value: number) => value.toFixed(3);

it("reads the corpus with precision ≥ 0.95 and recall ≥ 0.85, scanned agreements included", {
  timeout: 900_000,
}, async () => {
  assert.ok(cases.length >= 60, `the corpus holds ${cases.length} agreements`);
  assert.ok(cases.filter((c) => c.scanned).length >= 16, "scanned agreements are in the corpus");
  const score: Score = new Map();
  const scannedScore: Score = new Map();
  const bySet = new Map<string, Score>(SETS.map((set) => [set, new Map()]));
  const report: string[] = [];
  for (const c of cases) {
    const reading = await readAgreementForExtraction("corpus", {
      filename: `${c.name}.pdf`,
      bytes: readFileSync(c.file),
    });
    if (c.scanned)
      assert.ok(
        reading.warnings.some((w) => w.code === "ocr"),
        `${c.set}/${c.name} was read by OCR`,
      );
    const { terms } = extractTerms(reading.items, { sellerNames: [c.seller] });
    const { misses } = scoreExtraction(c.expected, terms, score);
    scoreExtraction(c.expected, terms, bySet.get(c.set));
    if (c.scanned) scoreExtraction(c.expected, terms, scannedScore);
    const show = (m: Miss) =>
      `    ${m.field}: expected ${JSON.stringify(m.expected)}, proposed ${JSON.stringify(m.proposed)}`;
    if (misses.length > 0) report.push(`  ${c.set}/${c.name}`, ...misses.map(show));
  }
  const lines = [
    "| field | proposed | right | stated | found | precision | recall |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const [field, entry] of [
    ...score.entries(),
    ["overall", total(score)] as const,
    ...[...bySet.entries()].map(([set, s]) => [`${set}/ only`, total(s)] as const),
    ["scanned only", total(scannedScore)] as const,
  ]) {
    const { precision, recall } = rates(entry);
    lines.push(
      `| ${field} | ${entry.proposed} | ${entry.correct} | ${entry.expected} | ${entry.found} | ${pct(precision)} | ${pct(recall)} |`,
    );
  }
  console.log(`${cases.length} agreements, ${cases.filter((c) => c.scanned).length} scanned\n${lines.join("\n")}`);
  if (report.length > 0) console.log(`misses:\n${report.join("\n")}`);
  const overall = rates(total(score));
  assert.ok(overall.precision >= 0.95, `precision ${pct(overall.precision)} is below 0.95`);
  assert.ok(overall.recall >= 0.85, `recall ${pct(overall.recall)} is below 0.85`);
});
