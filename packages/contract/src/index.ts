// The contract package (docs/decisions/0261). Its root: the contract's shared input rules,
// each defined once (issue 25, docs/decisions/0201). Ids are minted by `@gateway/contract/ids`
// and money converted by `@gateway/contract/money` (entries of their own, so the browser
// console takes money without node:crypto). Modules inside the package import each other,
// never this file.
export { EXTERNAL_ID_PATTERN, ExternalId, FILE_ID_PATTERN, FileId, ID_PATTERN, ID_PATTERN_BODY, Id } from "./schemas/ids.js";
export { IDEMPOTENCY_KEY_PATTERN, IdempotencyKey, type IdempotencyKeyHeader, idempotencyKeyHeader, OptionalIdempotencyKey } from "./schemas/idempotency-key.js";
export { NonNegativeUnits, PositiveUnits, PositiveUnitsNumber, UNITS_MAX, UNITS_MIN, Units, UnitsNumber, unitsToNumber } from "./schemas/units.js";
export { USD_DECIMAL_PATTERN, UsdDecimal, usdAmount } from "./schemas/usd.js";
export { listLimit, listLimitQuery } from "./schemas/limits.js";
export { CURSOR_MAX_LENGTH, Cursor, decodeCursor, encodeCursor } from "./schemas/cursor.js";
export {
  cursorPageQuery,
  listPageQuery,
  newestFirst,
  type NewestFirstArgs,
  PAGE_LIMIT_MAX,
  type Page,
  pageInput,
  pageOf,
  pageRequested,
  pageStart,
} from "./schemas/pagination.js";
export { CONVERSATION_EVENT_KINDS } from "./schemas/conversation-events.js";
