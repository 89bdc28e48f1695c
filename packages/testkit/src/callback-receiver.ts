import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type ReceivedCallback = { headers: Record<string, string>; body: string; status: number; at: number };

export type CallbackReceiver = {
  url: string;
  received: ReceivedCallback[];
  /** Decides the answer to each request (default 200); `n` counts requests from 1. */
  respond: (n: number, body: string) => number;
  close(): Promise<void>;
};

/** A local HTTP server standing in for a customer's callback endpoint; it records every request. */
export async function startCallbackReceiver(respond: (n: number, body: string) => number = () => 200): Promise<CallbackReceiver> {
  const receiver: CallbackReceiver = { url: "", received: [], respond, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const status = receiver.respond(receiver.received.length + 1, body);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      receiver.received.push({ headers, body, status, at: Date.now() });
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "nope");
    });
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/jobs`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
