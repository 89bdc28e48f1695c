import { z } from "zod";

/** `next_cursor` beside `data` in a capped list's answer (CONTRACT.md section 13). */
export const NextCursor = z.string().nullable().optional().describe("With `limit` or `cursor`: the cursor of the next page, null at the end.");

/**
 * The body of a capped list (CONTRACT.md section 13): `data`, and `next_cursor`
 * (null at the end) when the request asked for paging; without `limit` and
 * `cursor` the answer is as it was before paging.
 */
export function pageBody<T>(data: T[], nextCursor: string, paged: boolean): { data: T[]; next_cursor?: string | null } {
  return paged ? { data, next_cursor: nextCursor || null } : { data };
}
