import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * Ports are picked below the kernel's ephemeral range: a port from `listen(0)` comes
 * from that range, and between closing it and the child process binding it, any
 * outgoing connection on the machine (each service opens dozens, to PostgreSQL, NATS
 * and Redis) may take it as its local port: EADDRINUSE at start-up. Below the range
 * only listeners compete, and the probe bind sees those. Ports handed out by this
 * process are never handed out again, so one stack's services cannot collide.
 */
const FLOOR = 10_000;
const handedOut = new Set<number>();

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Binds `port` (0: any) on 127.0.0.1 and releases it; the port, or undefined if taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** A port free right now, outside the ephemeral range where possible, never returned twice. */
export async function freePort(): Promise<number> {
  const ceiling = ephemeralLow();
  for (let attempt = 0; ceiling - FLOOR > 1_000 && attempt < 100; attempt++) {
    const port = randomInt(FLOOR, ceiling);
    if (handedOut.has(port)) continue;
    if ((await probe(port)) === port) {
      handedOut.add(port);
      return port;
    }
  }
  // A machine whose ephemeral range starts low: let the OS pick.
  for (;;) {
    const port = await probe(0);
    if (port === undefined) throw new Error("no free port");
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}
