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
