import { createHash } from "node:crypto";

/**
 * The hash of an operation's parameters, stored with its transfer: a retry with
 * the same operation_id must send the same parameters, or it is a conflict.
 * Parts are joined with "\n"; only the last part (a free-text reason) may
 * contain one, so the encoding is unambiguous. The migration that converted
 * credits of the first schema computes the same hash in SQL; keep them equal.
 */
export function requestHash(parts: readonly [string, ...string[]]): string {
  return createHash("sha256").update(parts.join("\n"), "utf8").digest("hex");
}
