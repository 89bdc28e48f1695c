import { createHash } from "node:crypto";

/**
 * The operation ids of a hold, derived from the id of the record it is for (a usage
 * record, a job, a push message): a retry, a recovery or another replica sends the
 * same id, so no movement happens twice. The format is the ledger's history: a
 * changed id would not replay what was sent before.
 */
export const reserveOperation = (id: string) => `reserve:${id}`;
export const captureOperation = (id: string) => `capture:${id}`;
export const voidOperation = (id: string) => `void:${id}`;

/**
 * The operation ids of an allotment (docs/decisions/0028), from its id, and of a
 * request's charge posted from one, from the request's id: the same history rule.
 */
export const allotOperation = (allotmentId: string) => `allot:${allotmentId}`;
export const freezeOperation = (allotmentId: string) => `freeze:${allotmentId}`;
export const closeOperation = (allotmentId: string) => `close:${allotmentId}`;
export const postOperation = (requestId: string) => `post:${requestId}`;

/**
 * The operation of a credit (an operator's top-up): with an Idempotency-Key,
 * `credit:<tenant>:<key>`, or, when that would pass the ledger's 128 characters (a key
 * near its own limit of 128), `credit:h:` and the SHA-256 of tenant and key (ids that fit
 * keep their form, so a retry of a credit sent before this rule still finds it); without
 * one, `credit:<request id>` (a retry of the same request only).
 */
export function creditOperation(tenantId: string, key: string | undefined, requestId: string): string {
  if (!key) return `credit:${requestId}`;
  const plain = `credit:${tenantId}:${key}`;
  return plain.length <= 128 ? plain : `credit:h:${createHash("sha256").update(`${tenantId}\n${key}`).digest("base64url")}`;
}
