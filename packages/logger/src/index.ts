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
  /**
   * On stdout: lines below warn wait up to this long (or until 16 KiB wait) and are written
   * together; 0 or unset: each line on its own, pino's default (see `coalescedStdout`).
   */
  coalesceMs?: number;
};

/** Bytes of waiting lines that are written at once, whatever the delay. */
const COALESCE_MAX_BYTES = 16 * 1024;

/**
 * Standard output with info, debug and trace lines gathered for up to `delayMs` and written
 * together (docs/decisions/0306). pino's default destination writes every line on its own,
 * through a libuv worker thread: an access-log line per request costs that thread's wake-up,
 * the main thread's when the write completes, and the pipe's reader's. Here a warning or
 * worse goes out at once, after what waits before it (order is kept); what waits when the
 * process exits is written synchronously then. A process killed outright (SIGKILL, out of
 * memory) loses at most `delayMs` of lines below warn.
 */
export function coalescedStdout(delayMs: number, dest: number | string = 1): DestinationStream {
  const out = pino.destination({ dest, sync: false });
  let waiting = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (!waiting) return;
    const text = waiting;
    waiting = "";
    out.write(text);
  };
  // After pino's own exit hook (registered when `out` was made): so write and flush here.
  process.on("exit", () => {
    flush();
    try {
      out.flushSync();
    } catch {
      // stdout closed: nothing to write to
    }
  });
  const stream = {
    // pino sets `lastLevel` on a destination that asks for its metadata, before each write.
    [Symbol.for("pino.metadata")]: true,
    lastLevel: 0,
    write(line: string) {
      waiting += line;
      if (stream.lastLevel >= 40 || waiting.length >= COALESCE_MAX_BYTES) flush();
      else if (!timer) {
        timer = setTimeout(flush, delayMs);
        timer.unref();
      }
    },
  };
  return stream;
}

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
  const destination = options.destination ?? (options.coalesceMs ? coalescedStdout(options.coalesceMs) : undefined);
  return destination ? pino(config, destination) : pino(config);
}
