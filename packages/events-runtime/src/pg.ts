import type { SqlExecutor, TxRunner } from "./sql.js";

/** The part of a pg.Pool the kit needs (no runtime dependency on pg). */
export type PoolLike = {
  connect(): Promise<{
    query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
    release(err?: Error | boolean): void;
  }>;
};

/**
 * Transactions straight on the pool (BEGIN ... COMMIT on one connection), shaped
 * like Prisma's raw methods so the outbox and consumers run without the ORM on
 * their hot path. A failed transaction is rolled back and its connection released.
 * `synchronousCommit: false` commits without waiting for the disk: only for work
 * whose loss in a crash is harmless (the relay's), or that is done again from a
 * position lost with it (a checkpointing consumer's; docs/decisions/0166).
 * `tx.commitWith(sql)` sends a last statement in the COMMIT's message.
 */
/** The statements prepared (SQL `PREPARE`) on each connection of a pool, by name. */
const preparedOn = new WeakMap<object, Set<string>>();

/**
 * The simple-protocol text that runs the fixed statement `text` as the prepared statement
 * `name` on `client`'s session: `PREPARE` it the first time (in the same message), then
 * `EXECUTE` it, so it is parsed once per connection and its plan kept (docs/decisions/0167).
 * PREPARE is not undone by a ROLLBACK and a failed message leaves it unknown whether it
 * ran: a connection whose transaction failed after using this must be discarded
 * (`release(true)`), so the next one starts clean.
 */
export function preparedStatement(client: object, name: string, text: string): string {
  let names = preparedOn.get(client);
  if (!names) {
    names = new Set();
    preparedOn.set(client, names);
  }
  if (names.has(name)) return `EXECUTE ${name}`;
  names.add(name);
  return `PREPARE ${name} AS ${text}; EXECUTE ${name}`;
}

export function pgTransactions(pool: PoolLike, options: { synchronousCommit?: boolean } = {}): TxRunner<SqlExecutor> {
  // Simple-protocol text: both statements in one round trip.
  const begin = options.synchronousCommit === false ? "BEGIN; SET LOCAL synchronous_commit = off" : "BEGIN";
  return async (fn) => {
    const client = await pool.connect();
    // BEGIN goes with the first statement: in the same simple-protocol message when that
    // statement has no parameters (one round trip, not two), before it otherwise. A
    // transaction that ran no statement sends neither BEGIN nor COMMIT.
    let begun = false;
    const run = async (query: string, values: unknown[]) => {
      if (!begun) {
        begun = true;
        if (values.length === 0) {
          const results = (await client.query(`${begin}; ${query}`)) as unknown as { rows: unknown[]; rowCount: number | null }[];
          return results[results.length - 1]!;
        }
        await client.query(begin);
      }
      return client.query(query, values);
    };
    let last: string | undefined;
    let usedPrepared = false;
    const tx: SqlExecutor = {
      $executeRawUnsafe: async (query, ...values) => (await run(query, values)).rowCount ?? 0,
      $queryRawUnsafe: async <T>(query: string, ...values: unknown[]) => (await run(query, values)).rows as T,
      $queryPrepared: async <T>(name: string, query: string) => {
        usedPrepared = true;
        const results = (await client.query(
          begun ? preparedStatement(client, name, query) : `${begin}; ${preparedStatement(client, name, query)}`,
        )) as unknown as { rows: unknown[] }[] | { rows: unknown[] };
        begun = true;
        return (Array.isArray(results) ? results[results.length - 1]!.rows : results.rows) as T;
      },
      commitWith: (query) => {
        last = last === undefined ? query : `${last}; ${query}`;
      },
    };
    try {
      const result = await fn(tx);
      if (last !== undefined) await client.query(begun ? `${last}; COMMIT` : `${begin}; ${last}; COMMIT`);
      else if (begun) await client.query("COMMIT");
      client.release();
      return result;
    } catch (err) {
      try {
        await client.query("ROLLBACK");
        client.release(usedPrepared);
      } catch {
        client.release(true);
      }
      throw err;
    }
  };
}
