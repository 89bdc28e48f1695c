import { stopOf, usageOf, type MessageUsage, type Stop } from "./answer.js";

/** One event of Anthropic's stream: its `type` is also its SSE event name. */
export type MessageEvent = { type: string } & Record<string, unknown>;

type Json = Record<string, unknown>;
type Block = { index: number; kind: "text" | "tool_use" };

/**
 * The provider's chat stream as Anthropic's events (CONTRACT.md 6c), one chunk at a
 * time, so text and tool arguments go out as they arrive:
 *   message_start (at the first chunk), then per content block content_block_start,
 *   content_block_delta (text_delta, or input_json_delta with the arguments' piece
 *   as the provider sent it), content_block_stop; and at the end message_delta
 *   (stop_reason, stop_sequence, usage) and message_stop.
 * Text opens a text block; each tool call (by its index in the chunks) a tool_use
 * block; a block closes when the next one opens. Only the first choice is read (the
 * route asks for one). The usage comes in the chunk after the last choice chunk, so
 * the closing events are written by `end()`, after the provider's last byte.
 */
export class MessageEvents {
  private started = false;
  private open: Block | null = null;
  private blocks = 0;
  private readonly tools = new Map<number, number>();
  private stop: Stop = { stop_reason: "end_turn", stop_sequence: null };
  private usage: MessageUsage = { input_tokens: 0, output_tokens: 0 };

  constructor(
    private readonly id: string,
    private readonly stopSequences: readonly string[],
  ) {}

  /** The events of one chat chunk. */
  chunk(chunk: Json): MessageEvent[] {
    const out: MessageEvent[] = [];
    if (!this.started) out.push(this.start(typeof chunk.model === "string" ? chunk.model : ""));
    if (chunk.usage && typeof chunk.usage === "object") this.usage = usageOf(chunk.usage);
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : [];
    const choice = choices.find((c) => (c.index ?? 0) === 0);
    if (!choice) return out;
    const delta = (choice.delta ?? {}) as Json;
    const text = typeof delta.content === "string" ? delta.content : typeof delta.refusal === "string" ? delta.refusal : "";
    if (text !== "") {
      if (this.open?.kind !== "text") this.openBlock(out, "text", { type: "text", text: "" });
      out.push({ type: "content_block_delta", index: this.open!.index, delta: { type: "text_delta", text } });
    }
    for (const call of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Json[]) : []) {
      const at = typeof call.index === "number" ? call.index : 0;
      const fn = (call.function ?? {}) as Json;
      let index = this.tools.get(at);
      if (index === undefined) {
        index = this.openBlock(out, "tool_use", { type: "tool_use", id: String(call.id ?? ""), name: String(fn.name ?? ""), input: {} });
        this.tools.set(at, index);
      }
      if (typeof fn.arguments === "string" && fn.arguments !== "") {
        out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: fn.arguments } });
      }
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.stop = stopOf(choice.finish_reason, choice.stop_reason, this.stopSequences);
    return out;
  }

  /** The closing events, once the provider's stream has ended. */
  end(): MessageEvent[] {
    const out: MessageEvent[] = [];
    if (!this.started) out.push(this.start(""));
    this.close(out);
    out.push({ type: "message_delta", delta: { ...this.stop }, usage: { ...this.usage } });
    out.push({ type: "message_stop" });
    return out;
  }

  private start(model: string): MessageEvent {
    this.started = true;
    return {
      type: "message_start",
      message: {
        id: this.id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Known at the end only (the chat stream's usage chunk): message_delta carries both counts.
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    };
  }

  private openBlock(out: MessageEvent[], kind: Block["kind"], contentBlock: Json): number {
    this.close(out);
    const index = this.blocks++;
    this.open = { index, kind };
    out.push({ type: "content_block_start", index, content_block: contentBlock });
    return index;
  }

  private close(out: MessageEvent[]): void {
    if (!this.open) return;
    out.push({ type: "content_block_stop", index: this.open.index });
    this.open = null;
  }
}
