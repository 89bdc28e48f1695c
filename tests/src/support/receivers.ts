import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@gateway/outbound";

/** One request a receiver got, with whether its signature verified against the receiver's secret. */
export type Received = { path: string; headers: IncomingMessage["headers"]; body: string; json: any; signatureValid: boolean | null };

/** How a path answers: a status (default 200), after a delay, or never until `release()`. */
export type Behaviour = { status?: number; delayMs?: number; hang?: boolean; body?: string };

/**
 * A local webhook receiver: records every request, verifies `X-Service-Signature`
 * with the secret registered for its path, and answers as scripted per path.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour[]>();
  private readonly secrets = new Map<string, string>();
  private readonly hanging: ServerResponse[] = [];
  private server!: Server;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on("clientError", (_err, socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Scripted answers for a path: one per request in order, the last one repeating. */
  on(path: string, ...behaviours: Behaviour[]): this {
    this.behaviours.set(path, behaviours);
    return this;
  }

  secret(path: string, secret: string): this {
    this.secrets.set(path, secret);
    return this;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  pendingCount(): number {
    return this.hanging.length;
  }

  /** Answers every hanging request with 200. */
  release(): void {
    for (const res of this.hanging.splice(0)) if (!res.writableEnded) res.writeHead(200).end("{}");
  }

  reset(): void {
    this.received.length = 0;
    this.behaviours.clear();
    this.release();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const secret = this.secrets.get(path);
      const header = req.headers["x-service-signature"];
      this.received.push({
        path,
        headers: req.headers,
        body,
        json,
        signatureValid: secret ? verifySignature(secret, body, typeof header === "string" ? header : undefined) : null,
      });
      const list = this.behaviours.get(path) ?? [];
      const count = this.received.filter((r) => r.path === path).length;
      const b = list[Math.min(count - 1, list.length - 1)] ?? {};
      if (b.hang) {
        this.hanging.push(res);
        return;
      }
      const answer = () => {
        if (!res.writableEnded) res.writeHead(b.status ?? 200, { "content-type": "application/json" }).end(b.body ?? "{}");
      };
      if (b.delayMs) setTimeout(answer, b.delayMs);
      else answer();
    });
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A mock Telegram Bot API: `POST /bot<token>/sendMessage`; ok for known tokens, 401 otherwise. */
export class MockBotApi extends WebhookReceiver {
  private readonly tokens = new Set<string>();

  allow(token: string): this {
    this.tokens.add(token);
    return this;
  }

  override async start(): Promise<this> {
    await super.start();
    return this;
  }

  messagesFor(token: string): any[] {
    return this.at(`/bot${token}/sendMessage`).map((r) => r.json);
  }

  /** Answers per token: `{ok: true, result}` for an allowed token, else `{ok: false}` with 401. */
  prime(): this {
    for (const token of this.tokens) this.on(`/bot${token}/sendMessage`, { status: 200, body: JSON.stringify({ ok: true, result: { message_id: 1 } }) });
    return this;
  }
}
