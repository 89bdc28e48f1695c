import type { NextFunction, Request, Response } from "express";
import { AppError, isAppError, toErrorBody } from "@gateway/errors";
import type { Logger } from "@gateway/logger";
import type { PathRedactor } from "./observe.js";
import type { ErrorShape } from "./route.js";

declare module "express-serve-static-core" {
  interface Request {
    /** The answering route's own error shape, when it has one (set as soon as the route is known). */
    errorShape?: ErrorShape;
  }
}

/** Sends the contract's flat error body, or the route's own shape of it (and Retry-After for 429). */
export function sendError(res: Response, err: unknown, requestId: string, shape?: ErrorShape): void {
  const { status, body } = toErrorBody(err, requestId);
  if (isAppError(err) && err.retryAfter !== undefined) res.setHeader("Retry-After", String(Math.max(1, Math.ceil(err.retryAfter))));
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).json(shape ? shape.body(status, body) : body);
}

/** body-parser's errors, as the contract's codes. */
function fromBodyParser(err: { type?: string; status?: number }): AppError | undefined {
  switch (err.type) {
    case "entity.parse.failed":
      return new AppError("invalid_request", "The body is not valid JSON.");
    case "entity.too.large":
      return new AppError("payload_too_large", "The body is larger than the gateway accepts.");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError("invalid_request", "The body's encoding or charset is not supported; send UTF-8 JSON.");
    case "request.aborted":
      return new AppError("invalid_request", "The request was aborted while its body was read.");
    default:
      return err.status && err.status >= 400 && err.status < 500 ? new AppError("invalid_request", "The request could not be read.") : undefined;
  }
}

export function notFound() {
  return (req: Request, _res: Response, next: NextFunction) => {
    next(new AppError("not_found", `No route for ${req.method} ${req.path}.`));
  };
}

/** Last middleware: every error becomes the flat error body; 5xx are logged with their cause (secret path segments redacted). */
export function errorHandler(logger: Logger, redact: PathRedactor) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const mapped = isAppError(err) ? err : (fromBodyParser(err as { type?: string; status?: number }) ?? err);
    const status = isAppError(mapped) ? mapped.httpStatus : 500;
    if (status >= 500) logger.error({ err, method: req.method, path: redact(req.originalUrl.split("?")[0]!) }, "request failed");
    sendError(res, mapped, req.requestId, req.errorShape);
  };
}
