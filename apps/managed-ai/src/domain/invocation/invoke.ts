import type { ManagedAiContext } from "../../db.js";
import { planInvocation, providerBody } from "./plan.js";
import { openReservation, settleCompleted, settleFailed, settleReview, usageOf } from "./settlement.js";

export type InvokeInput = {
  requestId: string;
  tenantId: string;
  apiKeyId: string | null;
  alias: string;
  body: Uint8Array;
  idempotencyKey: string | null;
  signal: AbortSignal;
};

export type InvokeResult = {
  priceId: string;
  reservedUnits: bigint;
  /** Absent when the provider reported no usage (the record is then in review). */
  finalUnits?: bigint;
  totalTokens?: number;
  body: Buffer;
};

/**
 * A metered chat completion answered as one JSON body: plan (validate, price
 * the worst case, 409 over max_cost), open the record and take the hold (402 on
 * insufficient balance, no provider call), call exactly one provider with the
 * effective max_tokens, settle to the cost of its reported usage.
 */
export async function invokeChat(ctx: ManagedAiContext, input: InvokeInput): Promise<InvokeResult> {
  const plan = await planInvocation(ctx, input);
  const opened = await openReservation(ctx, plan, { requestId: input.requestId, apiKeyId: input.apiKeyId, idempotencyKey: input.idempotencyKey, stream: false });
  let answer: Record<string, unknown>;
  try {
    const res = await ctx.provider.chat({ baseUrl: plan.upstream.baseUrl, apiKey: plan.upstream.apiKey, body: providerBody(plan, false), signal: input.signal });
    answer = await ctx.provider.json(res.body, input.signal);
  } catch (err) {
    const failure = ctx.provider.asTransportFailure(err, input.signal);
    // Nobody is waiting any more, and the provider may have done the work: an operator decides.
    if (failure.code === "client_disconnected") await settleReview(ctx, opened, plan, failure.code);
    else await settleFailed(ctx, opened, plan, failure.code);
    throw failure.appError;
  }
  answer.model = plan.modelAlias;
  const usage = usageOf(answer.usage);
  const result = { priceId: plan.priceId, reservedUnits: plan.reservedUnits, body: Buffer.from(JSON.stringify(answer)) };
  if (!usage) {
    await settleReview(ctx, opened, plan, "usage_unavailable");
    return result;
  }
  const finalUnits = await settleCompleted(ctx, opened, plan, usage);
  return { ...result, finalUnits, totalTokens: Number(usage.promptTokens + usage.completionTokens) };
}
