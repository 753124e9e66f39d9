// The type of every exact decimal the API answers (`format: decimal` in the OpenAPI document: amounts,
// quantities, rates), as the typed client hands it over: a JsonNumber, whose `text` is the digits the service
// wrote (`1000.00`, `13156.833333320176`). Not `number`: a double would round them, so arithmetic on it does
// not compile (`total + 1`, `total.toFixed(2)`); read it with decimalText, or decimalBig to compute.
import { Big } from "big.js";
import { JsonNumber } from "../platform/exact-json.js";

/**
 * An answer's decimal. A plain `JSON.stringify` of an answer (a log line, a cache, `res.json`) writes it as its
 * digits in a string, `"890.00"`: JSON.stringify cannot write a bare number token it was not given as a double
 * (JSON.rawJSON is not in Node 20), and a double would round it. The client's own request bodies still send it
 * as a bare number (billing-client.ts). docs/decisions.md, "Money".
 */
export class Decimal extends JsonNumber {
  override toJSON(): string {
    return this.text;
  }
}

// openapi-fetch's answer types map every object type field by field (to drop write-only fields), which turns
// a class's methods into `{}`: what an answer's Decimal is typed as there is its `text`, and the helpers take that.
type DecimalRead = Pick<Decimal, "text">;

/** The decimal's digits exactly as the service wrote them. */
export const decimalText = (value: DecimalRead): string => value.text;

/** The decimal as a big.js number, for exact arithmetic. */
export const decimalBig = (value: DecimalRead): Big => new Big(value.text);

/** Whether a value is a decimal the client read (a JsonNumber). */
export const isDecimal = (value: unknown): value is Decimal => value instanceof JsonNumber;
