/** Streaming HTTP transfers for file tests and benchmarks: bodies generated and hashed on the fly, never held whole. */
import { createHash } from "node:crypto";
import { request, type IncomingHttpHeaders } from "node:http";

/** `total` bytes of a seeded pattern, generated in 64 KiB pieces (never held whole). */
export function* pattern(total: number, seed = 1): Generator<Buffer> {
  for (let sent = 0; sent < total; ) {
    const n = Math.min(65_536, total - sent);
    const chunk = Buffer.alloc(n);
    for (let i = 0; i < n; i++) chunk[i] = ((sent + i) * seed + (sent >> 16)) & 0xff;
    sent += n;
    yield chunk;
  }
}

export function patternSha(total: number, seed = 1): string {
  const h = createHash("sha256");
  for (const c of pattern(total, seed)) h.update(c);
  return h.digest("hex");
}

export type UploadOptions = {
  method?: "PUT" | "POST";
  key?: string;
  headers?: Record<string, string>;
  /** Bytes to send: a pattern of this size, or a buffer. */
  size?: number;
  seed?: number;
  data?: Buffer;
  /** Send Content-Length (default) or chunked without one. */
  chunked?: boolean;
  /** Declare this Content-Length instead of the true size (a lying client). */
  declared?: number;
  /** Destroy the connection after this many bytes (a client that goes away). */
  abortAfter?: number;
};

// biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely and assert their shape (as JsonResponse)
export type UploadResult = { status: number; body: any; headers: IncomingHttpHeaders } | { aborted: true; error?: string };

/**
 * An upload over a raw HTTP request, the body written piece by piece with
 * backpressure; resolves with the answer (read even if the server answered
 * before the body was sent whole), or `aborted` when the client cut it.
 */
export function uploadRaw(baseUrl: string, options: UploadOptions): Promise<UploadResult> {
  const url = new URL("/v1/apps/file/upload", baseUrl);
  const size = options.data?.length ?? options.size ?? 0;
  const headers: Record<string, string> = { ...(options.key ? { "x-api-key": options.key } : {}), ...options.headers };
  if (!options.chunked) headers["content-length"] = String(options.declared ?? size);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: UploadResult) => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    const req = request(url, { method: options.method ?? "PUT", headers });
    req.on("response", (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("error", () => undefined);
      res.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8");
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        done({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on("error", (err) => {
      // The server may answer and close while we still write; give the answer a moment to be read.
      setTimeout(() => done({ aborted: true, error: err.message }), 500);
    });
    const pieces = options.data ? [options.data][Symbol.iterator]() : pattern(size, options.seed ?? 1);
    let sent = 0;
    const pump = () => {
      for (;;) {
        if (req.destroyed) return;
        if (options.abortAfter !== undefined && sent >= options.abortAfter) {
          req.destroy();
          setTimeout(() => done({ aborted: true }), 50);
          return;
        }
        const next = pieces.next();
        if (next.done) {
          req.end();
          return;
        }
        sent += next.value.length;
        if (!req.write(next.value)) {
          req.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
}

export type DownloadResult = { status: number; headers: IncomingHttpHeaders; size: number; sha256: string; text: string; complete: boolean };

/** A GET whose body is hashed as it streams (never held whole); `stopAfter` cuts the connection part-way. */
export function downloadRaw(url: string, options: { stopAfter?: number; headers?: Record<string, string>; method?: string } = {}): Promise<DownloadResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers ?? {} });
    req.on("error", reject);
    req.on("response", (res) => {
      const hash = createHash("sha256");
      let size = 0;
      const head: Buffer[] = [];
      res.on("data", (c: Buffer) => {
        hash.update(c);
        if (size < 4096) head.push(c);
        size += c.length;
        if (options.stopAfter !== undefined && size >= options.stopAfter) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, size, sha256: "", text: "", complete: false });
        }
      });
      res.on("error", () => undefined);
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          size,
          sha256: hash.digest("hex"),
          text: Buffer.concat(head).toString("utf8"),
          complete: res.complete,
        }),
      );
    });
    req.end();
  });
}
