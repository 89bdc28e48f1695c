import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import type { InvokeInput } from "./invoke.js";
import { openMeter } from "./meter.js";
import { planInvocation, providerBody, targetOf } from "./plan.js";
import { ProviderError } from "../../providers/openai.js";
import { usageOf, type Usage } from "./settlement.js";
import { SseParser } from "./sse.js";

export type StreamMessage = { start: { priceId: string; reservedUnits: bigint } } | { data: string } | { failure: { errorCode: string; message: string } };

const malformed = () => new ProviderError("provider_malformed_response", new AppError("upstream_error", "The provider sent a stream event that is not JSON."));

/**
 * A chat completion as a stream, managed (metered) or byok (not charged; the
 * meter only prices the usage), through the same code. Until the provider has accepted the
 * request every failure is an ordinary error answer (402, 409, 502...); after
 * `start`, the provider's events pass through one by one as they arrive, and
 * the request settles after the provider's last byte:
 *  - [DONE] with usage → completed, charged from the usage;
 *  - [DONE] without usage → review (usage_unavailable), the hold stays;
 *  - the provider breaks off → completed if usage already came, else review
 *    (stream_interrupted), and a `failure` message ends the stream;
 *  - the client leaves (`signal`) → the provider call is aborted; completed if
 *    usage already came, else review (client_disconnected).
 */
export async function invokeChatStream(ctx: ManagedAiContext, input: InvokeInput, send: (message: StreamMessage) => Promise<void>): Promise<void> {
  const plan = await planInvocation(ctx, input);
  const meter = await openMeter(ctx, plan, { requestId: input.requestId, apiKeyId: input.apiKeyId, idempotencyKey: input.idempotencyKey, stream: true , keyBudget: input.keyBudget });
  const abort = new AbortController();
  const onClientGone = () => abort.abort();
  input.signal.addEventListener("abort", onClientGone, { once: true });
  let body;
  try {
    body = (await ctx.provider.chat({ ...targetOf(plan), body: providerBody(plan, true), signal: abort.signal })).body;
  } catch (err) {
    input.signal.removeEventListener("abort", onClientGone);
    const failure = ctx.provider.asTransportFailure(err, abort.signal);
    if (failure.code === "client_disconnected") await meter.review(failure.code);
    else await meter.failed(failure.code);
    throw failure.appError;
  }

  let usage: Usage | null = null;
  let done = false;
  let interruption: ProviderError | null = null;
  try {
    await send({ start: { priceId: plan.priceId, reservedUnits: plan.reservedUnits } });
    const parser = new SseParser();
    outer: for await (const chunk of body) {
      for (const data of parser.push(chunk as Buffer)) {
        if (data === "[DONE]") {
          done = true;
          break outer;
        }
        let event: Record<string, unknown>;
        try {
          event = JSON.parse(data) as Record<string, unknown>;
        } catch {
          throw malformed();
        }
        usage = usageOf(event.usage) ?? usage;
        const usageOnly = Array.isArray(event.choices) && event.choices.length === 0 && event.usage !== undefined;
        if (usageOnly && !plan.request.includeUsage) continue;
        if (plan.mode === "managed") event.model = plan.modelAlias;
        await send({ data: JSON.stringify(event) });
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) interruption = ctx.provider.asTransportFailure(err, abort.signal);
  } finally {
    input.signal.removeEventListener("abort", onClientGone);
    if (!done) {
      body.on("error", () => undefined); // destroying may emit 'error' after the loop: never uncaught
      body.destroy();
    }
  }

  if (abort.signal.aborted || input.signal.aborted) {
    if (usage) await meter.completed(usage);
    else await meter.review("client_disconnected");
    return;
  }
  if (!done && !interruption) interruption = new ProviderError("stream_interrupted", new AppError("upstream_error", "The provider's stream ended early."));
  if (interruption) {
    if (usage) await meter.completed(usage);
    else await meter.review(interruption.code === "provider_malformed_response" ? interruption.code : "stream_interrupted");
    await send({ failure: { errorCode: interruption.code, message: interruption.appError.message } }).catch(() => undefined);
    return;
  }
  if (usage) await meter.completed(usage);
  else await meter.review("usage_unavailable");
}

