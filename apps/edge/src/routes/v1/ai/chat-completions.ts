import { once } from "node:events";
import type { Response } from "express";
import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { IdempotencyKey, unitsToUsd } from "../../../http/units.js";
import { AliasParams, ChatCompletionRequest, ChatCompletionResponse, COST_HEADERS } from "./ai.types.js";

async function write(res: Response, text: string): Promise<void> {
  if (!res.write(text)) await Promise.race([once(res, "drain"), once(res, "close")]);
}

function sseError(code: string, message: string): string {
  return `data: ${JSON.stringify({ error: { code, message } })}\n\n`;
}

/**
 * `POST /v1/apps/ai/{alias}/v1/chat/completions`: metered, OpenAI-compatible.
 * JSON answers come from a unary call; streams from a server-streaming call whose
 * events are written as they arrive (backpressure flows back to the provider).
 * Until managed-ai says `start`, failures are ordinary error answers; after it,
 * a failure ends the stream with an `error` event and without `[DONE]`. A client
 * that goes away cancels the call, which aborts the provider call.
 */
export const postChatCompletions = defineRoute<EdgeDeps, AliasParams, Record<string, never>, unknown>({
  method: "post",
  path: "/v1/apps/ai/:alias/v1/chat/completions",
  summary: "Metered chat completion (OpenAI-compatible), JSON or server-sent events.",
  tags: ["ai"],
  access: { kind: "apiKey", scope: "ai:invoke", service: { type: "ai-model", aliasParam: "alias" } },
  params: AliasParams,
  body: ChatCompletionRequest,
  headers: { "Idempotency-Key": { description: "1-128 of A-Z a-z 0-9 . _ : -; a reuse within 24 h by the same key gets 409 and nothing is replayed." } },
  responses: {
    200: {
      description: "The provider's answer (JSON), or an SSE stream ending with `data: [DONE]`",
      schema: ChatCompletionResponse,
      headers: { ...COST_HEADERS, "X-Service-Final-Cost": "The charge, USD with four decimals (JSON answers only)." },
    },
    402: { description: "insufficient balance; no provider call" },
    404: { description: "no such instance" },
    409: { description: "worst case above max_cost (pricing.cost), or Idempotency-Key reused" },
    502: { description: "the provider failed; the reservation was released" },
  },
  async handler({ deps, req, res, params, principal }) {
    const key = keyPrincipal(principal);
    const idempotencyKey = req.header("idempotency-key");
    if (idempotencyKey !== undefined && !IdempotencyKey.safeParse(idempotencyKey).success) {
      throw new AppError("invalid_request", "Idempotency-Key must be 1-128 of A-Z a-z 0-9 . _ : -");
    }
    const input = { tenant_id: key.tenantId, api_key_id: key.keyId, alias: params.alias, body: req.rawBody ?? Buffer.from("{}"), idempotency_key: idempotencyKey ?? "" };
    const cancel = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) cancel.abort();
    });

    if ((req.body as { stream?: unknown }).stream !== true) {
      const result = await deps.services.managedAi.Invoke(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
      res.setHeader("X-Service-Price-Version", result.pricing?.price_id ?? "");
      res.setHeader("X-Service-Estimated-Cost", unitsToUsd(result.pricing?.reserved_units ?? "0"));
      if (result.final_units !== undefined) res.setHeader("X-Service-Final-Cost", unitsToUsd(result.final_units));
      if (result.total_tokens !== undefined) res.setHeader("X-Service-Total-Tokens", String(result.total_tokens));
      res.status(200).type("application/json").send(result.body);
      return { written: true };
    }

    const stream = deps.services.managedAi.InvokeStream(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    const messages = stream[Symbol.asyncIterator]();
    const first = await messages.next(); // errors before `start` are ordinary answers
    if (first.done || first.value.kind !== "start" || !first.value.start) throw new AppError("internal_error", "The stream did not start.");
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      "X-Service-Price-Version": first.value.start.price_id,
      "X-Service-Estimated-Cost": unitsToUsd(first.value.start.reserved_units),
    });
    res.flushHeaders();
    try {
      for (let next = await messages.next(); !next.done; next = await messages.next()) {
        const message = next.value;
        if (message.kind === "data" && message.data !== undefined) await write(res, `data: ${message.data}\n\n`);
        else if (message.kind === "failure" && message.failure) {
          res.end(sseError(message.failure.error_code, message.failure.message));
          return { written: true };
        }
      }
      res.end("data: [DONE]\n\n");
    } catch (err) {
      if (!res.writableEnded && !cancel.signal.aborted) {
        const e = err instanceof AppError ? err : new AppError("internal_error", "internal error");
        deps.logger.warn({ err }, "stream ended by a failure after it started");
        res.end(sseError(e.code, e.message));
      }
    }
    return { written: true };
  },
});
