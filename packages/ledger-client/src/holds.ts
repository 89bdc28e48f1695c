import { type AppError, isAppError } from "@gateway/errors";
import type { ledger } from "@gateway/protos";

/** The movements of a hold, as the helpers below send them (`LedgerCalls`). */
export type HoldCalls = {
  reserve(request: ledger.ReserveRequest): Promise<ledger.ReserveResponse__Output>;
  capture(request: ledger.CaptureRequest): Promise<ledger.CaptureResponse__Output>;
  void(request: ledger.VoidRequest): Promise<ledger.VoidResponse__Output>;
};

/** The read of a hold (`LedgerCalls`). */
export type HoldReads = { hold(holdId: string): Promise<ledger.Hold__Output> };

/** Codes with which the ledger refuses a reserve it never took (no balance; an expiry now past). */
export const NEVER_RESERVED = ["insufficient_balance", "invalid_request"] as const;

/**
 * The hold of an operation whose hold id may have been lost (a crash, an answer
 * that never came): the reserve is replayed with its original parameters. The
 * ledger recognises a replay before anything else, so a replay answers the
 * original hold (`replayed: true`); a hold taken only now (`replayed: false`)
 * means the original never reached the ledger; a refusal with one of `refusals`
 * means there never was a hold (null). Any other error is thrown.
 */
export async function findHold(
  calls: Pick<HoldCalls, "reserve">,
  request: ledger.ReserveRequest,
  refusals: readonly string[] = NEVER_RESERVED,
): Promise<{ holdId: string; replayed: boolean } | null> {
  try {
    const res = await calls.reserve(request);
    return { holdId: res.hold_id, replayed: res.replayed };
  } catch (err) {
    if (isAppError(err) && refusals.includes(err.code)) return null;
    throw err;
  }
}

/**
 * A capture or void, or, when the ledger answers `conflict` (the hold was settled
 * otherwise, or the operation id was sent before with other parameters), the
 * hold as the ledger now holds it, for the caller to decide on, with the conflict.
 */
export type Settlement<T> = { kind: "settled"; response: T } | { kind: "conflict"; hold: ledger.Hold__Output; error: AppError };

async function settle<T>(calls: HoldReads, holdId: string, call: () => Promise<T>): Promise<Settlement<T>> {
  try {
    return { kind: "settled", response: await call() };
  } catch (err) {
    if (!(isAppError(err) && err.code === "conflict")) throw err;
    return { kind: "conflict", hold: await calls.hold(holdId), error: err };
  }
}

/** Captures a hold; a conflict is answered with the hold's state (see `Settlement`). */
export function captureHold(
  calls: Pick<HoldCalls, "capture"> & HoldReads,
  request: ledger.CaptureRequest & { hold_id: string },
): Promise<Settlement<ledger.CaptureResponse__Output>> {
  return settle(calls, request.hold_id, () => calls.capture(request));
}

/** Voids a hold; a conflict is answered with the hold's state (see `Settlement`). */
export function voidHold(
  calls: Pick<HoldCalls, "void"> & HoldReads,
  request: ledger.VoidRequest & { hold_id: string },
): Promise<Settlement<ledger.VoidResponse__Output>> {
  return settle(calls, request.hold_id, () => calls.void(request));
}
