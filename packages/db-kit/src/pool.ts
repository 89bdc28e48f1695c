import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { poolConfig, type AdapterOptions } from "./adapter.js";

const INT8_OID = 20;

/** int8 as bigint (pg's default is a string), so money never passes through a float. */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary" ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A service's one pool of connections: Prisma runs on it (through the driver
 * adapter) and hot paths use it directly, which costs a fraction of a Prisma
 * query's CPU. `prisma.$disconnect()` (or `pool.end()`) closes it.
 */
export function createPool(url: string, options: AdapterOptions = {}): pg.Pool {
  const pool = new pg.Pool({ ...poolConfig(url, options), types });
  // An idle connection the server ends (a restart) is dropped by the pool and the
  // next query connects anew; without a listener the 'error' would end the process.
  pool.on("error", () => undefined);
  // The same for a connection checked out between two queries (a transaction that
  // waits on something else, as the outbox relay's does while it publishes): the pool
  // listens only to idle ones. Its holder's next query fails ("not queryable"), and
  // releasing it with the error discards it.
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

/** The Prisma driver adapter over an existing pool; disconnecting Prisma ends the pool. */
export function poolAdapter(pool: pg.Pool): PrismaPg {
  return new PrismaPg(pool, { disposeExternalPool: true });
}
