import type { ServerResponse } from "node:http";

/** OpenAI's error body: `{error: {message, type, param, code}}`. */
export function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The error type OpenAI uses for a status. */
export function errorTypeFor(status: number): string {
  if (status === 401) return "invalid_request_error";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}
