import type { FastifySerializerCompiler } from "fastify/types/schema.js";
import { ResponseSerializationError } from "fastify-type-provider-zod";
import { z } from "zod";
import { stringifyJson } from "../../platform/exact-json.js";

/**
 * The response serializer: the zod schema checks what a route answers (as fastify-type-provider-zod's own
 * does), and decimals are written as the exact JSON numbers they hold (docs/api.md, "Numbers").
 */
export const exactSerializerCompiler: FastifySerializerCompiler<z.ZodType> = ({ schema, method, url }) => {
  return (data) => {
    const result = z.safeEncode(schema, data);
    if (result.error) throw new ResponseSerializationError(method, url, { cause: result.error });
    return stringifyJson(result.data);
  };
};
