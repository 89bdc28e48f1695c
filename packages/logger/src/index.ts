import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { currentRequestId } from "./context.js";

export { currentActor, currentContext, currentRequestId, runWithContext, setActor, type RequestContext } from "./context.js";
export type { Logger } from "pino";

/** Field names whose values are never written to a log line, at any of the first three levels. */
export const SECRET_FIELDS = [
  "password",
  "new_password",
  "api_key",
  "apiKey",
  "key",
  "secret",
  "callback_secret",
  "bot_token",
  "token",
  "refresh_token",
  "access_token",
  "authorization",
  "x-api-key",
  "cookie",
  "DATABASE_URL",
  "JWT_SECRET",
  "ENCRYPTION_KEYS",
] as const;

export const REDACTED = "[redacted]";

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const field of SECRET_FIELDS) {
    const f = /^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`;
    const dot = f.startsWith("[") ? "" : ".";
    paths.push(f, `*${dot}${f}`, `*.*${dot}${f}`);
  }
  return paths;
}

let logContext: (() => Record<string, string> | undefined) | undefined;

/**
 * Fields every line carries while `provider` returns some: the active trace and span
 * when tracing is on (`@gateway/telemetry` sets it). `undefined` stops it. Nothing is
 * called per line while no provider is set.
 */
export function setLogContext(provider: (() => Record<string, string> | undefined) | undefined): void {
  logContext = provider;
}

export type CreateLoggerOptions = {
  /** The component name; becomes the `service` field of every line. */
  service: string;
  level?: string;
  /** Where lines go; stdout by default. Tests pass a stream to capture lines. */
  destination?: DestinationStream;
};

/**
 * One logger per process. Every line carries `service`, ISO time, the level name,
 * `request_id` whenever it is written inside a request context, and `trace_id` /
 * `span_id` inside a span when tracing is on.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const config: LoggerOptions = {
    level: options.level ?? "info",
    base: { service: options.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    messageKey: "msg",
    formatters: {
      level: (label) => ({ level: label }),
    },
    mixin: () => {
      const requestId = currentRequestId();
      const extra = logContext?.();
      if (requestId === undefined) return extra ?? {};
      return extra ? { request_id: requestId, ...extra } : { request_id: requestId };
    },
    redact: { paths: redactPaths(), censor: REDACTED },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
