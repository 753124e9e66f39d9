// The API's typed client: openapi-fetch over the types openapi-typescript generates from the OpenAPI document
// (api-schema.ts, `npm run generate:client`). A path, a parameter or a field the API no longer has is a
// compile error in every caller; so is reading an error's `code` where the document says none comes.
// Request bodies are written by the service's own exact JSON writer, so that a decimal read from a file as
// its exact text (a JsonNumber) is sent with every digit.
import createClient from "openapi-fetch";
import { stringifyJson } from "../platform/exact-json.js";
import type { paths } from "./api-schema.js";

export type { paths } from "./api-schema.js";

export function createBillingClient(options: { baseUrl: string; apiKey: string; fetch?: typeof globalThis.fetch }) {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { authorization: `Bearer ${options.apiKey}` },
    bodySerializer: (body: unknown) => stringifyJson(body),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
