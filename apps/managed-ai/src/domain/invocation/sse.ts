/**
 * Incremental parser for a text/event-stream body: feed it chunks as they
 * arrive, get each event's `data` payload (multi-line data joined by "\n").
 * Comments and other fields are skipped; events end at a blank line.
 */
export class SseParser {
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

  /** What a stream that ended without a final blank line still held. */
  end(): string[] {
    const rest = this.push("\n\n");
    return rest;
  }
}
