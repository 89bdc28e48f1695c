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
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
  };
}
