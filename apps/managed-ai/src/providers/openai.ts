import { Agent, errors as undiciErrors, request, type Dispatcher } from "undici";
import { AppError } from "@gateway/errors";

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

export class ProviderError extends Error {
  override readonly name = "ProviderError";
  constructor(
    readonly code: string,
    readonly appError: AppError,
  ) {
    super(`${code}: ${appError.message}`);
  }
}

export type ProviderTimeouts = {
  /** Until the provider's status line and headers arrive. */
  headersMs: number;
  /** Between two pieces of the body (a stalled stream). */
  idleMs: number;
};

export type ChatCall = {
  baseUrl: string;
  apiKey: string;
  body: Record<string, unknown>;
  signal?: AbortSignal;
};

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
  if (status === 401 || status === 403) return new ProviderError("provider_auth_failed", new AppError("upstream_error", "The provider refused the gateway's credentials."));
  if (status === 404) return new ProviderError("provider_not_found", new AppError("upstream_error", "The provider does not know the configured model."));
  return new ProviderError("provider_error", new AppError("upstream_error", `The provider failed (HTTP ${status}).`));
}

function transportFailure(err: unknown, signal: AbortSignal | undefined): ProviderError {
  if (signal?.aborted) return new ProviderError("client_disconnected", new AppError("unavailable", "The request was cancelled."));
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError || err instanceof undiciErrors.ConnectTimeoutError) {
    return new ProviderError("provider_timeout", new AppError("upstream_error", "The provider did not answer in time."));
  }
  return new ProviderError("provider_unreachable", new AppError("upstream_error", "The provider could not be reached."));
}

export type ProviderResponse = { body: Dispatcher.ResponseData["body"] };

/** A keep-alive connection pool per process for provider calls. */
export class ProviderClient {
  private readonly agent: Agent;

  constructor(private readonly timeouts: ProviderTimeouts) {
    this.agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, headersTimeout: timeouts.headersMs, bodyTimeout: timeouts.idleMs });
  }

  /**
   * POSTs `{base_url}/chat/completions`. Resolves once a 2xx status arrived
   * (the body still to be read); rejects with a ProviderError otherwise.
   */
  async chat(call: ChatCall): Promise<ProviderResponse> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${call.baseUrl}/chat/completions`, {
        method: "POST",
        dispatcher: this.agent,
        headers: { authorization: `Bearer ${call.apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(call.body),
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } catch (err) {
      throw transportFailure(err, call.signal);
    }
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
    await this.agent.close();
  }
}
