/** Units (USD 0.0001) as a USD number for JSON bodies (`pricing.cost`): exact for any int64 below 2^53. */
export function unitsToUsdNumber(units: bigint): number {
  const abs = units < 0n ? -units : units;
  return Number(`${units < 0n ? "-" : ""}${abs / 10_000n}.${(abs % 10_000n).toString().padStart(4, "0")}`);
}

/** The ledger operation ids of a lease's job: retries never move money twice. */
export const reserveOperation = (jobId: string) => `reserve:${jobId}`;
export const captureOperation = (jobId: string) => `capture:${jobId}`;
export const voidOperation = (jobId: string) => `void:${jobId}`;
