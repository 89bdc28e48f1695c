import type { Server } from "node:http";
import type { NextFunction, Request, Response } from "express";

/** Counts requests (and streams) in flight, so shutdown can wait for them. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  middleware() {
    return (_req: Request, res: Response, next: NextFunction) => {
      this.count++;
      res.once("close", () => {
        this.count--;
        if (this.count === 0) for (const w of this.waiters.splice(0)) w();
      });
      next();
    };
  }

  get size(): number {
    return this.count;
  }

  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/**
 * Graceful stop of the HTTP server: stop accepting, close idle keep-alive
 * connections, wait for in-flight requests and streams, then cut what is left.
 */
export async function drainHttp(server: Server, inFlight: InFlight, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([inFlight.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
  clearInterval(sweep);
  server.closeAllConnections();
  await closed;
}
