import { z } from "zod";
import { Cursor, decodeCursor, encodeCursor } from "./cursor.js";
import { listLimit, listLimitQuery } from "./limits.js";

/**
 * The query of a list read page by page with a cursor (`?cursor=&limit=`):
 * absent `cursor` starts at the beginning, absent `limit` is `max`.
 * `item` names what the list holds, for the OpenAPI document.
 */
export function cursorPageQuery(options: { max: number; item: string }) {
  return z.strictObject({
    cursor: Cursor.optional().describe(`The \`next_cursor\` (or an ${options.item}'s \`cursor\`) of an earlier page; absent: from the start.`),
    limit: listLimitQuery(options.max).describe(`1..${options.max}, default ${options.max}.`),
  });
}

/** The largest page of a capped list (CONTRACT.md section 13). */
export const PAGE_LIMIT_MAX = 200;

/**
 * `limit` and `cursor` of a capped list (CONTRACT.md section 13), to spread into
 * the list's query object: `limit` 1..200, `cursor` a `next_cursor` of the same
 * list. Without both the list answers as it did before paging (its old cap, no
 * `next_cursor`); with either it answers `next_cursor` beside `data`.
 * `fallback` describes what the list gives without `limit`.
 */
export function listPageQuery(options: { item: string; fallback: string }) {
  return {
    limit: listLimitQuery(PAGE_LIMIT_MAX).describe(`1..${PAGE_LIMIT_MAX}; without limit and cursor: ${options.fallback}.`),
    cursor: Cursor.optional().describe(`The \`next_cursor\` of the previous page of ${options.item}; absent: the first page.`),
  };
}

/** Whether a list request asked for paging (then its answer carries `next_cursor`). */
export function pageRequested(query: { limit?: number | undefined; cursor?: string | undefined }): boolean {
  return query.limit !== undefined || query.cursor !== undefined;
}

/**
 * `limit` and `cursor` of a paged list between services: `limit` 0..max (0 or
 * absent: `fallback`, the list's cap when not paged), `cursor` "" for the start.
 */
export function pageInput(max: number, fallback: number) {
  return { limit: listLimit(max, fallback), cursor: Cursor.default("") };
}

/** A page of a list and the cursor of the next one ("" at the end: nothing follows). */
export type Page<T> = { items: T[]; nextCursor: string };

/**
 * The position after which a page starts: `decodeCursor`'s, so a cursor this list never
 * gave is 400 `invalid_request`. null: the first page.
 */
export const pageStart = decodeCursor;

/**
 * Cuts a page from rows read with `take: limit + 1` in the list's order: the first
 * `limit` rows, and the position of the last of them as the next cursor when more
 * followed. Paging by a row's unique, never-reused position (a sequence column)
 * neither skips nor repeats a row that exists throughout, whatever is added or
 * removed meanwhile.
 */
export function pageOf<T>(rows: T[], limit: number, position: (row: T) => bigint): Page<T> {
  if (rows.length <= limit) return { items: rows, nextCursor: "" };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(position(items[items.length - 1]!)) };
}

/** What `newestFirst` hands a table's `findMany`: Prisma's arguments for one page by `seq`, newest first. */
export type NewestFirstArgs<W> = { where: W & { seq?: { lt: bigint } }; orderBy: { seq: "desc" }; take: number };

/**
 * One page of a list read newest first by its sequence column (docs/decisions/0212):
 * the rows matching `where` below the cursor's position, cut by `pageOf`. `find` is
 * the table's `findMany`, e.g. `(args) => ctx.prisma.job.findMany(args)`.
 */
export async function newestFirst<W extends object, T extends { seq: bigint }>(
  find: (args: NewestFirstArgs<W>) => Promise<T[]>,
  where: W,
  page: { cursor: string; limit: number },
): Promise<Page<T>> {
  const after = pageStart(page.cursor);
  const rows = await find({ where: { ...where, ...(after !== null ? { seq: { lt: after } } : {}) }, orderBy: { seq: "desc" }, take: page.limit + 1 });
  return pageOf(rows, page.limit, (row) => row.seq);
}
