// How well an extraction read an agreement (docs/testing.md, "The agreement corpus"): every value it proposed
// is right or wrong (precision), every value the agreement states was found or not (recall), per field.
// Money and rates compare as numbers (exactly, by big.js), names without regard to case or spacing, addresses
// by their words.
import Big from "big.js";
import type { ExtractedRule, ExtractedTerms } from "../../src/domain/contracts/extraction/extraction-types.js";

export interface FieldScore {
  proposed: number;
  correct: number;
  expected: number;
  found: number;
}

export type Score = Map<string, FieldScore>;

/** A wrong or missed value, for the report. */
export interface Miss {
  field: string;
  expected: unknown;
  proposed: unknown;
}

const words = (text: string) => text.toLowerCase().normalize("NFKC").replace(/\s+/g, " ").trim();
const tokens = (text: string) =>
  text
    .toLowerCase()
    .normalize("NFKC")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
const sameNumber = (a: unknown, b: unknown) => {
  try {
    return new Big(String(a)).eq(new Big(String(b)));
  } catch {
    return false;
  }
};

/** A rule's price: its model and every amount that prices it. */
function samePrice(a: ExtractedRule, b: ExtractedRule): boolean {
  if (a.model !== b.model) return false;
  for (const key of ["amount", "rate", "fixed_fee", "min_fee", "max_fee", "package_size"] as const) {
    if ((a[key] === undefined) !== (b[key] === undefined)) return false;
    if (a[key] !== undefined && !sameNumber(a[key], b[key])) return false;
  }
  const [ta, tb] = [a.tiers ?? [], b.tiers ?? []];
  return (
    ta.length === tb.length &&
    ta.every(
      (tier, k) =>
        (tier.up_to === null ? tb[k]!.up_to === null : sameNumber(tier.up_to, tb[k]!.up_to)) &&
        sameNumber(tier.unit_amount, tb[k]!.unit_amount),
    )
  );
}

export function scoreExtraction(expected: ExtractedTerms, proposed: ExtractedTerms, score: Score = new Map()) {
  const misses: Miss[] = [];
  const count = (field: string, e: unknown, p: unknown, same: (a: unknown, b: unknown) => boolean) => {
    const entry = score.get(field) ?? { proposed: 0, correct: 0, expected: 0, found: 0 };
    score.set(field, entry);
    const hasE = e !== undefined;
    const hasP = p !== undefined;
    if (hasE) entry.expected++;
    if (hasP) entry.proposed++;
    const right = hasE && hasP && same(e, p);
    if (right) {
      entry.correct++;
      entry.found++;
    }
    if ((hasE || hasP) && !right) misses.push({ field, expected: e, proposed: p });
  };
  const exact = (a: unknown, b: unknown) => a === b;
  count(
    "customer.name",
    expected.customer?.name,
    proposed.customer?.name,
    (a, b) => words(String(a)) === words(String(b)),
  );
  count(
    "customer.email",
    expected.customer?.email,
    proposed.customer?.email,
    (a, b) => words(String(a)) === words(String(b)),
  );
  count(
    "customer.address",
    expected.customer?.address,
    proposed.customer?.address,
    (a, b) => tokens(String(a)) === tokens(String(b)),
  );
  count("contract_id", expected.contract_id, proposed.contract_id, exact);
  count("start_date", expected.start_date, proposed.start_date, exact);
  count("end_date", expected.end_date, proposed.end_date, exact);
  count("currency", expected.currency, proposed.currency, exact);
  count("payment_terms_days", expected.payment_terms_days, proposed.payment_terms_days, exact);
  const ofType = (terms: ExtractedTerms, type: string) => (terms.rules ?? []).find((r) => r.type === type);
  count("minimum", ofType(expected, "minimum")?.amount, ofType(proposed, "minimum")?.amount, sameNumber);
  count("subscription", ofType(expected, "subscription")?.amount, ofType(proposed, "subscription")?.amount, sameNumber);

  const expectedUsage = (expected.rules ?? []).filter((r) => r.type === "usage");
  const proposedUsage = (proposed.rules ?? []).filter((r) => r.type === "usage");
  const matched = new Set<ExtractedRule>();
  for (const rule of expectedUsage) {
    const match =
      proposedUsage.find((p) => !matched.has(p) && p.metric === rule.metric) ??
      proposedUsage.find((p) => !matched.has(p) && words(p.name) === words(rule.name));
    if (match) matched.add(match);
    const label = `rule ${rule.name}`;
    count("rule.name", rule.name, match?.name, (a, b) => words(String(a)) === words(String(b)));
    count("rule.metric", rule.metric, match?.metric, exact);
    count("rule.price", rule, match, (a, b) => samePrice(a as ExtractedRule, b as ExtractedRule));
    count("rule.monthly_cap", rule.monthly_cap, match?.monthly_cap, sameNumber);
    count("rule.counterparty", rule.counterparty, match?.counterparty, (a, b) => words(String(a)) === words(String(b)));
    void label;
  }
  // A usage price the agreement does not state: each of its values is wrong.
  for (const rule of proposedUsage.filter((p) => !matched.has(p))) {
    count("rule.name", undefined, rule.name, exact);
    count("rule.metric", undefined, rule.metric, exact);
    count("rule.price", undefined, rule, exact);
    if (rule.monthly_cap !== undefined) count("rule.monthly_cap", undefined, rule.monthly_cap, exact);
    if (rule.counterparty !== undefined) count("rule.counterparty", undefined, rule.counterparty, exact);
  }
  return { score, misses };
}

/** Precision and recall of a field's counts (1 when there was nothing to propose or to find). */
export function rates(entry: FieldScore): { precision: number; recall: number } {
  return {
    precision: entry.proposed === 0 ? 1 : entry.correct / entry.proposed,
    recall: entry.expected === 0 ? 1 : entry.found / entry.expected,
  };
}

export function total(score: Score): FieldScore {
  const sum = { proposed: 0, correct: 0, expected: 0, found: 0 };
  for (const entry of score.values()) {
    sum.proposed += entry.proposed;
    sum.correct += entry.correct;
    sum.expected += entry.expected;
    sum.found += entry.found;
  }
  return sum;
}
