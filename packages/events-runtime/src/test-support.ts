import { randomBytes } from "node:crypto";
import pg from "pg";
import { connectionConfig, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";

/** What this package's tests run against: the machine's PostgreSQL and NATS (ENVIRONMENT.md), or the CI's. */
export const TEST_SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const TEST_NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** Polls `check` every 25 ms until it holds; throws after `ms`. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A database of the test file's own, `<prefix>_<random>`, with `ddl` run in it; `drop` ends the pool and drops it. */
export async function scratchDatabase(prefix: string, ddl: string): Promise<{ pool: pg.Pool; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  await ensureDatabase(TEST_SERVER, name);
  const pool = new pg.Pool(connectionConfig(databaseUrl(TEST_SERVER, name)));
  await pool.query(ddl);
  return {
    pool,
    async drop() {
      await pool.end();
      await dropDatabase(TEST_SERVER, name);
    },
  };
}
