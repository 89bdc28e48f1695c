import type { Readable } from "node:stream";
import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { meteredRequest, type InvokeInput } from "./invoke.js";
import { openMeter } from "./meter.js";
import { planInvocation, providerBody, targetOf } from "./plan.js";
import { ProviderError } from "./provider.js";
import { usageOf, type Usage } from "./settlement.js";
import { SseParser } from "./sse.js";
import { callFailure, providerSignal, USAGE_UNKNOWN_ABORTS } from "./provider-signal.js";

export type StreamMessage =
  | { start: { priceId: string; reservedUnits: bigint } }
  | { data: string }
  | { batch: string[] }
  | { failure: { errorCode: string; message: string } };

/**
 * Whether the provider's body has received its end (its source pushed the end; what is
 * buffered is still to be read). A body that has not is destroyed at `[DONE]`, as before;
 * one that has is read to its end instead, with nothing to abort.
 */
function endedOnTheWire(body: Readable): boolean {
  return (body as Readable & { _readableState?: { ended?: boolean } })._readableState?.ended === true;
}

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
 *  - the client leaves (`signal`, or a send that fails) → the relay stops (sends
 *    become no-ops) but a metered call does not: the provider's stream is read
 *    to its end and settled as above, as if the client had stayed (CONTRACT.md
 *    section 6, docs/decisions/0177), managed or byok;
 *  - the request's deadline passes → the provider call is aborted; completed if
 *    usage already came, else review (deadline_exceeded).
 * With `batches`, the events that one read of the provider's body delivered go as one
 * `batch` message (a single event as `data`): nothing waits for more, the first event
 * is as early as before, and the order is the provider's (docs/decisions/0310).
 */
export async function invokeChatStream({
  ctx,
  input,
  send,
  batches = false,
}: {
  ctx: ManagedAiContext;
  input: InvokeInput;
  /** Where the stream's messages go (the gRPC call); a send that fails ends the relay, not the metering. */
  send: (message: StreamMessage) => Promise<void>;
  /** The caller reads `batch` messages (InvokeRequest.stream_batches); else one `data` per event. */
  batches?: boolean;
}): Promise<void> {
  const plan = await planInvocation({ ctx, input: input });
  const meter = await openMeter({ ctx, input: { plan, request: meteredRequest(input, true, input.api ?? "chat_completions") } });
  const call = providerSignal(input);
  // Once the client is gone nothing is sent any more, and no send throws into the reading loop.
  let relaying = true;
  const relay = async (message: StreamMessage): Promise<void> => {
    if (relaying && input.signal.aborted) relaying = false;
    if (!relaying) return;
    try {
      await send(message);
    } catch {
      relaying = false;
    }
  };
  let body: Awaited<ReturnType<ManagedAiContext["provider"]["chat"]>>["body"];
  try {
    body = (await ctx.provider.chat({ ...targetOf(plan), body: providerBody(plan, true), signal: call.signal })).body;
  } catch (err) {
    call.dispose();
    const failure = callFailure(ctx.provider, err, call);
    if (USAGE_UNKNOWN_ABORTS.has(failure.code)) await meter.review(failure.code);
    else await meter.failed(failure.code);
    throw failure.appError;
  }

  let usage: Usage | null = null;
  let done = false;
  let interruption: ProviderError | null = null;
  try {
    await relay({ start: { priceId: plan.priceId, reservedUnits: plan.reservedUnits } });
    const parser = new SseParser();
    // The events of one read, relayed together once the read is parsed (or before a failure in it).
    const ready: string[] = [];
    const flush = async (): Promise<void> => {
      if (ready.length === 0) return;
      const events = ready.splice(0);
      if (batches && events.length > 1) await relay({ batch: events });
      else for (const data of events) await relay({ data });
    };
    // Leaving at `[DONE]` does not destroy the body (Node would, with an AbortError and its stack
    // trace, a request): the `finally` below lets a body that already ended end (docs/decisions/0311).
    for await (const chunk of body.iterator({ destroyOnReturn: false })) {
      for (const data of parser.push(chunk as Buffer)) {
        if (data === "[DONE]") {
          done = true;
          break;
        }
        let event: Record<string, unknown>;
        try {
          event = JSON.parse(data) as Record<string, unknown>;
        } catch {
          await flush();
          throw malformed();
        }
        usage = usageOf(event.usage) ?? usage;
        const usageOnly = Array.isArray(event.choices) && event.choices.length === 0 && event.usage !== undefined;
        if (usageOnly && !plan.request.includeUsage) continue;
        if (plan.mode === "managed") event.model = plan.modelAlias;
        ready.push(JSON.stringify(event));
      }
      await flush();
      if (done) break;
      // The deadline aborted the call: stop reading now.
      if (call.signal.aborted) break;
    }
  } catch (err) {
    if (!call.signal.aborted) interruption = ctx.provider.asTransportFailure(err, call.signal);
  } finally {
    call.dispose();
    if (done && endedOnTheWire(body)) {
      // Everything the provider sent has arrived (its connection is free again): read the rest, so it ends.
      body.resume();
    } else {
      body.on("error", () => undefined); // destroying may emit 'error' after the loop: never uncaught
      body.destroy();
    }
  }

  const aborted = call.reason();
  if (aborted) {
    if (usage) await meter.completed(usage);
    else await meter.review(aborted);
    return;
  }
  if (!done && !interruption) interruption = new ProviderError("stream_interrupted", new AppError("upstream_error", "The provider's stream ended early."));
  if (interruption) {
    if (usage) await meter.completed(usage);
    else await meter.review(interruption.code === "provider_malformed_response" ? interruption.code : "stream_interrupted");
    await relay({ failure: { errorCode: interruption.code, message: interruption.appError.message } });
    return;
  }
  if (usage) await meter.completed(usage);
  else await meter.review("usage_unavailable");
}
