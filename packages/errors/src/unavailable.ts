/*
 * Failures that mean "a dependency is down or restarting, try again": a refused
 * or cut connection, PostgreSQL starting up or shutting down, a pool that could
 * not connect in time. They are `unavailable` (503), never `internal_error`
 * (500): issue 10's fault suite found database restarts answered with 500.
 */

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ECONNABORTED"]);

/** SQLSTATE class 08 (connection exception), admin/crash shutdown, cannot connect now, too many connections. */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P01|57P02|57P03|53300)$/;

/** Prisma's codes for an unreachable database, a closed connection, a timeout, an exhausted pool. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);

const MESSAGES =
  /Connection terminated|connection is closed|Client has encountered a connection error|timeout exceeded when trying to connect|the database system is (starting up|shutting down|not yet accepting connections|in recovery mode)|terminating connection due to administrator command|ECONNREFUSED|ECONNRESET|Code: `(08[0-9A-Z]{3}|57P0[123]|53300)`/;

export function isUnavailableFailure(err: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = err;
  for (let depth = 0; current && typeof current === "object" && depth < 6 && !seen.has(current); depth++) {
    seen.add(current);
    const e = current as { code?: unknown; originalCode?: unknown; message?: unknown; meta?: { code?: unknown }; cause?: unknown };
    for (const code of [e.code, e.originalCode, e.meta?.code]) {
      if (typeof code !== "string") continue;
      if (NETWORK_CODES.has(code) || SQLSTATE.test(code) || PRISMA_CODES.has(code)) return true;
    }
    if (typeof e.message === "string" && MESSAGES.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}
