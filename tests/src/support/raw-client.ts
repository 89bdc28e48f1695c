import { connect } from "node:net";

export type RawOutcome = {
  /** HTTP status, when the status line arrived before the socket was cut. */
  status: number | undefined;
  /** Response bytes received (head and body). */
  bytes: number;
  /** The server ended the response itself (we did not cut it). */
  completed: boolean;
  /** The whole response as text (what arrived of it). */
  text: string;
};

/**
 * One HTTP/1.1 request on a real socket that this side destroys after
 * `cutAfterBytes` response bytes (0: right after sending the request, before
 * any answer; Infinity: never). What a load generator or a browser tab that is
 * closed does to a stream in flight, without any client library's politeness.
 */
export function rawRequest(
  baseUrl: string,
  request: { method: string; path: string; headers: Record<string, string>; body?: string },
  cutAfterBytes: number,
  options: { cutAfterMs?: number; timeoutMs?: number } = {},
): Promise<RawOutcome> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let cut = false;
    let settled = false;
    const finish = (completed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(cutTimer);
      const text = Buffer.concat(chunks).toString("utf8");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : undefined, bytes, completed, text });
    };
    const cutNow = () => {
      if (settled) return;
      cut = true;
      socket.destroy();
      finish(false);
    };
    const timer = setTimeout(cutNow, options.timeoutMs ?? 30_000);
    const cutTimer = options.cutAfterMs !== undefined ? setTimeout(cutNow, options.cutAfterMs) : undefined;
    socket.on("error", () => finish(false));
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= cutAfterBytes) cutNow();
    });
    socket.on("end", () => finish(!cut));
    socket.on("close", () => finish(!cut));
    socket.on("connect", () => {
      const body = request.body ?? "";
      const head = [
        `${request.method} ${request.path} HTTP/1.1`,
        `host: ${url.host}`,
        "connection: close",
        ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`),
        ...(request.body !== undefined ? [`content-length: ${Buffer.byteLength(body)}`] : []),
        "",
        "",
      ].join("\r\n");
      socket.write(head + body);
      if (cutAfterBytes === 0) setImmediate(cutNow);
    });
  });
}

/** Node's warning that an emitter collected more listeners than it should (a leak per request). */
export const LISTENER_LEAK = /MaxListenersExceededWarning|memory leak detected/;
