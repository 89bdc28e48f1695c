import { isUnavailableFailure } from "./unavailable.js";

/**
 * The contract's error codes (CONTRACT.md section 1), one per HTTP status.
 * Every failure the gateway reports is an AppError with one of these codes;
 * anything else becomes `internal_error` at the edge of a process.
 */
export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "insufficient_balance",
  "forbidden",
  "not_found",
  "conflict",
  "payload_too_large",
  "validation_failed",
  "rate_limited",
  "internal_error",
  "upstream_error",
  "unavailable",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The one table from error code to HTTP status. */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_balance: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  unavailable: 503,
};

/** Extra fields merged into the flat error body, e.g. `{ pricing: { cost } }`. */
export type ErrorExtra = Record<string, unknown>;

export type AppErrorOptions = {
  extra?: ErrorExtra;
  /** Seconds, for `rate_limited` (sent as `Retry-After`). */
  retryAfter?: number;
  cause?: unknown;
};

export class AppError extends Error {
  override readonly name = "AppError";
  readonly code: ErrorCode;
  readonly extra: ErrorExtra | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.extra = options.extra;
    this.retryAfter = options.retryAfter;
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

export type ErrorBody = {
  error: ErrorCode;
  message: string;
  request_id: string;
  [extra: string]: unknown;
};

/**
 * The flat error body of the contract. Unknown errors never leak their message:
 * they become `internal_error` with a generic text and the request id.
 */
export function toErrorBody(err: unknown, requestId: string): { status: number; body: ErrorBody } {
  if (isAppError(err)) {
    const body: ErrorBody = { ...(err.extra ?? {}), error: err.code, message: err.message, request_id: requestId };
    return { status: err.httpStatus, body };
  }
  if (isUnavailableFailure(err)) {
    return { status: HTTP_STATUS.unavailable, body: { error: "unavailable", message: UNAVAILABLE_MESSAGE, request_id: requestId } };
  }
  return {
    status: HTTP_STATUS.internal_error,
    body: { error: "internal_error", message: "Internal error; quote the request id when reporting it.", request_id: requestId },
  };
}

/** What a client reads when a dependency (database, broker) is down: no driver detail. */
export const UNAVAILABLE_MESSAGE = "A service the gateway depends on is unavailable; try again shortly.";
