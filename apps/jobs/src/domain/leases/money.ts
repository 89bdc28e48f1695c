/** The ledger operation ids of a lease's job: retries never move money twice. */
export const reserveOperation = (jobId: string) => `reserve:${jobId}`;
export const captureOperation = (jobId: string) => `capture:${jobId}`;
export const voidOperation = (jobId: string) => `void:${jobId}`;
