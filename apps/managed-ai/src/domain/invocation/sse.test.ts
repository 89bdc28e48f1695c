import { describe, expect, it } from "vitest";
import { SseParser } from "./sse.js";

describe("SseParser", () => {
  it("yields each event's data across arbitrary chunk boundaries", () => {
    const p = new SseParser();
    const text = 'data: {"a":1}\n\n: comment\n\ndata: {"b":\ndata: 2}\r\n\r\nevent: x\ndata: [DONE]\n\n';
    const out: string[] = [];
    for (const ch of text) out.push(...p.push(ch));
    expect(out).toEqual(['{"a":1}', '{"b":\n2}', "[DONE]"]);
  });

  it("keeps multi-byte characters split across chunks", () => {
    const p = new SseParser();
    const bytes = new TextEncoder().encode('data: "é😀"\n\n');
    const out = [...p.push(bytes.slice(0, 8)), ...p.push(bytes.slice(8))];
    expect(out).toEqual(['"é😀"']);
  });
});
