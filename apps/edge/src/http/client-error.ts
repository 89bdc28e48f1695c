import type { Socket } from "node:net";
import { HTTP_STATUS } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { Logger } from "@gateway/logger";

type ParserError = Error & { code?: string };

/**
 * Requests Node's HTTP parser refuses before express sees them (headers or URL
 * too large, a malformed request line) get the contract's error body with a
 * request id, like every other bad input, instead of Node's bare
 * `431`/`400` without a body (found by issue 10's fuzzing). A socket that
 * failed (reset, timed out) is closed without an answer and never throws.
 */
export function clientErrorHandler(logger: Logger) {
  return (err: ParserError, socket: Socket) => {
    if (!socket.writable || err.code === "ECONNRESET" || err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === "HPE_HEADER_OVERFLOW" || err.code === "HPE_URI_TOO_LONG";
    const code = tooLarge ? "payload_too_large" : "invalid_request";
    const status = HTTP_STATUS[code];
    const requestId = newId("req");
    const body = JSON.stringify({
      error: code,
      message: tooLarge ? "The request's headers or URL are larger than the gateway accepts." : "The request could not be parsed as HTTP.",
      request_id: requestId,
    });
    logger.info({ request_id: requestId, parser_error: err.code, status }, "request refused by the HTTP parser");
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? "Payload Too Large" : "Bad Request"}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
