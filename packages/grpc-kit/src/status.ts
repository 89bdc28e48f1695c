import { status as GrpcStatus, Metadata, type ServiceError, type StatusObject } from "@grpc/grpc-js";
import { AppError, isAppError, isErrorCode, isUnavailableFailure, UNAVAILABLE_MESSAGE, type ErrorCode } from "@gateway/errors";

export const METADATA = {
  requestId: "x-request-id",
  actor: "x-actor",
  errorCode: "x-error-code",
  errorExtra: "x-error-extra",
  retryAfter: "x-retry-after",
} as const;

/** The one table from error code to gRPC status. */
export const GRPC_STATUS: Readonly<Record<ErrorCode, GrpcStatus>> = {
  invalid_request: GrpcStatus.INVALID_ARGUMENT,
  unauthorized: GrpcStatus.UNAUTHENTICATED,
  insufficient_balance: GrpcStatus.FAILED_PRECONDITION,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conflict: GrpcStatus.ABORTED,
  payload_too_large: GrpcStatus.OUT_OF_RANGE,
  validation_failed: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  internal_error: GrpcStatus.INTERNAL,
  upstream_error: GrpcStatus.UNKNOWN,
  unavailable: GrpcStatus.UNAVAILABLE,
};

/**
 * Statuses a call can end with when no service chose an error code: the
 * transport's own failures, and the inverse of GRPC_STATUS where it is one to one.
 */
const TRANSPORT_FALLBACK: ReadonlyMap<GrpcStatus, ErrorCode> = (() => {
  const byStatus = new Map<GrpcStatus, ErrorCode[]>();
  for (const [code, st] of Object.entries(GRPC_STATUS) as [ErrorCode, GrpcStatus][]) byStatus.set(st, [...(byStatus.get(st) ?? []), code]);
  const map = new Map<GrpcStatus, ErrorCode>();
  for (const [st, codes] of byStatus) if (codes.length === 1 && codes[0]) map.set(st, codes[0]);
  map.set(GrpcStatus.DEADLINE_EXCEEDED, "unavailable");
  map.set(GrpcStatus.CANCELLED, "unavailable");
  // grpc-js itself answers RESOURCE_EXHAUSTED for messages over the size limit.
  map.set(GrpcStatus.RESOURCE_EXHAUSTED, "payload_too_large");
  map.set(GrpcStatus.UNKNOWN, "internal_error");
  return map;
})();

const TRANSPORT_MESSAGES: Partial<Record<ErrorCode, (target: string) => string>> = {
  unavailable: (target) => `${target} is unavailable; try again later.`,
  payload_too_large: () => "The request is too large for the service.",
  internal_error: () => "internal error",
};

/**
 * The status a service sends for an error. An AppError keeps its exact code
 * and extras in trailing metadata (several codes share a gRPC status); anything
 * else is an internal error whose message stays in the service's own log.
 */
export function toStatus(err: unknown): Partial<StatusObject> {
  const metadata = new Metadata();
  if (isAppError(err)) {
    metadata.set(METADATA.errorCode, err.code);
    if (err.extra) metadata.set(METADATA.errorExtra, JSON.stringify(err.extra));
    if (err.retryAfter !== undefined) metadata.set(METADATA.retryAfter, String(err.retryAfter));
    return { code: GRPC_STATUS[err.code], details: err.message, metadata };
  }
  if (isUnavailableFailure(err)) {
    // The service's database (or another dependency) is down or restarting: retryable.
    metadata.set(METADATA.errorCode, "unavailable");
    return { code: GrpcStatus.UNAVAILABLE, details: UNAVAILABLE_MESSAGE, metadata };
  }
  metadata.set(METADATA.errorCode, "internal_error");
  return { code: GrpcStatus.INTERNAL, details: "internal error", metadata };
}

/**
 * The AppError a caller sees for a failed call. Without an error code in the
 * trailers the failure came from the transport or a foreign server: a service
 * that is down or too slow (UNAVAILABLE, DEADLINE_EXCEEDED) is `unavailable`.
 */
export function fromServiceError(err: ServiceError, target: string): AppError {
  const code = err.metadata?.get(METADATA.errorCode)[0];
  if (isErrorCode(code)) {
    let extra: Record<string, unknown> | undefined;
    const rawExtra = err.metadata.get(METADATA.errorExtra)[0];
    if (typeof rawExtra === "string") {
      try {
        extra = JSON.parse(rawExtra) as Record<string, unknown>;
      } catch {
        extra = undefined;
      }
    }
    const retry = Number(err.metadata.get(METADATA.retryAfter)[0]);
    return new AppError(code, err.details, {
      ...(extra ? { extra } : {}),
      ...(Number.isFinite(retry) && retry > 0 ? { retryAfter: retry } : {}),
      cause: err,
    });
  }
  const fallback = TRANSPORT_FALLBACK.get(err.code) ?? "internal_error";
  const message = TRANSPORT_MESSAGES[fallback]?.(target) ?? err.details;
  return new AppError(fallback, message, { cause: err });
}

export function statusName(code: GrpcStatus): string {
  return GrpcStatus[code] ?? String(code);
}

/** The peer does not know the method (an older build during a rolling deploy). */
export function isUnimplemented(err: unknown): boolean {
  const cause = isAppError(err) ? err.cause : err;
  return typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === GrpcStatus.UNIMPLEMENTED;
}

/** What a failed call's status carries (code, message, extras, retry-after), as fields of a message (docs/decisions/0246). */
export type ErrorFields = { code: string; message: string; extra: string; retry_after: number };

/** The fields a service sends for an error carried inside a stream: the same as `toStatus`'s trailers. */
export function toErrorFields(err: unknown): ErrorFields {
  if (isAppError(err)) {
    return { code: err.code, message: err.message, extra: err.extra ? JSON.stringify(err.extra) : "", retry_after: err.retryAfter ?? 0 };
  }
  if (isUnavailableFailure(err)) return { code: "unavailable", message: UNAVAILABLE_MESSAGE, extra: "", retry_after: 0 };
  return { code: "internal_error", message: "internal error", extra: "", retry_after: 0 };
}

/** The AppError a caller sees for an error carried inside a stream: as `fromServiceError` for the same trailers. */
export function fromErrorFields(fields: { code: string; message: string; extra?: string; retry_after?: number }): AppError {
  if (!isErrorCode(fields.code)) return new AppError("internal_error", "internal error");
  let extra: Record<string, unknown> | undefined;
  if (fields.extra) {
    try {
      extra = JSON.parse(fields.extra) as Record<string, unknown>;
    } catch {
      extra = undefined;
    }
  }
  const retry = fields.retry_after ?? 0;
  return new AppError(fields.code, fields.message, { ...(extra ? { extra } : {}), ...(retry > 0 ? { retryAfter: retry } : {}) });
}

/** The AppError of a call that could not complete at the transport (deadline, cancellation, a broken connection): as `fromServiceError` without trailers. */
export function transportFailure(target: string): AppError {
  return new AppError("unavailable", TRANSPORT_MESSAGES.unavailable!(target));
}
