import { AppError, isErrorCode } from "@gateway/errors";
import type { ledger } from "@gateway/protos";

/**
 * A movement's error inside an ApplyBatch answer as the AppError its single call
 * would have failed with: the ledger's code when it is one of ours, else
 * `internal_error`, with the ledger's message.
 */
export function movementError(error: ledger.MovementError__Output): AppError {
  return new AppError(isErrorCode(error.code) ? error.code : "internal_error", error.message);
}
