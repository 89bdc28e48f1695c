/**
 * Incremental parser for a text/event-stream body: feed it chunks as they
 * arrive, get each event's `data` payload (multi-line data joined by "\n").
 * Comments and other fields are skipped; events end at a blank line.
 */
export class SseParser {
  private buffer = "";
  /** The current event's data lines joined by "\n"; null: none yet. */
  private data: string | null = null;
  private readonly decoder = new TextDecoder();

  /*
   * Lines end at "\r\n", "\r" or "\n", whichever comes first (a "\r" that ends a chunk
   * ends its line). The text is scanned with indexOf from a position, and the rest kept
   * once per chunk, not re-sliced per line (docs/decisions/0311).
   */
  push(chunk: Uint8Array | string): string[] {
    const text = this.buffer + (typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true }));
    const out: string[] = [];
    let pos = 0;
    let cr = text.indexOf("\r");
    let lf = text.indexOf("\n");
    for (;;) {
      if (cr !== -1 && cr < pos) cr = text.indexOf("\r", pos);
      if (lf !== -1 && lf < pos) lf = text.indexOf("\n", pos);
      const newline = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (newline < 0) break;
      if (newline === pos) {
        if (this.data !== null) out.push(this.data);
        this.data = null;
      } else if (text.startsWith("data:", pos)) {
        const value = text.slice(pos + (text.startsWith("data: ", pos) ? 6 : 5), newline);
        this.data = this.data === null ? value : `${this.data}\n${value}`;
      }
      pos = newline + (newline === cr && text.charCodeAt(newline + 1) === 10 ? 2 : 1);
    }
    this.buffer = pos === 0 ? text : text.slice(pos);
    return out;
  }

  /** What a stream that ended without a final blank line still held. */
  end(): string[] {
    const rest = this.push("\n\n");
    return rest;
  }
}
