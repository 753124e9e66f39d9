import { z } from "zod";
import { JsonNumber } from "../../platform/exact-json.js";
import { Big, CHARGE_DP, MAX_DECIMAL_TEXT, readDecimal } from "./money.js";

/**
 * The zod side of decimals at the JSON edge (docs/api.md, "Numbers"): one input schema for every money
 * amount, quantity and rate a client sends, one output schema for every one the service answers.
 */

// Built on z.unknown() with a refinement rather than z.custom, so that every JSON Schema generator (the
// OpenAPI document's, the MCP SDK's tool listing) can represent it: the schema shown is the one in .meta().

/** A value that may hold a decimal: a JSON number (plain or kept as text) or a string; readDecimal decides. */
export const decimalText = (
  z.unknown().refine((value) => typeof value === "number" || typeof value === "string" || value instanceof JsonNumber, {
    error: (issue) =>
      issue.input === undefined
        ? "Invalid input: expected number, received undefined"
        : "must be a decimal number such as 12.5 (a JSON number or a string)",
  }) as unknown as z.ZodType<number | string | JsonNumber>
).meta({
  anyOf: [
    { type: "number", format: "decimal", minimum: 0, exclusiveMaximum: 1e15 },
    { type: "string", pattern: "^\\s*-?\\d+(\\.\\d+)?([eE][+-]?\\d+)?\\s*$", maxLength: MAX_DECIMAL_TEXT },
  ],
});

/** A non-negative decimal below 10^15 with at most `fractionDigits` decimals, taken exactly or refused. */
export const decimalInput = (what: string, fractionDigits: number = CHARGE_DP) =>
  decimalText.transform((value, ctx): Big => {
    const read = readDecimal(value, what, fractionDigits);
    if (read instanceof Big) return read;
    ctx.addIssue({ code: "custom", message: read.message });
    return z.NEVER;
  });

/**
 * A decimal in a response: a JSON number whose text is the stored decimal (toJsonDecimal in money.ts). The
 * document marks it `format: decimal` (the OpenAPI format registry's fixed-point decimal), which the typed
 * client's generator types as its exact Decimal rather than `number` (scripts/generate-client.mjs).
 */
export const jsonDecimal = (
  z.unknown().refine((value) => value instanceof JsonNumber, "expected a decimal") as unknown as z.ZodType<JsonNumber>
).meta({
  type: "number",
  format: "decimal",
  description: "Exact decimal: the digits are the stored value's, never a binary float's",
});
