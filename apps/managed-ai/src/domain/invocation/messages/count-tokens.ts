import type { ManagedAiContext } from "../../context.js";
import type { ChatRequest } from "../chat-request.js";
import { chat, planCall, type CallKind } from "../plan.js";
import { chatRequestOf, notTooDeep, readMessagesBody } from "./to-chat.js";

/** count_tokens: a Messages body without `max_tokens`, translated and bounded as a call would be; no output, no ceilings. */
const count: CallKind<unknown, ChatRequest> = {
  read: (raw) => notTooDeep(() => chatRequestOf(readMessagesBody(raw, { countTokens: true }))),
  demand: (read, config) => ({ ...chat.demand(read, config), output: null }),
  ceilings: false,
};

/**
 * `POST …/v1/messages/count_tokens` (CONTRACT.md 6c): the gateway's upper bound of
 * the request's input tokens, the one its reservation would count (section 6b:
 * text by bytes and framing, tools at twice their JSON, each image at the model's
 * max_tokens_per_image; a byok instance's estimate). The same checks as a call
 * (400, 403, 404, 503), nothing written, nothing metered.
 */
export async function countMessageTokens({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: { tenantId: string; alias: string; body: Uint8Array };
}): Promise<bigint> {
  return (await planCall(ctx, input, count)).inputTokensBound;
}
