import type { ErrorDetail } from "../kernel/errors.js";
import { ValidationError } from "../kernel/errors.js";
import { uploadTermsInput, type UploadTerms } from "./contract-schemas.js";
import { normalizeRule, type PricingRule } from "./pricing-rule.js";

/** An upload's terms, checked, with each of their rules normalized. */
export interface CheckedTerms {
  terms: UploadTerms;
  rules: PricingRule[];
}

/** The terms and each of their rules checked, before anything is read or written. */
export function checkUploadTerms(raw: unknown): CheckedTerms {
  const terms = parseUploadTerms(raw);
  return { terms, rules: normalizeUploadRules(terms) };
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

/** Every rule through normalizeRule, as addPricingRule does, with each error under `rules.{i}`. */
function normalizeUploadRules(terms: UploadTerms): PricingRule[] {
  const errors: ErrorDetail[] = [];
  const rules: PricingRule[] = [];
  const ids = new Set<string>();
  terms.rules.forEach((fields, index) => {
    if (fields.id !== undefined && ids.has(fields.id))
      errors.push({ path: `rules.${index}.id`, message: "is used by another rule of this contract" });
    if (fields.id !== undefined) ids.add(fields.id);
    const result = normalizeRule(fields, terms.currency);
    if (result.errors)
      errors.push(...result.errors.map((e) => ({ path: `rules.${index}.${e.path}`, message: e.message })));
    else rules.push(result.rule);
  });
  if (errors.length > 0) {
    throw new ValidationError(
      `Invalid pricing rule: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
      "invalid_pricing_rule",
      errors,
    );
  }
  return rules;
}
