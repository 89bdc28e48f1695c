import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@gateway/outbound";

/** One POST an account webhook endpoint got. */
export type Hook = { path: string; eventId: string; signature: string; body: string; json: any; status: number };

/** How an endpoint answers: always 200, 500 to the first attempt of each event then 200, or always 503. */
export type HookMode = "ok" | "flaky" | "down";

/**
 * A tenant's webhook endpoints for tests (account webhooks, CONTRACT.md section 13):
 * records every POST with its `X-Service-Event-Id` and signature and answers by
 * the path's mode, per event id (a flaky path refuses each event's first attempt).
 */
export class AccountHooks {
  readonly got: Hook[] = [];
  private readonly modes = new Map<string, HookMode>();
  private server!: Server;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const path = req.url ?? "";
        const eventId = String(req.headers["x-service-event-id"] ?? "");
        const mode = this.modes.get(path) ?? "ok";
        const seen = this.got.some((h) => h.path === path && h.eventId === eventId);
        const status = mode === "down" ? 503 : mode === "flaky" && !seen ? 500 : 200;
        let json: unknown = null;
        try {
          json = JSON.parse(body);
        } catch {
          // recorded as it came
        }
        this.got.push({ path, eventId, signature: String(req.headers["x-service-signature"] ?? ""), body, json, status });
        res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "no");
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  endpoint(path: string, mode: HookMode): string {
    this.modes.set(path, mode);
    return `${this.url}${path}`;
  }

  /** The POSTs to `path` (of `event`, when given). */
  at(path: string, event?: string): Hook[] {
    return this.got.filter((h) => h.path === path && (event === undefined || h.json?.event === event));
  }

  /** Whether a POST carries a valid signature of its exact body with `secret`. */
  static signed(hook: Hook, secret: string): boolean {
    return verifySignature(secret, hook.body, hook.signature);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
