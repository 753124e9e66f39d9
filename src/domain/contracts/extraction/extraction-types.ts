// What reading an agreement proposes (docs/api.md, "Reading an agreement"): the terms an upload takes, filled
// only with what was found, and for every value the page and the exact text it came from. A value with no
// source is never proposed.

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

/** A usage, subscription or minimum price as proposed: the fields of a pricing rule an upload takes. */
export interface ExtractedRule {
  name: string;
  type: "usage" | "subscription" | "minimum";
  model: "flat" | "percentage" | "graduated" | "volume" | "package";
  metric?: string;
  amount?: string;
  rate?: string;
  frequency?: "monthly";
  fixed_fee?: string;
  min_fee?: string;
  max_fee?: string;
  monthly_cap?: string;
  counterparty?: string;
  tiers?: Array<{ up_to: string | null; unit_amount: string; flat_amount?: string | null }>;
  package_size?: string;
}

/** The terms of an upload (contract-schemas.ts, uploadTermsInput), each present only when it was found. */
export interface ExtractedTerms {
  customer?: { name?: string; email?: string; address?: string };
  contract_id?: string;
  start_date?: string; // YYYY-MM-DD
  end_date?: string | null; // null: the agreement says it is open-ended
  currency?: string; // ISO 4217
  payment_terms_days?: number;
  rules?: ExtractedRule[];
}

/** JSON a field's value can be. */
export type ExtractedValue = string | number | null | ExtractedRule["tiers"];

/** One proposed value and where it came from. */
export interface ExtractedField {
  /** The value's path in `terms`, dotted as an upload's errors name fields: "customer.name", "rules.2.rate". */
  field: string;
  value: ExtractedValue;
  /** 0–1: how sure the reading is (lower for OCR text and for values read from loose wording). */
  confidence: number;
  page: number;
  /** The exact text the value was read from, as it stands on the page (one line or a few). */
  source_text: string;
}

export type ExtractionWarningCode =
  | "no_text" // a page had no text layer and no image to read
  | "ocr" // pages without text were read by OCR
  | "ocr_skipped" // pages without text beyond the OCR limit were not read
  | "ocr_busy" // OCR could not start within its wait: the text pages were read, the scanned ones not
  | "ocr_failed" // OCR ran out of its budget on a page
  | "pages_skipped" // pages beyond the reading limit were not read
  | "date_order" // a date like 05/01/2026 was read in the order the document's locale implies
  | "nothing_found"; // the document was read but no term was recognised

export interface ExtractionWarning {
  code: ExtractionWarningCode;
  message: string;
  /** The pages the warning is about, when it is about pages. */
  pages?: number[];
}

export interface ContractExtraction {
  object: "contract_extraction";
  terms: ExtractedTerms;
  fields: ExtractedField[];
  warnings: ExtractionWarning[];
}
