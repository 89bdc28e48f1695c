import { createConnection, createServer, type Server, type Socket } from "node:net";
import { freePort } from "./ports.js";

/**
 * A TCP relay the test can cut: `block()` drops every connection and refuses
 * new ones, as a database outage looks to the process behind it.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly upstreams = new Set<Socket>();
  private blocked = false;
  port = 0;

  /** The local ports of the open connections to the target (PostgreSQL's `client_port` of their sessions). */
  get clientPorts(): number[] {
    return [...this.upstreams].map((s) => s.localPort).filter((p): p is number => p !== undefined);
  }

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    this.port = await freePort();
    this.server = createServer((client) => {
      if (this.blocked) {
        client.destroy();
        return;
      }
      const upstream = createConnection(this.targetPort, this.targetHost);
      this.upstreams.add(upstream);
      upstream.on("close", () => this.upstreams.delete(upstream));
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", () => resolve()));
    return this.port;
  }

  block(): void {
    this.blocked = true;
    for (const s of this.sockets) s.destroy();
  }

  unblock(): void {
    this.blocked = false;
  }

  async close(): Promise<void> {
    this.block();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
