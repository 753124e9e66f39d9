import type { FastifyInstance, FastifyRequest } from "fastify";
import { mayHoldUnstorableText, unstorableTextError } from "../../domain/kernel/storable-text.js";
import { parseJsonExact } from "../../platform/exact-json.js";

/**
 * JSON text as every surface of the API reads it: Fastify's own parser (prototype poisoning refused), numbers
 * kept as their exact text where a double would change them (exact-json.ts, docs/api.md "Numbers"), and text
 * PostgreSQL cannot hold (NUL, unpaired surrogates) refused as a 400. Throws the parser's error or a
 * ValidationError; the request bodies and a multipart upload's JSON part go through it alike.
 */
export function exactJsonReader(app: FastifyInstance): (request: FastifyRequest, text: string) => unknown {
  const parseJson = app.getDefaultJsonParser("error", "error");
  return (request, text) => {
    const value = parseJsonExact(text, (rewritten) => {
      let parsed: unknown;
      parseJson(request, rewritten, (error, result) => {
        if (error) throw error;
        parsed = result;
      });
      return parsed;
    });
    const refusal = mayHoldUnstorableText(text) ? unstorableTextError(value) : undefined;
    if (refusal) throw refusal;
    return value;
  };
}
