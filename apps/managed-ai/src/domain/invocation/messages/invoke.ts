import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../../context.js";
import { invokeChat, type InvokeInput, type InvokeResult } from "../invoke.js";
import { invokeChatStream, type StreamMessage } from "../invoke-stream.js";
import { messageId, messageOf } from "./answer.js";
import { MessageEvents } from "./events.js";
import type { MessagesBody } from "./schema.js";
import { chatRequestOf, notTooDeep, readMessagesBody } from "./to-chat.js";

/*
 * Anthropic's Messages API (CONTRACT.md 6c) in front of the chat call: the body is
 * translated to the chat request (to-chat.ts) and handed to `invokeChat` /
 * `invokeChatStream` as the chat route's body would be, so planning, the
 * reservation, the usage record (api "messages"), the provider call and the
 * settlement are the chat route's own; the answer is translated back. Decision 0207.
 */

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.");
  }
}

/** The chat call's input: the translated body, recorded as a Messages request. */
const chatInput = (input: InvokeInput, body: MessagesBody): InvokeInput => ({
  ...input,
  body: notTooDeep(() => Buffer.from(JSON.stringify(chatRequestOf(body)))),
  api: "messages",
});

/** A Messages request answered as one message. */
export async function invokeMessages({ ctx, input }: { ctx: ManagedAiContext; input: InvokeInput }): Promise<InvokeResult> {
  const body = readMessagesBody(parseJson(input.body));
  const result = await invokeChat({ ctx, input: chatInput(input, { ...body, stream: false }) });
  const answer = JSON.parse(result.body.toString("utf8")) as Record<string, unknown>;
  const message = messageOf(answer, { id: messageId(input.requestId), stopSequences: body.stop_sequences ?? [] });
  return { ...result, body: Buffer.from(JSON.stringify(message)) };
}

/** A stream message of the Messages route: the chat stream's, its data as Anthropic's named events. */
export type MessagesStreamMessage = Exclude<StreamMessage, { data: string }> | { data: string; event: string };

/**
 * A Messages request as Anthropic's event stream. The chat stream's chunks become
 * events as they arrive; the closing events (message_delta with the usage,
 * message_stop) follow the settlement, as the chat route's `[DONE]` does. A stream
 * that fails after it started ends with the chat stream's `failure`, nothing after it.
 */
export async function invokeMessagesStream({
  ctx,
  input,
  send,
}: {
  ctx: ManagedAiContext;
  input: InvokeInput;
  send: (message: MessagesStreamMessage) => Promise<void>;
}): Promise<void> {
  const body = readMessagesBody(parseJson(input.body));
  const events = new MessageEvents(messageId(input.requestId), body.stop_sequences ?? []);
  let ended = false;
  const emit = async (list: ReturnType<MessageEvents["end"]>) => {
    for (const event of list) await send({ data: JSON.stringify(event), event: event.type });
  };
  await invokeChatStream({
    ctx,
    input: chatInput(input, { ...body, stream: true }),
    send: async (message) => {
      try {
        if ("data" in message) await emit(events.chunk(JSON.parse(message.data) as Record<string, unknown>));
        else {
          if ("failure" in message) ended = true;
          await send(message);
        }
      } catch (err) {
        // The client is gone: the chat stream stops relaying (and keeps metering); so do we.
        ended = true;
        throw err;
      }
    },
  });
  if (ended || input.signal.aborted) return;
  await emit(events.end()).catch(() => undefined);
}
