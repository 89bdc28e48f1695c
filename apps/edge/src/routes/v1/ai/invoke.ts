import { once } from "node:events";
import type { Response } from "express";
import { AppError } from "@gateway/errors";
import type { managedAi } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import type { Principal } from "../../../domain/principal.js";
import type { InvokeHeaders } from "./ai.types.js";
import { unitsToUsdString } from "@gateway/contract/money";

/**
 * What the AI invocation routes share: the call to managed-ai, the client
 * disconnect that cancels it, the cost headers, and the one stream relay
 * (compatible and native streams differ only in how an event is written).
 */
export function invokeRequest(headers: InvokeHeaders, alias: string, principal: Principal, body: Buffer): managedAi.InvokeRequest {
  const key = keyPrincipal(principal);
  const idempotencyKey = headers["Idempotency-Key"];
  return {
    tenant_id: key.tenantId,
    api_key_id: key.keyId,
    alias,
    body,
    idempotency_key: idempotencyKey ?? "",
    ...(key.budget ? { key_budget_units: key.budget.units.toString(), key_budget_period: key.budget.period } : {}),
  };
}

/**
 * Aborted when the client goes away before the answer is complete. The edge
 * then cancels its gRPC call and writes nothing more; the settlement is not the
 * edge's: managed-ai finishes a metered call without it (docs/decisions/0177),
 * so nothing is lost when the edge lets go, or stops, at that point.
 */
export function cancelOnClose(res: Response): AbortController {
  const cancel = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) cancel.abort();
  });
  return cancel;
}

/**
 * Cost headers of a JSON answer. The price version exists for managed
 * instances only (byok estimates come from the instance's own pricing).
 */
export function setCostHeaders(res: Response, result: managedAi.InvokeResponse__Output, options: { priceVersion: boolean }): void {
  if (options.priceVersion && result.pricing?.price_id) res.setHeader("X-Service-Price-Version", result.pricing.price_id);
  res.setHeader("X-Service-Estimated-Cost", unitsToUsdString(result.pricing?.reserved_units ?? "0"));
  if (result.final_units !== undefined) res.setHeader("X-Service-Final-Cost", unitsToUsdString(result.final_units));
  if (result.total_tokens !== undefined) res.setHeader("X-Service-Total-Tokens", String(result.total_tokens));
}

/**
 * A JSON answer: managed-ai's bytes as they are, with the headers express's
 * `res.type("application/json").send(body)` sets for them (its settings lookups
 * and MIME lookup are left out; the answer is the same).
 */
export function sendJson(res: Response, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", String(body.length));
  res.end(body);
}

async function write(res: Response, text: string): Promise<void> {
  if (!res.write(text)) await Promise.race([once(res, "drain"), once(res, "close")]);
}

export function sseError(code: string, message: string): string {
  return `data: ${JSON.stringify({ error: { code, message } })}\n\n`;
}

export type StreamShape = {
  /** Whether X-Service-Price-Version is sent (compatible streams). */
  priceVersion: boolean;
  /** The SSE text for one data payload (may be empty); `name` is its event name, "" for none. */
  event(data: string, name: string): string;
  /** The SSE text before the last line. */
  end(): string;
  /** The last line of a stream that completed; default `data: [DONE]`. */
  done?: string;
  /** The SSE text of a failure after the stream started; default the contract's `data: {error: {code, message}}`. */
  failure?(code: string, message: string): string;
};

/**
 * Relays an InvokeStream call as server-sent events. Until managed-ai says
 * `start`, failures are ordinary error answers; after it, the headers (the
 * estimated cost, never the final one) are out, events are written as they
 * arrive (backpressure flows back to the provider), and a failure ends the
 * stream with an `error` event and without `[DONE]`. A `batch` (the events of one
 * read of the provider, for a call that asked for them with `stream_batches`) is
 * written as one write, its events in order.
 */
export async function relayStream(
  deps: EdgeDeps,
  res: Response,
  stream: AsyncIterable<managedAi.InvokeStreamMessage__Output> & { cancel(): void },
  cancel: AbortController,
  shape: StreamShape,
): Promise<{ written: true }> {
  const messages = stream[Symbol.asyncIterator]();
  // Whatever ends the route (a failure, a client that left), the call ends with it.
  res.once("close", () => stream.cancel());
  const first = await messages.next(); // errors before `start` are ordinary answers
  if (first.done || first.value.kind !== "start" || !first.value.start) throw new AppError("internal_error", "The stream did not start.");
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
    ...(shape.priceVersion && first.value.start.price_id ? { "X-Service-Price-Version": first.value.start.price_id } : {}),
    "X-Service-Estimated-Cost": unitsToUsdString(first.value.start.reserved_units),
  });
  res.flushHeaders();
  try {
    for (let next = await messages.next(); !next.done; next = await messages.next()) {
      const message = next.value;
      if (message.kind === "data" && message.data !== undefined) {
        const text = shape.event(message.data, message.event);
        if (text) await write(res, text);
      } else if (message.kind === "batch" && message.batch) {
        // The events of one read of the provider's stream (docs/decisions/0310): one write, in order.
        let text = "";
        for (const data of message.batch.data) text += shape.event(data, "");
        if (text) await write(res, text);
      } else if (message.kind === "failure" && message.failure) {
        res.end((shape.failure ?? sseError)(message.failure.error_code, message.failure.message));
        return { written: true };
      }
    }
    res.end(`${shape.end()}${shape.done ?? "data: [DONE]\n\n"}`);
  } catch (err) {
    if (!res.writableEnded && !cancel.signal.aborted) {
      const e = err instanceof AppError ? err : new AppError("internal_error", "internal error");
      deps.logger.warn({ err }, "stream ended by a failure after it started");
      res.end((shape.failure ?? sseError)(e.code, e.message));
    }
  }
  return { written: true };
}
