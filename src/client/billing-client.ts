// The API's typed client: openapi-fetch over the types openapi-typescript generates from the OpenAPI document
// (api-schema.ts, `npm run generate:client`). A path, a parameter or a field the API no longer has is a
// compile error in every caller; so is reading an error's `code` where the document says none comes.
// Decimals keep every digit both ways, as everywhere in the service (docs/api.md, "Numbers"): request bodies are
// written by the exact JSON writer (a Decimal is sent as its text), and answers are read by the exact reader:
// every decimal field of an answer (`decimalFields`, generated with the types) arrives as a Decimal, the
// JsonNumber its generated type says (decimal.ts: decimalText, decimalBig). Any other number is a number.
import createClient from "openapi-fetch";
import { isExactDouble, JsonNumber, parseJsonExact, stringifyJson } from "../platform/exact-json.js";
import { decimalFields, type paths } from "./api-schema.js";

export type { paths } from "./api-schema.js";
export { decimalBig, decimalText, isDecimal } from "./decimal.js";

/**
 * An answer's value with its decimal fields as JsonNumbers (read with every number kept as its text) and every
 * other number as a number, unless a double cannot hold it (then it stays a JsonNumber, never rounded).
 */
function withDecimals(root: unknown): unknown {
  const plain = (value: unknown) =>
    value instanceof JsonNumber && isExactDouble(value.text) ? Number(value.text) : value;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object" || node instanceof JsonNumber) continue;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = record[key];
      if (child instanceof JsonNumber)
        record[key] = !Array.isArray(node) && decimalFields.has(key) ? child : plain(child);
      else stack.push(child);
    }
  }
  return plain(root);
}

/** An answer whose JSON is read exactly (openapi-fetch reads answers with `json()`). */
class ExactJsonResponse extends Response {
  override async json(): Promise<unknown> {
    return withDecimals(parseJsonExact(await this.text(), JSON.parse, { everyNumber: true }));
  }
}

export function createBillingClient(options: { baseUrl: string; apiKey: string; fetch?: typeof globalThis.fetch }) {
  const send = options.fetch ?? globalThis.fetch;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { authorization: `Bearer ${options.apiKey}` },
    bodySerializer: (body: unknown) => stringifyJson(body),
    fetch: async (request: Request) => {
      const answer = await send(request);
      return new ExactJsonResponse(answer.body, {
        status: answer.status,
        statusText: answer.statusText,
        headers: answer.headers,
      });
    },
  });
}
