import { z } from "zod";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type Page, type PageRequest } from "../../domain/kernel/pagination.js";

/** `limit` and `starting_after`, shared by every paginated list (docs/api.md, "Conventions"). */
export const pageQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_LIMIT)
    .default(DEFAULT_PAGE_LIMIT)
    .describe(`1 to ${MAX_PAGE_LIMIT}, default ${DEFAULT_PAGE_LIMIT}`),
  starting_after: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\u0000]*$/, "must not contain NUL characters") // PostgreSQL would refuse it with a 500
    .optional()
    .describe("Cursor: the id of the last item of the previous page"),
};

export const toPageRequest = (query: { limit: number; starting_after?: string | undefined }): PageRequest => ({
  limit: query.limit,
  startingAfter: query.starting_after,
});

/** A list envelope's schema, `id` in the OpenAPI document (`CustomerList`): made once, at module level. */
export const listSchema = <T extends z.ZodTypeAny>(item: T, id: string) =>
  z
    .object({
      object: z.literal("list"),
      data: z.array(item),
      has_more: z.boolean(),
      total_count: z.number().int().describe("The number of items in this page"),
    })
    .meta({ id });

export interface ListEnvelope<T> {
  object: "list";
  data: T[];
  has_more: boolean;
  total_count: number;
}

/** `total_count` is the number of items in this page (docs/api.md, "Conventions"). */
export const listEnvelope = <T>(page: Page<T>): ListEnvelope<T> => ({
  object: "list",
  data: page.items,
  has_more: page.hasMore,
  total_count: page.items.length,
});
