import type { ManagedAiContext } from "../context.js";
import type { Budget } from "../budgets/budget.js";
import { openMeter } from "./meter.js";
import { planInvocation, providerBody, targetOf, type Plan } from "./plan.js";
import { callFailure, providerSignal, USAGE_UNKNOWN_ABORTS } from "./provider-signal.js";
import { usageOf, type Api, type Usage } from "./settlement.js";

export type InvokeInput = {
  requestId: string;
  tenantId: string;
  apiKeyId: string | null;
  alias: string;
  body: Uint8Array;
  idempotencyKey: string | null;
  /** Aborted when the client leaves (the edge cancels the call). */
  signal: AbortSignal;
  /** The request's deadline (the gRPC deadline): no provider call runs past it. */
  deadline?: Date | undefined;
  /** The API key's spend budget as the edge forwarded it (docs/decisions/0024). */
  keyBudget?: Budget | null;
  /** The API the request came through, for its usage record (default chat_completions). */
  api?: Api;
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
 * A chat completion answered as one JSON body: plan (validate, price the
 * worst case, 409 over max_cost), open the meter (managed: the record and the
 * hold, 402 on insufficient balance, no provider call), call exactly one
 * provider with the effective max_tokens, settle to the cost of its reported
 * usage. A byok answer is the provider's, unchanged; a managed one names the
 * model alias.
 *
 * A client that leaves does not stop a metered call (CONTRACT.md section 6):
 * the provider call is finished within the request's deadline and settled on
 * its usage, as if the client had stayed; only a deadline that cuts it leaves
 * the record in review. A byok call is aborted (nothing to meter).
 */
export async function invokeChat({ ctx, input }: { ctx: ManagedAiContext; input: InvokeInput }): Promise<InvokeResult> {
  const plan = await planInvocation({ ctx, input: input });
  return meteredJsonCall({
    ctx,
    input,
    plan,
    api: input.api ?? "chat_completions",
    call: (signal) => ctx.provider.chat({ ...targetOf(plan), body: providerBody(plan, false), signal }),
    usage: usageOf,
    tokens: (usage) => usage.promptTokens + usage.completionTokens,
  });
}

/** The request a meter opens for an invocation (its usage record's own fields). */
export function meteredRequest(input: InvokeInput, stream: boolean, api: Api) {
  return { requestId: input.requestId, apiKeyId: input.apiKeyId, idempotencyKey: input.idempotencyKey, stream, keyBudget: input.keyBudget, api };
}

/**
 * One metered provider call answered as one JSON body (a chat completion, embeddings):
 * the meter opened; the call made within the request's deadline; a failure settled in
 * review when the gateway cut the call (the provider may have done the work), as failed
 * otherwise; a managed answer named by the model's alias; the record settled on the usage
 * the answer reports, or in review without one.
 */
export async function meteredJsonCall<Request>({
  ctx,
  input,
  plan,
  api,
  call: send,
  usage: usageIn,
  tokens,
}: {
  ctx: ManagedAiContext;
  input: InvokeInput;
  plan: Plan<Request>;
  api: Api;
  call: (signal: AbortSignal) => ReturnType<ManagedAiContext["provider"]["chat"]>;
  usage: (reported: unknown) => Usage | null;
  tokens: (usage: Usage) => bigint;
}): Promise<InvokeResult> {
  const meter = await openMeter({ ctx, input: { plan, request: meteredRequest(input, false, api) } });
  const call = providerSignal(input);
  let answer: Record<string, unknown>;
  try {
    const res = await send(call.signal);
    answer = await ctx.provider.json(res.body, call.signal);
  } catch (err) {
    const failure = callFailure(ctx.provider, err, call);
    // Cut by the gateway (the deadline, or a byok client gone): the provider may have done the work; an operator decides.
    if (USAGE_UNKNOWN_ABORTS.has(failure.code)) await meter.review(failure.code);
    else await meter.failed(failure.code);
    throw failure.appError;
  } finally {
    call.dispose();
  }
  if (plan.mode === "managed") answer.model = plan.modelAlias;
  const usage = usageIn(answer.usage);
  const result = { priceId: plan.priceId, reservedUnits: plan.reservedUnits, body: Buffer.from(JSON.stringify(answer)) };
  if (!usage) {
    await meter.review("usage_unavailable");
    return result;
  }
  const finalUnits = await meter.completed(usage);
  return { ...result, finalUnits, totalTokens: Number(tokens(usage)) };
}
