/**
 * The operation ids of a hold, derived from the id of the record it is for (a usage
 * record, a job, a push message): a retry, a recovery or another replica sends the
 * same id, so no movement happens twice. The format is the ledger's history: a
 * changed id would not replay what was sent before.
 */
export const reserveOperation = (id: string) => `reserve:${id}`;
export const captureOperation = (id: string) => `capture:${id}`;
export const voidOperation = (id: string) => `void:${id}`;
