import type pg from "pg";
import { connectionConfig } from "./database.js";

export type AdapterOptions = {
  /** Maximum connections of the pool. */
  poolSize?: number;
  /** Statement timeout, so one stuck query cannot hold a connection forever. */
  statementTimeoutMs?: number;
};

/** The pool settings of a service's database (see `createPool`). */
export function poolConfig(url: string, options: AdapterOptions = {}): pg.PoolConfig {
  return {
    ...connectionConfig(url),
    max: options.poolSize ?? 10,
    // Connections are kept, not replaced: periodic work (reconciler passes every 30 s,
    // sweeps every 60 s) that needs a second or third connection found it closed by a
    // 30 s idle timeout and opened a new PostgreSQL backend each time (a fork and a
    // login per pass). Two stay open whatever happens; the rest close after two idle minutes.
    min: Math.min(2, options.poolSize ?? 10),
    idleTimeoutMillis: 120_000,
    connectionTimeoutMillis: 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
  };
}
