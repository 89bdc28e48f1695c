import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { createLogger } from "@gateway/logger";
import { Shutdown } from "./shutdown.js";

const logger = createLogger({ service: "shutdown-test", level: "silent" });

/** exit() that records the code instead of ending the test process. */
function recorder() {
  const codes: number[] = [];
  let resolve!: () => void;
  const exited = new Promise<void>((r) => (resolve = r));
  const exit = ((code: number) => {
    codes.push(code);
    resolve();
    return new Promise(() => undefined);
  }) as unknown as (code: number) => never;
  return { codes, exit, exited };
}

describe("Shutdown", () => {
  it("runs its steps once however many fatal errors arrive while it runs, and exits once with 1", async () => {
    const { codes, exit, exited } = recorder();
    const shutdown = new Shutdown(logger, 5_000, exit);
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    shutdown.add("slow step", async () => {
      runs++;
      await gate;
    });
    void shutdown.run("signal SIGTERM", 0);
    for (let i = 0; i < 20; i++) void shutdown.run("uncaught exception", 1);
    release();
    await exited;
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(1);
    expect(codes).toEqual([1]);
  });

  it("closes a server once: no close listener piles up on it (MaxListenersExceededWarning)", async () => {
    const { exit, exited } = recorder();
    const shutdown = new Shutdown(logger, 5_000, exit);
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    let most = 0;
    shutdown.add("server", async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        most = Math.max(most, server.listenerCount("close"));
      });
    });
    for (let i = 0; i < 15; i++) void shutdown.run("uncaught exception", 1);
    await exited;
    expect(most).toBe(1);
  });
});
