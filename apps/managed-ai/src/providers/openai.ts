import { performance } from "node:perf_hooks";
import { Agent, errors as undiciErrors, request, type Dispatcher } from "undici";
import { AppError } from "@gateway/errors";
import { checkUrl, egressPolicy as defaultEgressPolicy, guardedLookup, type EgressPolicy } from "@gateway/outbound";
import { ProviderError, type ChatCall, type Egress, type Provider, type ProviderResponse } from "../domain/invocation/provider.js";
import { failSpan, headerSetter, injectContext, NOOP_SPAN, SpanKind, startSpan, tracingEnabled, withSpan, type Span } from "@gateway/telemetry";

/**
 * One OpenAI-compatible chat API call per request (no retry, no fallback:
 * spec section 1). Failures become stable error codes that the usage record
 * keeps and clear answers for the client:
 *   provider_unreachable, provider_timeout → 502
 *   provider_error (5xx), provider_auth_failed (401/403), provider_not_found (404),
 *   provider_malformed_response → 502
 *   provider_rate_limited (429) → 503 with Retry-After
 *   provider_rejected (400/413/422, caused by the request) → the same 4xx
 */

export type ProviderTimeouts = {
  /** Until the provider's status line and headers arrive. */
  headersMs: number;
  /** Between two pieces of the body (a stalled stream). */
  idleMs: number;
};

export type ProviderCall = ChatCall & { path: "/chat/completions" | "/embeddings" };

const MAX_ERROR_BODY = 64 * 1024;

function providerMessage(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
    return typeof message === "string" ? message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

function failureFor(status: number, text: string, retryAfter: string | undefined): ProviderError {
  const detail = providerMessage(text);
  if (status === 400 || status === 413 || status === 422) {
    const code = status === 400 ? "invalid_request" : status === 413 ? "payload_too_large" : "validation_failed";
    return new ProviderError("provider_rejected", new AppError(code, `The provider refused the request: ${detail ?? `HTTP ${status}`}`));
  }
  if (status === 429) {
    const seconds = Number(retryAfter);
    return new ProviderError(
      "provider_rate_limited",
      new AppError("unavailable", "The provider is rate limiting; try again shortly.", Number.isFinite(seconds) && seconds > 0 ? { retryAfter: seconds } : {}),
    );
  }
  if (status === 401 || status === 403)
    return new ProviderError("provider_auth_failed", new AppError("upstream_error", "The provider refused the credentials it was given."));
  if (status === 404)
    return new ProviderError("provider_not_found", new AppError("upstream_error", "The provider does not know the requested model or route."));
  return new ProviderError("provider_error", new AppError("upstream_error", `The provider failed (HTTP ${status}).`));
}

const egressRefused = () =>
  new ProviderError("egress_refused", new AppError("upstream_error", "The provider's address is not allowed (it is not a public address)."));

function transportFailure(err: unknown, signal: AbortSignal | undefined): ProviderError {
  if (signal?.aborted) return new ProviderError("client_disconnected", new AppError("unavailable", "The request was cancelled."));
  const code = (err as { code?: string; cause?: { code?: string } })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
  if (code === "EGRESS_REFUSED") return egressRefused();
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError || err instanceof undiciErrors.ConnectTimeoutError) {
    return new ProviderError("provider_timeout", new AppError("upstream_error", "The provider did not answer in time."));
  }
  return new ProviderError("provider_unreachable", new AppError("upstream_error", "The provider could not be reached."));
}

/**
 * A keep-alive connection pool per process for provider calls: one for
 * operator upstreams, one whose sockets connect only to addresses the egress
 * policy allows (customer-supplied base URLs). The same code serves both.
 */
export type ProviderClientOptions = {
  /**
   * Called as a call starts; the function it returns, if any, is told how long the call
   * took (ms, until its body was read or dropped): the metrics' provider time.
   */
  onCall?: () => ((elapsedMs: number) => void) | undefined;
};

export class ProviderClient implements Provider {
  private readonly agent: Agent;
  private readonly guarded: Agent;

  constructor(
    timeouts: ProviderTimeouts,
    private readonly egressPolicy: EgressPolicy = defaultEgressPolicy(),
    private readonly hooks: ProviderClientOptions = {},
  ) {
    const options = { keepAliveTimeout: 30_000, connections: 256, headersTimeout: timeouts.headersMs, bodyTimeout: timeouts.idleMs };
    this.agent = new Agent(options);
    this.guarded = new Agent({ ...options, connect: { lookup: guardedLookup(egressPolicy) } });
  }

  /** Whether a customer-supplied base URL may be stored and called (syntax, scheme, every address public unless allowed). */
  async checkBaseUrl(baseUrl: string): Promise<{ ok: true } | { ok: false; reason: string }> {
    const check = await checkUrl(baseUrl, this.egressPolicy);
    return check.ok ? { ok: true } : { ok: false, reason: check.reason };
  }

  /**
   * POSTs `{base_url}/chat/completions`. Resolves once a 2xx status arrived
   * (the body still to be read); rejects with a ProviderError otherwise.
   */
  chat(call: ChatCall): Promise<ProviderResponse> {
    return this.post({ ...call, path: "/chat/completions" });
  }

  /** POSTs `{base_url}/embeddings`; as `chat`. */
  embeddings(call: ChatCall): Promise<ProviderResponse> {
    return this.post({ ...call, path: "/embeddings" });
  }

  /** GETs `{base_url}/models` and reads the JSON answer whole. */
  async models(call: Omit<ChatCall, "body">): Promise<Record<string, unknown>> {
    const res = await this.send(`${call.baseUrl}/models`, "GET", call, undefined);
    return this.json(res.body, call.signal);
  }

  private post(call: ProviderCall): Promise<ProviderResponse> {
    return this.send(`${call.baseUrl}${call.path}`, "POST", call, JSON.stringify(call.body));
  }

  /**
   * The call in a client span (when tracing is on) that lasts until the body is
   * read or dropped; its W3C `traceparent` goes to the provider, operator upstream
   * or customer base URL alike (docs/decisions/0163). The span holds the method,
   * route, host and status, never the key, the URL's path or query, or bodies.
   */
  private async send(url: string, method: "GET" | "POST", call: Omit<ChatCall, "body">, body: string | undefined): Promise<ProviderResponse> {
    const span = startProviderSpan(url, method, call.egress ?? "operator");
    const timed = this.hooks.onCall?.();
    const start = timed ? performance.now() : 0;
    try {
      const res = await this.sendInSpan(url, method, call, body, span);
      if (span !== NOOP_SPAN) res.body.once("close", () => span.end());
      if (timed) res.body.once("close", () => timed(performance.now() - start));
      return res;
    } catch (err) {
      failSpan(span, err);
      span.end();
      timed?.(performance.now() - start);
      throw err;
    }
  }

  private async sendInSpan(url: string, method: "GET" | "POST", call: Omit<ChatCall, "body">, body: string | undefined, span: Span): Promise<ProviderResponse> {
    const customer = call.egress === "customer";
    // A customer URL is checked now (literal addresses, scheme) and again at connect (names).
    if (customer && !(await checkUrl(url, this.egressPolicy)).ok) throw egressRefused();
    const headers: Record<string, string> = {
      authorization: `Bearer ${call.apiKey}`,
      accept: "application/json, text/event-stream",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    };
    if (span !== NOOP_SPAN) withSpan(span, () => injectContext(headers, headerSetter));
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        dispatcher: customer ? this.guarded : this.agent,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } catch (err) {
      throw transportFailure(err, call.signal);
    }
    span.setAttribute("http.response.status_code", res.statusCode);
    // The body outlives this call: its reader may stop (a client that left, a
    // failure) and destroy it, or the abort signal may destroy it before anyone
    // reads; undici then emits RequestAbortedError. Readers see errors through
    // their own iteration; this listener keeps an unread body's error from
    // becoming an uncaught exception that ends the process (issue 10).
    res.body.on("error", () => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { body: res.body };
    let text = "";
    try {
      for await (const chunk of res.body) {
        text += chunk.toString();
        if (text.length > MAX_ERROR_BODY) break;
      }
    } catch {
      // The status says enough.
    }
    const retryAfter = res.headers["retry-after"];
    throw failureFor(res.statusCode, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  }

  /** Reads a JSON body whole; a body that is not JSON is a malformed answer. */
  async json(body: ProviderResponse["body"], signal?: AbortSignal): Promise<Record<string, unknown>> {
    let text: string;
    try {
      text = await body.text();
    } catch (err) {
      throw transportFailure(err, signal);
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // below
    }
    throw new ProviderError("provider_malformed_response", new AppError("upstream_error", "The provider answered something that is not a chat completion."));
  }

  asTransportFailure(err: unknown, signal?: AbortSignal): ProviderError {
    return err instanceof ProviderError ? err : transportFailure(err, signal);
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.guarded.close()]);
  }
}

/** The path's last segment is the route (`/chat/completions`, `/embeddings`, `/models`); the rest of a base URL may be anything. */
const ROUTES = ["/chat/completions", "/embeddings", "/models"];

function startProviderSpan(url: string, method: string, egress: Egress): Span {
  if (!tracingEnabled()) return NOOP_SPAN;
  const span = startSpan(method, { kind: SpanKind.CLIENT });
  const route = ROUTES.find((r) => url.endsWith(r));
  if (route) span.updateName(`${method} ${route}`);
  span.setAttribute("http.request.method", method);
  span.setAttribute("gateway.egress", egress);
  try {
    const parsed = new URL(url);
    span.setAttribute("server.address", parsed.hostname);
    if (parsed.port) span.setAttribute("server.port", Number(parsed.port));
  } catch {
    // the request itself reports a bad URL
  }
  return span;
}
