// What reading an agreement proposes (docs/api.md, "Reading an agreement"): the terms an upload takes, filled
// only with what was found, and for every value the page and the exact text it came from. A value with no
// source is never proposed.
import type { z } from "zod";
import type { contractExtractionSchema } from "../contract-schemas.js";

/** A run of text on a page as the extractor reads it: from the PDF's text layer, or from OCR of a page image. */
export interface ExtractionItem {
  page: number;
  /** Left edge of the run, in PDF points from the page's left. */
  x: number;
  /** Baseline of the run, in PDF points from the page's bottom. */
  y: number;
  text: string;
  /** The run's width in points, when known. */
  width?: number;
  /** The font size (a line's height) in points, when known. */
  height?: number;
  /** OCR only: the engine's confidence in the run, 0–1. Text-layer runs are exact (undefined). */
  confidence?: number;
}

/** What an extraction answers, as its schema (contract-schemas.ts, contractExtractionSchema) says. */
export type ContractExtraction = z.infer<typeof contractExtractionSchema>;
export type ExtractedTerms = ContractExtraction["terms"];
export type ExtractedRule = NonNullable<ExtractedTerms["rules"]>[number];
export type ExtractedField = ContractExtraction["fields"][number];
export type ExtractedValue = ExtractedField["value"];
export type ExtractionWarning = ContractExtraction["warnings"][number];
