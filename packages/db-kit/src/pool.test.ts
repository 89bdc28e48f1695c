import { describe, expect, it } from "vitest";
import { createPool } from "./pool.js";

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

describe("createPool", () => {
  it("survives the server ending a connection that is checked out between queries", async () => {
    const pool = createPool(SERVER, { poolSize: 2 });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener("uncaughtException", onUncaught);
    try {
      // As the outbox relay does: a transaction held open while it publishes elsewhere.
      const client = await pool.connect();
      await client.query("BEGIN");
      const [{ pid }] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows as [{ pid: number }];
      await pool.query("SELECT pg_terminate_backend($1)", [pid]);
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught).toEqual([]);
      await expect(client.query("COMMIT")).rejects.toThrow();
      client.release(true);
      // The pool carries on with a fresh connection.
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      process.removeListener("uncaughtException", onUncaught);
      await pool.end();
    }
  });
});
