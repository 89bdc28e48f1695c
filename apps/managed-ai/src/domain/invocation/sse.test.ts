import { describe, expect, it } from "vitest";
import { SseParser } from "./sse.js";

/** The parser as it was before docs/decisions/0311 (a regex search and a re-slice per line): the reference. */
class ReferenceParser {
  private buffer = "";
  private data: string[] = [];
  private readonly decoder = new TextDecoder();
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: string[] = [];
    for (;;) {
      const newline = this.buffer.search(/\r\n|\r|\n/);
      if (newline < 0) break;
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith("\r\n", newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + width);
      if (line === "") {
        if (this.data.length > 0) out.push(this.data.join("\n"));
        this.data = [];
      } else if (line.startsWith("data:")) {
        this.data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
    return out;
  }
}

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

  it("yields exactly what the previous parser yielded, for random lines, line ends and chunk boundaries", () => {
    let seed = 36;
    // mulberry32: a small deterministic generator whose low bits are not periodic.
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) % n;
    };
    const pieces = ["data: ", "data:", "dat", "a:", "event: x", ": c", "id: 1", '{"a":"é😀"}', "[DONE]", " ", "x", "\n", "\r", "\r\n", "\n\n", "\r\n\r\n"];
    for (let round = 0; round < 2_000; round++) {
      let text = "";
      for (let i = random(40); i >= 0; i--) text += pieces[random(pieces.length)];
      const bytes = new TextEncoder().encode(text);
      const ours = new SseParser();
      const reference = new ReferenceParser();
      const got: string[] = [];
      const want: string[] = [];
      for (let at = 0; at < bytes.length; ) {
        const next = Math.min(bytes.length, at + 1 + random(12));
        got.push(...ours.push(bytes.slice(at, next)));
        want.push(...reference.push(bytes.slice(at, next)));
        at = next;
      }
      got.push(...ours.push("\n\n"));
      want.push(...reference.push("\n\n"));
      expect(got, JSON.stringify(text)).toEqual(want);
    }
  });
});
