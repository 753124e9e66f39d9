// The type of every exact decimal the API answers (`format: decimal` in the OpenAPI document: amounts,
// quantities, rates), as the typed client hands it over: a JsonNumber, whose `text` is the digits the service
// wrote (`1000.00`, `13156.833333320176`). Not `number`: a double would round them, so arithmetic on it does
// not compile (`total + 1`, `total.toFixed(2)`); read it with decimalText, or decimalBig to compute.
import { Big } from "big.js";
import { JsonNumber } from "../platform/exact-json.js";

export type Decimal = JsonNumber;

// openapi-fetch's answer types map every object type field by field (to drop write-only fields), which turns
// a class's methods into `{}`: what an answer's Decimal is typed as there is its `text`, and the helpers take that.
type DecimalRead = Pick<Decimal, "text">;

/** The decimal's digits exactly as the service wrote them. */
export const decimalText = (value: DecimalRead): string => value.text;

/** The decimal as a big.js number, for exact arithmetic. */
export const decimalBig = (value: DecimalRead): Big => new Big(value.text);

/** Whether a value is a decimal the client read (a JsonNumber). */
export const isDecimal = (value: unknown): value is Decimal => value instanceof JsonNumber;
