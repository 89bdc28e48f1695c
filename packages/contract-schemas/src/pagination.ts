import { z } from "zod";
import { Cursor } from "./cursor.js";
import { listLimitQuery } from "./limits.js";

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
