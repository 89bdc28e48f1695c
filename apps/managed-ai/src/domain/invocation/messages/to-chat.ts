import type { z } from "zod";
import { AppError } from "@gateway/errors";
import {
  ACCEPTED_FIELDS,
  CountTokensBody,
  MessagesBody,
  type ImageBlock,
  type Message,
  type TextBlock,
  type Tool,
  type ToolChoice,
  type ToolResultBlock,
} from "./schema.js";

/*
 * A Messages request (CONTRACT.md 6c) as the upstream's chat request (6b), which the
 * chat route's own planner then validates, bounds, meters and sends: there is one
 * metering path, and the reservation bounds exactly what the provider reads, since
 * the provider reads this translation. Decision 0207.
 *
 *  - `system` (and a system turn among the messages) → a system message;
 *  - text and image blocks → text and image_url parts (base64 as a data: URL);
 *  - an assistant's `tool_use` blocks → its `tool_calls` (input as JSON arguments);
 *  - a user's `tool_result` blocks → `tool` messages, first, then the rest of the
 *    turn as a user message (images inside a tool result join it: a tool message
 *    carries text only);
 *  - `tools` → function tools; `tool_choice` auto/any/tool/none → auto/required/
 *    the function/none, `disable_parallel_tool_use` → `parallel_tool_calls: false`;
 *  - `stop_sequences` → `stop`; `max_tokens`, `temperature`, `top_p`, `stream` as they are;
 *  - `cache_control`, `thinking`, `metadata`, `top_k` are not forwarded.
 */

type ChatPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
type ChatMessage = Record<string, unknown> & { role: string };

const invalid = (message: string, param?: string) => new AppError("invalid_request", message, { extra: param ? { param } : {} });

function describe(error: z.ZodError): { message: string; param: string | undefined } {
  const issue = error.issues[0];
  if (!issue) return { message: "invalid request body", param: undefined };
  const path = issue.path.map(String).join(".");
  return { message: path ? `${path}: ${issue.message}` : issue.message, param: typeof issue.path[0] === "string" ? issue.path[0] : undefined };
}

/** Validates a Messages body: any top-level field not on 6c's list → 400 naming it, then the fields themselves. */
export function readMessagesBody(raw: unknown): MessagesBody;
export function readMessagesBody(raw: unknown, options: { countTokens: true }): CountTokensBody;
export function readMessagesBody(raw: unknown, options: { countTokens?: boolean } = {}): MessagesBody | CountTokensBody {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid("The body must be a JSON object.");
  for (const name in raw) {
    if (!ACCEPTED_FIELDS.has(name)) {
      throw invalid(`${name} is not accepted: CONTRACT.md 6c lists the Messages request's fields`, name);
    }
  }
  const parsed = (options.countTokens ? CountTokensBody : MessagesBody).safeParse(raw);
  if (!parsed.success) {
    const { message, param } = describe(parsed.error);
    throw invalid(message, param);
  }
  return parsed.data;
}

/** Runs a translation step; a body nested deeper than JSON.stringify can walk is 400, as on the chat route. */
export function notTooDeep<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (err instanceof RangeError) throw invalid("The request is nested too deeply.");
    throw err;
  }
}

const textPart = (block: TextBlock): ChatPart => ({ type: "text", text: block.text });
const imagePart = (block: ImageBlock): ChatPart => ({
  type: "image_url",
  image_url: { url: block.source.type === "base64" ? `data:${block.source.media_type};base64,${block.source.data}` : block.source.url },
});

/** A system prompt or system turn: a string, or its text blocks as text parts. */
function systemMessage(content: string | TextBlock[]): ChatMessage {
  return { role: "system", content: typeof content === "string" ? content : content.map(textPart) };
}

/** A tool result as a tool message (its text), and its images for the user message after it. */
function toolMessage(block: ToolResultBlock, images: ChatPart[]): ChatMessage {
  let content: string | ChatPart[] = "";
  if (typeof block.content === "string") content = block.content;
  else if (block.content) {
    const parts: ChatPart[] = [];
    for (const inner of block.content) {
      if (inner.type === "text") parts.push(textPart(inner));
      else images.push(imagePart(inner));
    }
    if (parts.length > 0) content = parts;
  }
  return { role: "tool", tool_call_id: block.tool_use_id, content };
}

function userMessages(content: Extract<Message, { role: "user" }>["content"]): ChatMessage[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const tools: ChatMessage[] = [];
  const parts: ChatPart[] = [];
  const images: ChatPart[] = [];
  for (const block of content) {
    if (block.type === "tool_result") tools.push(toolMessage(block, images));
    else parts.push(block.type === "text" ? textPart(block) : imagePart(block));
  }
  parts.push(...images);
  return parts.length > 0 ? [...tools, { role: "user", content: parts }] : tools;
}

function assistantMessage(content: Extract<Message, { role: "assistant" }>["content"]): ChatMessage {
  if (typeof content === "string") return { role: "assistant", content };
  let text = "";
  const calls: unknown[] = [];
  for (const block of content) {
    if (block.type === "text") text += block.text;
    else calls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input) } });
  }
  if (calls.length === 0) return { role: "assistant", content: text };
  return { role: "assistant", content: text === "" ? null : text, tool_calls: calls };
}

function chatMessages(body: { system?: string | TextBlock[] | undefined; messages: Message[] }): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (body.system !== undefined && body.system.length > 0) out.push(systemMessage(body.system));
  for (const m of body.messages) {
    if (m.role === "user") out.push(...userMessages(m.content));
    else if (m.role === "assistant") out.push(assistantMessage(m.content));
    else out.push(systemMessage(m.content));
  }
  return out;
}

const chatTool = (tool: Tool) => ({
  type: "function",
  function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.input_schema },
});

function chatToolChoice(choice: ToolChoice): unknown {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      return { type: "function", function: { name: choice.name } };
  }
}

/**
 * The chat request of a validated Messages body (see above). `max_tokens` is absent
 * for count_tokens; a stream asks for the usage chunk (the closing events carry it).
 */
export function chatRequestOf(body: MessagesBody | CountTokensBody): Record<string, unknown> {
  const chat: Record<string, unknown> = { model: body.model, messages: chatMessages(body) };
  if (body.max_tokens !== undefined) chat.max_tokens = body.max_tokens;
  if (body.tools && body.tools.length > 0) {
    chat.tools = body.tools.map(chatTool);
    if (body.tool_choice) {
      chat.tool_choice = chatToolChoice(body.tool_choice);
      if ("disable_parallel_tool_use" in body.tool_choice && body.tool_choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
    }
  }
  if (body.stop_sequences && body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
