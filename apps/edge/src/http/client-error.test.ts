import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@gateway/logger";
import { clientErrorHandler } from "./client-error.js";

const server = createServer((_req, res) => res.end("ok"));
server.on("clientError", clientErrorHandler(createLogger({ service: "edge-test", level: "silent" })));
let port = 0;
beforeAll(
  () =>
    new Promise<void>((r) =>
      server.listen(0, "127.0.0.1", () => {
        port = (server.address() as AddressInfo).port;
        r();
      }),
    ),
);
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function raw(request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    socket.on("data", (d) => (text += d.toString()));
    socket.on("error", () => resolve(text));
    socket.on("close", () => resolve(text));
  });
}

describe("requests the HTTP parser refuses", () => {
  it("answer oversized headers with 413 in the contract's error shape and a request id", async () => {
    const text = await raw(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    const id = /x-request-id: (\S+)/i.exec(text)?.[1];
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
    expect(body).toEqual({ error: "payload_too_large", message: expect.any(String), request_id: id });
  });

  it("answer a malformed request line with 400 invalid_request", async () => {
    const text = await raw("NOT A REQUEST\r\n\r\n");
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toMatchObject({ error: "invalid_request" });
  });
});
