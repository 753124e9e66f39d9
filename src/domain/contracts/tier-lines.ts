import type { DecimalWords } from "./rule-price-wording.js";

// A graduated or volume rule's tiers as lines of text, one tier a line: "up_to unit_amount [flat_amount]", the
// last tier's up_to "-" or left out (it has no upper bound). The one text form of tiers: the dashboard's rule
// form reads it into the API's `tiers`, and the version history writes a change of tiers in it. The numbers
// stay the text typed, exactly; whether they make valid tiers (order, bounds, money) is normalizeRule's to say.

/** A tier as its line gives it: the numbers as typed, `up_to` null on an unbounded tier. */
export interface TierLine {
  up_to: string | null;
  unit_amount: string;
  flat_amount?: string;
}

/** The format, for a form's hint and a refusal's words. */
export const TIER_LINE_FORMAT = "up_to unit_amount [flat_amount]";

/** The word for "no upper bound" in place of up_to. */
const UNBOUNDED = "-";

/** A decimal as a person types one: digits, at most one point. Thousands separators are not. */
const NUMBER = /^\d+(?:\.\d+)?$|^\d*\.\d+$/;

const isNumber = (word: string | undefined): word is string => word !== undefined && NUMBER.test(word);

/**
 * The tiers the lines give, in order, or the first malformed line: "1000 0.10", "10000 0.08 5.00", "- 0.05" (or
 * "0.05"). Blank lines are skipped; no line at all gives no tiers (undefined).
 */
export function readTierLines(text: string): { tiers?: TierLine[]; error?: string } {
  const tiers: TierLine[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const words = line
      .trim()
      .split(/\s+/)
      .filter((word) => word !== "");
    if (words.length === 0) continue;
    const [upTo, unit, flat] = words.length === 1 ? [UNBOUNDED, ...words] : words;
    const bound = upTo === UNBOUNDED ? null : upTo;
    if (
      words.length > 3 ||
      (bound !== null && !isNumber(bound)) ||
      !isNumber(unit) ||
      !(flat === undefined || isNumber(flat))
    ) {
      return {
        error: `line ${index + 1}, “${line.trim()}”, is not “${TIER_LINE_FORMAT}”: plain numbers such as 1000 0.10 5.00, with ${UNBOUNDED} for the last tier's up_to`,
      };
    }
    tiers.push({ up_to: bound ?? null, unit_amount: unit, ...(flat === undefined ? {} : { flat_amount: flat }) });
  }
  return tiers.length === 0 ? {} : { tiers };
}

/** Tiers as lines readTierLines reads back: "1000 0.10", "10000 0.08 5.00", "- 0.05". */
export function tierLines(
  tiers: readonly { up_to?: DecimalWords | null; unit_amount: DecimalWords; flat_amount?: DecimalWords | null }[],
): string[] {
  return tiers.map((tier) =>
    [tier.up_to ?? UNBOUNDED, tier.unit_amount, ...(tier.flat_amount == null ? [] : [tier.flat_amount])]
      .map(String)
      .join(" "),
  );
}
