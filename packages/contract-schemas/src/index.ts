// The contract's shared input rules, each defined once (issue 25, docs/decisions/0201).
// Modules inside the package import each other, never this file.
export { EXTERNAL_ID_PATTERN, ExternalId, FILE_ID_PATTERN, FileId, ID_PATTERN, ID_PATTERN_BODY, Id } from "./ids.js";
export { IDEMPOTENCY_KEY_PATTERN, IdempotencyKey, type IdempotencyKeyHeader, idempotencyKeyHeader, OptionalIdempotencyKey } from "./idempotency-key.js";
export { NonNegativeUnits, PositiveUnits, PositiveUnitsNumber, UNITS_MAX, UNITS_MIN, Units, UnitsNumber, unitsToNumber } from "./units.js";
export { USD_DECIMAL_PATTERN, UsdDecimal, usdAmount } from "./usd.js";
export { listLimit, listLimitQuery } from "./limits.js";
export { CURSOR_MAX_LENGTH, Cursor, decodeCursor, encodeCursor } from "./cursor.js";
export { cursorPageQuery, listPageQuery, PAGE_LIMIT_MAX, type Page, pageInput, pageOf, pageRequested, pageStart } from "./pagination.js";
