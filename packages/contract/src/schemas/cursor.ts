import { z } from "zod";
import { AppError } from "@gateway/errors";
import { UNITS_MAX } from "./units.js";

/**
 * The one cursor format of every list that pages with a cursor
 * (docs/decisions/0202): the position of the last item returned (a bigint
 * sequence: the feed's `position`, the ledger's `transfers.seq`) in canonical
 * decimal, "" for the start. Clients treat it as opaque (CONTRACT.md 11): they
 * only hand back a `next_cursor` or an item's `cursor`.
 */
const CANONICAL = /^(0|[1-9]\d{0,18})$/;

/** The longest cursor any list accepts: room for the format to grow without a contract change. */
export const CURSOR_MAX_LENGTH = 32;

/** A cursor as a request carries it (query or body): an opaque string, checked by {@link decodeCursor}. */
export const Cursor = z.string().max(CURSOR_MAX_LENGTH);

export function encodeCursor(position: bigint): string {
  if (position < 0n || position > UNITS_MAX) throw new RangeError(`a cursor position must be an int64 >= 0, not ${position}`);
  return position.toString();
}

/**
 * The position a cursor names, or null for "" (the start: the list decides
 * what that is). Anything this format never produced is the caller's error:
 * 400 `invalid_request`.
 */
export function decodeCursor(cursor: string): bigint | null {
  if (cursor === "") return null;
  if (CANONICAL.test(cursor)) {
    const position = BigInt(cursor);
    if (position <= UNITS_MAX) return position;
  }
  throw new AppError("invalid_request", "cursor must be a cursor this list returned (or empty for the start).");
}
