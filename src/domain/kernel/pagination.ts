/** Cursor pagination shared by every list (docs/api.md, "Conventions"). */
export interface PageRequest {
  limit: number;
  startingAfter?: string | undefined;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 100;

/** Repositories fetch limit + 1 rows; this turns them into a page. */
export function toPage<T>(rows: T[], limit: number): Page<T> {
  return { items: rows.slice(0, limit), hasMore: rows.length > limit };
}
