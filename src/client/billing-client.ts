// The API's typed client: openapi-fetch over the types openapi-typescript generates from the OpenAPI document
// (api-schema.ts, `npm run generate:client`). A path, a parameter or a field the API no longer has is a
// compile error in every caller; so is reading an error's `code` where the document says none comes.
// Decimals keep every digit both ways, as everywhere in the service (docs/api.md, "Numbers"): request bodies are
// written by the exact JSON writer (a JsonNumber is sent as its text), and answers are read by the exact
// reader: a number a double cannot hold arrives as a JsonNumber (`text` is its digits, `String()` gives them),
// though the generated types say `number`. Any other number is a number.
import createClient from "openapi-fetch";
import { parseJsonExact, stringifyJson } from "../platform/exact-json.js";
import type { paths } from "./api-schema.js";

export type { paths } from "./api-schema.js";

/** An answer whose JSON is read exactly (openapi-fetch reads answers with `json()`). */
class ExactJsonResponse extends Response {
  override async json(): Promise<unknown> {
    return parseJsonExact(await this.text());
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
      return new ExactJsonResponse(answer.body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    },
  });
}
