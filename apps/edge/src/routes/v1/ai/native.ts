import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import {
  AliasParams,
  ChatCompletionRequest,
  INVOKE_ACCESS,
  INVOKE_ERRORS,
  type InvokeHeaders,
  NATIVE_COST_HEADERS,
  NativeChatResponse,
  NativeEmbeddingsRequest,
  NativeEmbeddingsResponse,
  SameInvokeHeaders,
} from "./ai.types.js";
import { cancelOnClose, invokeRequest, relayStream, setCostHeaders } from "./invoke.js";

/*
 * The native AI routes (CONTRACT.md section 7) on any ai-model instance,
 * managed (metered exactly as the compatible route) or byok: the same
 * managed-ai calls as the compatible routes, answered in the gateway's shape.
 */

type Json = Record<string, unknown>;
const usageOf = (u: unknown) => {
  const usage = u as { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown } | null | undefined;
  if (!usage || typeof usage.prompt_tokens !== "number") return null;
  const completion = typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0;
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: completion,
    total_tokens: typeof usage.total_tokens === "number" ? usage.total_tokens : usage.prompt_tokens + completion,
  };
};

function parse(body: Buffer | string): Json {
  try {
    return JSON.parse(body.toString()) as Json;
  } catch {
    throw new AppError("upstream_error", "The provider answered something that is not JSON.");
  }
}

/** What the two native chat routes take alike: an instance's alias, the compatible body, the invocation headers (hot path). */
const NATIVE_CHAT = {
  tags: ["ai"],
  hot: true as const,
  access: INVOKE_ACCESS,
  params: AliasParams,
  body: ChatCompletionRequest as never,
  headers: SameInvokeHeaders,
};

export const postNativeChat = defineRoute<EdgeDeps, AliasParams, Record<string, never>, Json, InvokeHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/chat",
  summary: "Chat (native shape, spec 2.5 body): `{data: {id, model, content, finish_reason, usage}}`.",
  ...NATIVE_CHAT,
  responses: { 200: { description: "the answer", schema: NativeChatResponse, headers: NATIVE_COST_HEADERS }, ...INVOKE_ERRORS },
  async handler({ deps, res, params, headers, principal, body }) {
    const input = invokeRequest(headers, params.alias, principal, Buffer.from(JSON.stringify({ ...body, stream: false })));
    const cancel = cancelOnClose(res);
    const result = await deps.services.managedAi.Invoke(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    const answer = parse(result.body);
    const choice = ((answer.choices as Json[] | undefined) ?? [])[0] ?? {};
    const message = (choice.message as Json | undefined) ?? {};
    setCostHeaders(res, result, { priceVersion: false });
    return {
      status: 200,
      body: {
        data: {
          id: String(answer.id ?? ""),
          model: String(answer.model ?? ""),
          content: typeof message.content === "string" ? message.content : null,
          finish_reason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
          usage: usageOf(answer.usage),
        },
      },
    };
  },
});

export const postNativeChatStream = defineRoute<EdgeDeps, AliasParams, Record<string, never>, Json, InvokeHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/chat/stream",
  summary: 'Chat as server-sent events: `{"delta": "..."}`, then `{"finish_reason", "usage"}`, then `[DONE]`.',
  ...NATIVE_CHAT,
  responses: {
    200: {
      description: "SSE stream ending with `data: [DONE]`",
      contentType: "text/event-stream",
      headers: { "X-Service-Estimated-Cost": NATIVE_COST_HEADERS["X-Service-Estimated-Cost"] },
    },
    ...INVOKE_ERRORS,
  },
  async handler({ deps, res, params, headers, principal, body }) {
    const forwarded = { ...body, stream: true, stream_options: { include_usage: true } };
    const input = invokeRequest(headers, params.alias, principal, Buffer.from(JSON.stringify(forwarded)));
    const cancel = cancelOnClose(res);
    const stream = deps.services.managedAi.InvokeStream({ ...input, stream_batches: true }, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    let finishReason: string | null = null;
    let usage: ReturnType<typeof usageOf> = null;
    return relayStream(deps, res, stream, cancel, {
      priceVersion: false,
      event(data) {
        let chunk: Json;
        try {
          chunk = JSON.parse(data) as Json;
        } catch {
          return "";
        }
        usage = usageOf(chunk.usage) ?? usage;
        let out = "";
        for (const choice of (chunk.choices as Json[] | undefined) ?? []) {
          const content = (choice.delta as Json | undefined)?.content;
          if (typeof content === "string" && content !== "") out += `data: ${JSON.stringify({ delta: content })}\n\n`;
          if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
        }
        return out;
      },
      end: () => `data: ${JSON.stringify({ finish_reason: finishReason, usage })}\n\n`,
    });
  },
});

export const postNativeEmbeddings = defineRoute<EdgeDeps, AliasParams, Record<string, never>, NativeEmbeddingsRequest, InvokeHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/embeddings",
  summary: "Embeddings (native shape): `{data: {model, embeddings, usage}}`.",
  tags: ["ai"],
  hot: true,
  access: INVOKE_ACCESS,
  params: AliasParams,
  body: NativeEmbeddingsRequest,
  headers: SameInvokeHeaders,
  responses: { 200: { description: "the vectors, in input order", schema: NativeEmbeddingsResponse, headers: NATIVE_COST_HEADERS }, ...INVOKE_ERRORS },
  async handler({ deps, res, params, headers, principal, body }) {
    const forwarded = {
      input: body.input,
      ...(body.model !== undefined ? { model: body.model } : {}),
      ...(body.max_cost !== undefined ? { max_cost: body.max_cost } : {}),
    };
    const input = invokeRequest(headers, params.alias, principal, Buffer.from(JSON.stringify(forwarded)));
    const cancel = cancelOnClose(res);
    const result = await deps.services.managedAi.Embed(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    const answer = parse(result.body);
    const items = [...((answer.data as { index?: number; embedding?: unknown }[] | undefined) ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    if (!items.every((i) => Array.isArray(i.embedding))) throw new AppError("upstream_error", "The provider answered embeddings that are not number arrays.");
    const usage = usageOf(answer.usage);
    setCostHeaders(res, result, { priceVersion: false });
    return {
      status: 200,
      body: {
        data: {
          model: String(answer.model ?? ""),
          embeddings: items.map((i) => i.embedding as number[]),
          usage: usage ? { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens } : null,
        },
      },
    };
  },
});
