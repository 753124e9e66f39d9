import { ValidationError } from "../kernel/errors.js";
import { uploadTermsInput, type UploadTerms } from "./contract-schemas.js";
import { normalizeProgram, type PricingRule } from "./pricing-rule.js";

/** An upload's terms, checked, with each of their rules normalized. */
export interface CheckedTerms {
  terms: UploadTerms;
  rules: PricingRule[];
}

/** The terms and each of their rules checked, before anything is read or written. */
export function checkUploadTerms(raw: unknown): CheckedTerms {
  const terms = parseUploadTerms(raw);
  return { terms, rules: normalizeProgram(terms.rules, terms.currency) };
}

/** The terms through their schema; a refusal names each field, relative to the terms object. */
function parseUploadTerms(raw: unknown): UploadTerms {
  const result = uploadTermsInput.safeParse(raw);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: /received undefined/.test(issue.message) ? "is required" : issue.message,
  }));
  const first = details[0]!;
  throw new ValidationError(
    `Invalid terms. ${first.path ? `${first.path}: ` : ""}${first.message}`,
    "invalid_terms",
    details,
  );
}
