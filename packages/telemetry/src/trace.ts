import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from "@opentelemetry/api";

/**
 * Spans and W3C trace context over the OpenTelemetry API only. Until
 * `startTelemetry` enables tracing, every function here is one branch: no span
 * is created, no context is read or written, nothing is parsed from headers.
 */

let tracer: Tracer | undefined;

/** The span handed to code while tracing is off: every method does nothing. */
export const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** @internal Called by startTelemetry / its shutdown. */
export function setTracer(next: Tracer | undefined): void {
  tracer = next;
}

export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** The current context (the root context while tracing is off). */
export function activeContext(): Context {
  return tracer ? context.active() : ROOT_CONTEXT;
}

/** A span that the caller ends; child of `parent` (default: the active context). */
export function startSpan(name: string, options?: SpanOptions, parent?: Context): Span {
  if (!tracer) return NOOP_SPAN;
  return tracer.startSpan(name, options, parent ?? context.active());
}

/** Runs `fn` with `span` as the active span (its children and outgoing calls see it). */
export function withSpan<T>(span: Span, fn: () => T): T {
  if (!tracer || span === NOOP_SPAN) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Runs `fn` inside a context (for instance one extracted from a carrier). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  if (!tracer) return fn();
  return context.with(ctx, fn);
}

/**
 * Runs `fn` inside a new active span, ends it when `fn` settles and marks it
 * failed when `fn` throws (with the error's code or class, never its message).
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>, parent?: Context): Promise<T> {
  if (!tracer) return fn(NOOP_SPAN);
  const base = parent ?? context.active();
  const span = tracer.startSpan(name, options, base);
  try {
    return await context.with(trace.setSpan(base, span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Marks a span failed. Only the error's `code` (AppError, ProviderError, Node
 * system errors) or class name is recorded: messages may hold SQL, addresses or
 * customer input, and traces leave the process.
 */
export function failSpan(span: Span, err: unknown): void {
  if (span === NOOP_SPAN) return;
  const kind = errorKind(err);
  span.setAttribute("error.type", kind);
  span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
}

function errorKind(err: unknown): string {
  if (err && typeof err === "object") {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
    const name = (err as { name?: unknown }).name;
    if (typeof name === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(name)) return name;
  }
  return "Error";
}

/** The span context of a context's active span, if it is a valid one. */
export function spanContextOf(ctx: Context): SpanContext | undefined {
  const sc = trace.getSpanContext(ctx);
  return sc && trace.isSpanContextValid(sc) ? sc : undefined;
}

/** Writes the trace context (`traceparent`, `tracestate`) of `ctx` (default: the active one) into a carrier. */
export function injectContext<C>(carrier: C, setter: TextMapSetter<C>, ctx?: Context): void {
  if (!tracer) return;
  propagation.inject(ctx ?? context.active(), carrier, setter);
}

/** Reads a trace context from a carrier; the root context when there is none (or tracing is off). */
export function extractContext<C>(carrier: C, getter: TextMapGetter<C>): Context {
  if (!tracer) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, getter);
}

type Headers = Record<string, string | string[] | undefined>;

/** For Node's incoming headers (lower-case names) and plain header objects. */
export const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

export const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};
