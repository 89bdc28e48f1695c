import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { afterAll, beforeAll } from "vitest";

/**
 * Serves an app on a free port of 127.0.0.1 for the tests of the
 * enclosing file or `describe`: started before them, closed after. `base` is its URL
 * once started. For tests only (tsconfig.build leaves `*.test-support.ts` out).
 */
export function serveDuringTests(make: () => Express | Promise<Express>): { readonly base: string } {
  let server: Server | undefined;
  const served = { base: "" };
  beforeAll(async () => {
    const listening = createServer(await make());
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
    served.base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
  return served;
}
