// The API's typed client: openapi-fetch over the types openapi-typescript generates from the OpenAPI document
// (api-schema.ts, `npm run generate:client`). A path, a parameter or a field the API no longer has is a
// compile error in every caller; so is reading an error's `code` where the document says none comes.
// Decimals keep every digit both ways, as everywhere in the service (docs/api.md, "Numbers"): request bodies are
// written by the exact JSON writer (a Decimal is sent as its text), and answers are read by the exact reader:
// every decimal field of an answer (`decimalFields`, generated with the types) arrives as a Decimal, the
// JsonNumber its generated type says (decimal.ts: decimalText, decimalBig). Any other number is a number.
// A plain JSON.stringify of an answer writes each Decimal as its digits in a string (decimal.ts).
import createClient from "openapi-fetch";
import { isExactDouble, JsonNumber, parseJsonExact, stringifyJsonNumbers } from "../platform/exact-json.js";
import { decimalFields, type paths } from "./api-schema.js";
import { Decimal } from "./decimal.js";

export type { paths } from "./api-schema.js";
export { decimalBig, decimalText, isDecimal } from "./decimal.js";

/**
 * An answer's value with its decimal fields as JsonNumbers (read with every number kept as its text) and every
 * other number as a number, unless a double cannot hold it (then it stays a JsonNumber, never rounded).
 */
function withDecimals(root: unknown): unknown {
  const plain = (value: unknown) =>
    value instanceof JsonNumber ? (isExactDouble(value.text) ? Number(value.text) : new Decimal(value.text)) : value;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object" || node instanceof JsonNumber) continue;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = record[key];
      if (child instanceof JsonNumber)
        record[key] = !Array.isArray(node) && decimalFields.has(key) ? new Decimal(child.text) : plain(child);
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
    // A Decimal (from an answer) is sent as the bare number it was read as, not as the string its toJSON writes.
    bodySerializer: (body: unknown) => stringifyJsonNumbers(body),
    fetch: async (request: Request) => {
      const answer = await send(request);
      const init = { status: answer.status, statusText: answer.statusText, headers: new Headers(answer.headers) };
      // openapi-fetch reads an answer without Content-Length (chunked, as a proxy may send it) with JSON.parse,
      // not json(): a JSON answer is given its length, so that it too is read exactly.
      const json = /\bjson\b/i.test(answer.headers.get("content-type") ?? "");
      if (json && answer.body && !answer.headers.has("content-length")) {
        const bytes = new Uint8Array(await answer.arrayBuffer());
        init.headers.set("content-length", String(bytes.byteLength));
        return new ExactJsonResponse(bytes, init);
      }
      return new ExactJsonResponse(answer.body, init);
    },
  });
}
