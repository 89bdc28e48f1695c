import type { Dispatcher } from "undici";
import type { AppError } from "@gateway/errors";

/** A provider call that failed: the gateway's code for what happened, and the error the caller is answered with. */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  constructor(
    readonly code: string,
    readonly appError: AppError,
  ) {
    super(`${code}: ${appError.message}`);
  }
}

/**
 * Where a call goes. `operator`: an upstream an operator configured (trusted,
 * any address). `customer`: a base URL a customer supplied (bring-your-own-key):
 * checked against the egress policy before the call and again when the socket
 * connects (DNS pinned to checked addresses), so it cannot reach private networks.
 */
export type Egress = "operator" | "customer";

export type ChatCall = {
  baseUrl: string;
  apiKey: string;
  body: Record<string, unknown>;
  signal?: AbortSignal;
  egress?: Egress;
};

export type ProviderResponse = { body: Dispatcher.ResponseData["body"] };

/** The domain's port to the providers (OpenAI-compatible HTTP APIs); providers/openai.ts is its adapter. */
export type Provider = {
  /** Whether a customer-supplied base URL may be stored and called (syntax, scheme, every address public unless allowed). */
  checkBaseUrl(baseUrl: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** POSTs `{base_url}/chat/completions`; resolves once a 2xx status arrived, rejects with a ProviderError otherwise. */
  chat(call: ChatCall): Promise<ProviderResponse>;
  /** POSTs `{base_url}/embeddings`, as `chat`. */
  embeddings(call: ChatCall): Promise<ProviderResponse>;
  /** GETs `{base_url}/models` (an upstream's connection test). */
  models(call: Omit<ChatCall, "body">): Promise<Record<string, unknown>>;
  /** Reads a JSON body whole; a body that is not JSON is a malformed answer. */
  json(body: ProviderResponse["body"], signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** The ProviderError for anything a call threw (a ProviderError as it is). */
  asTransportFailure(err: unknown, signal?: AbortSignal): ProviderError;
  close(): Promise<void>;
};
