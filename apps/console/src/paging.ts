// Capped lists read a page at a time (CONTRACT.md section 13, docs/decisions/0212): the
// first page with `limit`, then the next with the `next_cursor` the previous one gave.

/** The path of one page: `limit`, and `cursor` after the first page. */
export function pagePath(path: string, limit: number, cursor: string | null): string {
  const sep = path.includes("?") ? "&" : "?";
  return `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
}

/** A list's answer: `data`, and `next_cursor` (null at the end) because `limit` was sent. */
export type PageBody<T> = { data: T[]; next_cursor?: string | null };

/** Appends a page to what is loaded; a row already there (by key) is not added twice. */
export function appendPage<T>(rows: T[], page: T[], key: (row: T) => string): T[] {
  const seen = new Set(rows.map(key));
  return [...rows, ...page.filter((row) => !seen.has(key(row)))];
}
