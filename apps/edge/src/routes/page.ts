import { z } from "zod";
import { pageRequested } from "@gateway/contract";

/**
 * The one list, page and encode helper of the routes: the `{ data }` envelope, a capped
 * list's paging arguments and answer (CONTRACT.md section 13), and the empty-string-to-null
 * rule of the views encoded from protobuf answers.
 */

/** The answer envelope of one resource or one list: `{ data }`. */
export const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

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

/** A list's paging arguments for its RPC: the route's own default limit, and no cursor as "". */
export function pageArgs(query: { limit?: number | undefined; cursor?: string | undefined }, defaultLimit: number): { limit: number; cursor: string } {
  return { limit: query.limit ?? defaultLimit, cursor: query.cursor ?? "" };
}

/** A protobuf string that is empty means absent: null in the view. */
export const orNull = (s: string) => (s === "" ? null : s);

/** A capped list's answer: its items encoded, and `next_cursor` when the query asked for a page. */
export function listAnswer<I, T>(
  items: I[],
  encode: (item: I) => T,
  nextCursor: string,
  query: { limit?: number | undefined; cursor?: string | undefined },
): { status: 200; body: { data: T[]; next_cursor?: string | null } } {
  return { status: 200, body: pageBody(items.map(encode), nextCursor, pageRequested(query)) };
}
