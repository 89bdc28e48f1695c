import type { IncomingHttpHeaders } from "node:http";

/**
 * What the key policy reads of an HTTP request. Express's `Request` satisfies it, so the
 * HTTP layer passes its request as it is; the domain does not know express.
 */
export type KeyRequest = {
  headers: IncomingHttpHeaders;
  method: string;
  path: string;
  requestId: string;
  socket: { remoteAddress?: string | undefined };
  /** The response, whose `close` (answered, stream ended or client gone) releases a concurrency slot. */
  res?: { once(event: "close", listener: () => void): unknown } | undefined;
};
