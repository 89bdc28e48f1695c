import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { complete, completionBody, parseChatRequest, writeStream, type UsageOverride } from "./chat.js";
import type { CallSpec } from "./tools.js";
import { embeddingsBody, parseEmbeddingsRequest } from "./embeddings.js";
import { errorTypeFor, sendError, sendJson } from "./http.js";

export type MockProviderOptions = {
  /** The one API key accepted as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Model ids of the listing; default `mock-small`, `mock-large`. */
  models?: string[];
};

/** How the provider misbehaves, for tests of the gateway's failure handling. */
export type Behaviour = {
  /** Answer every request with this status and an OpenAI-shaped error (before the key check). */
  failStatus?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Wait this long before each content chunk of a stream (a slow model). */
  chunkDelayMs?: number;
  /** Destroy the connection without an answer, or a stream after its first content chunk. */
  drop?: "before-response" | "mid-stream";
  /** End streams without the usage chunk even when `stream_options.include_usage` asks for it. */
  omitUsage?: boolean;
  /** Report this usage instead of the counted one (e.g. more than was asked for). */
  usage?: UsageOverride;
  /** When the request offers tools, call these (name and raw arguments) instead of the first tool. */
  toolCalls?: CallSpec[];
  /** Refuse: every choice answers `message.refusal` with this text and `content: null`. */
  refusal?: string;
};

/** One request as it arrived; `body` is parsed JSON, the raw text if it is not JSON, or undefined. */
export type RecordedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
};

export type MockProvider = {
  /** Base URL of the API, ending in `/v1` (what an upstream's `base_url` is set to). */
  url: string;
  port: number;
  /** Every request received, oldest first. */
  requests: RecordedRequest[];
  /** Paths of streams whose client went away before the end. */
  abandoned: string[];
  behaviour(): Readonly<Behaviour>;
  /** Merges into the current behaviour (`undefined` values clear a setting). */
  set(behaviour: Behaviour): void;
  /** Back to normal behaviour; forgets recorded requests. */
  reset(): void;
  close(): Promise<void>;
};

const DEFAULT_MODELS = ["mock-small", "mock-large"];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts an OpenAI-compatible provider on node:http: `GET /v1/models`,
 * `POST /v1/chat/completions` (JSON, or SSE with `stream: true`; tool calls,
 * `n` choices, response formats, logprobs: see chat.ts and tools.ts) and
 * `POST /v1/embeddings` (see embeddings.ts), all behind a
 * Bearer key check (401 in OpenAI's error shape). Answers and token counts are
 * deterministic (see tokens.ts).
 */
export async function startMockProvider(options: MockProviderOptions): Promise<MockProvider> {
  const models = options.models ?? DEFAULT_MODELS;
  const requests: RecordedRequest[] = [];
  const abandoned: string[] = [];
  let behaviour: Behaviour = {};
  let counter = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://mock").pathname;
    const body = parseBody(await readBody(req));
    requests.push({ method: req.method ?? "GET", path, headers: headersOf(req), body });
    const b = behaviour;

    if (b.delayMs) await sleep(b.delayMs);
    if (res.destroyed) return;
    if (b.drop === "before-response") {
      req.socket.destroy();
      return;
    }
    if (b.failStatus)
      return sendError(res, b.failStatus, `The mock provider was told to fail with ${b.failStatus}.`, errorTypeFor(b.failStatus), "mock_failure");

    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (auth !== options.apiKey) {
      return sendError(res, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
    }

    if (req.method === "GET" && path === "/v1/models") {
      return sendJson(res, 200, { object: "list", data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "mock-provider" })) });
    }
    if (req.method === "POST" && path === "/v1/chat/completions") {
      const chat = parseChatRequest(body);
      if (typeof chat === "string") return sendError(res, 400, chat, "invalid_request_error");
      counter += 1;
      const completion = complete(chat, `chatcmpl-mock-${counter}`, { usage: b.usage, toolCalls: b.toolCalls, refusal: b.refusal });
      if (!chat.stream) return sendJson(res, 200, completionBody(completion));
      return writeStream(res, completion, {
        includeUsage: chat.includeUsage && !b.omitUsage,
        dropMidStream: b.drop === "mid-stream",
        ...(b.chunkDelayMs ? { chunkDelayMs: b.chunkDelayMs } : {}),
        onClientGone: () => abandoned.push(req.url ?? ""),
      });
    }
    if (req.method === "POST" && path === "/v1/embeddings") {
      const embeddings = parseEmbeddingsRequest(body);
      if (typeof embeddings === "string") return sendError(res, 400, embeddings, "invalid_request_error");
      return sendJson(res, 200, embeddingsBody(embeddings));
    }
    return sendError(res, 404, `Unknown request URL: ${req.method} ${path}.`, "invalid_request_error", "unknown_url");
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 500, "The mock provider failed.", "server_error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? "127.0.0.1";

  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/v1`,
    port,
    requests,
    abandoned,
    behaviour: () => behaviour,
    set(next) {
      behaviour = { ...behaviour, ...next };
    },
    reset() {
      behaviour = {};
      requests.length = 0;
      abandoned.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
