/** An element of a one-dimensional array parameter: text, a number, a bigint, a boolean, or NULL. */
export type ArrayElement = string | number | bigint | boolean | null | undefined;

const NEEDS_ESCAPE = /[\\"]/;

/**
 * A PostgreSQL array literal (`{"a","b",NULL}`) of one column of a batch, character for
 * character what node-postgres makes of the same JavaScript array (its `prepareValue`:
 * every element quoted, `\` and `"` escaped with a backslash, null and undefined as
 * `NULL`), so a statement reads the same parameter either way. Made here in one loop
 * over the batch's rows instead of by the driver's general conversion, which checks
 * each element's type and runs two regular-expression replacements on it (the record
 * statements bind 22 such arrays per batch: docs/decisions/0320).
 */
export function textArray<Row>(rows: readonly Row[], pick: (row: Row) => ArrayElement): string {
  let out = "{";
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) out += ",";
    const value = pick(rows[i]!);
    if (value === null || value === undefined) {
      out += "NULL";
      continue;
    }
    const text = typeof value === "string" ? value : String(value);
    out += NEEDS_ESCAPE.test(text) ? `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"` : `"${text}"`;
  }
  return `${out}}`;
}
