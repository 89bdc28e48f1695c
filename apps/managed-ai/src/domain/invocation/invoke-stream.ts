import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import type { InvokeInput } from "./invoke.js";
import { planInvocation, providerBody } from "./plan.js";
import { ProviderError } from "../../providers/openai.js";
import { openReservation, settleCompleted, settleFailed, settleReview, usageOf, type Usage } from "./settlement.js";
import { SseParser } from "./sse.js";

export type StreamMessage = { start: { priceId: string; reservedUnits: bigint } } | { data: string } | { failure: { errorCode: string; message: string } };

const malformed = () => new ProviderError("provider_malformed_response", new AppError("upstream_error", "The provider sent a stream event that is not JSON."));

/**
 * A metered chat completion as a stream. Until the provider has accepted the
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
  const opened = await openReservation(ctx, plan, { requestId: input.requestId, apiKeyId: input.apiKeyId, idempotencyKey: input.idempotencyKey, stream: true });
  const abort = new AbortController();
  const onClientGone = () => abort.abort();
  input.signal.addEventListener("abort", onClientGone, { once: true });
  let body;
  try {
    body = (await ctx.provider.chat({ baseUrl: plan.upstream.baseUrl, apiKey: plan.upstream.apiKey, body: providerBody(plan, true), signal: abort.signal })).body;
  } catch (err) {
    input.signal.removeEventListener("abort", onClientGone);
    const failure = ctx.provider.asTransportFailure(err, abort.signal);
    if (failure.code === "client_disconnected") await settleReview(ctx, opened, plan, failure.code);
    else await settleFailed(ctx, opened, plan, failure.code);
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
        event.model = plan.modelAlias;
        await send({ data: JSON.stringify(event) });
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) interruption = ctx.provider.asTransportFailure(err, abort.signal);
  } finally {
    input.signal.removeEventListener("abort", onClientGone);
    if (!done) body.destroy();
  }

  if (abort.signal.aborted || input.signal.aborted) {
    if (usage) await settleCompleted(ctx, opened, plan, usage);
    else await settleReview(ctx, opened, plan, "client_disconnected");
    return;
  }
  if (!done && !interruption) interruption = new ProviderError("stream_interrupted", new AppError("upstream_error", "The provider's stream ended early."));
  if (interruption) {
    if (usage) await settleCompleted(ctx, opened, plan, usage);
    else await settleReview(ctx, opened, plan, interruption.code === "provider_malformed_response" ? interruption.code : "stream_interrupted");
    await send({ failure: { errorCode: interruption.code, message: interruption.appError.message } }).catch(() => undefined);
    return;
  }
  if (usage) await settleCompleted(ctx, opened, plan, usage);
  else await settleReview(ctx, opened, plan, "usage_unavailable");
}

