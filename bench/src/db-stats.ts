// What PostgreSQL says about the hot tables and statements of managed-ai (issue 36):
// updates and how many were HOT, dead row versions, sizes (pg_stat_user_tables), and per
// statement its calls, time and buffers (pg_stat_statements, when the server preloads it:
// a cluster of one's own started with shared_preload_libraries = 'pg_stat_statements').
import type { Stack } from "@gateway/testkit";

export type TableStats = { table: string; updates: number; hot: number; dead: number; live: number; heapBytes: number; indexBytes: number };
export type StatementStats = { name: string; calls: number; meanMs: number; hitsPerCall: number; rowsPerCall: number };

const TABLES = ["allotments", "usage_records", "budget_claims", "idempotency_keys"];

/** The statements followed, by a piece of their text. */
const STATEMENTS: [string, string][] = [
  ["record open", "key_claim AS"],
  ["record settle", "usage_records u SET status"],
  ["relay round", "relay_checkpoints WHERE name = 'usage_record_events'"],
];

export async function tableStats(stack: Stack): Promise<TableStats[]> {
  // Another backend's counters reach the view when it next reports (at most about 1 s).
  await new Promise((r) => setTimeout(r, 1_500));
  const rows = await stack.sql<{ relname: string; upd: string; hot: string; dead: string; live: string; heap: string; idx: string }>(
    "managed-ai",
    `SELECT relname, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot, n_dead_tup::text AS dead, n_live_tup::text AS live,
       pg_table_size(relid)::text AS heap, pg_indexes_size(relid)::text AS idx
     FROM pg_stat_user_tables WHERE relname = ANY ($1)`,
    [TABLES],
  );
  return rows.map((r) => ({
    table: r.relname,
    updates: Number(r.upd),
    hot: Number(r.hot),
    dead: Number(r.dead),
    live: Number(r.live),
    heapBytes: Number(r.heap),
    indexBytes: Number(r.idx),
  }));
}

/** Starts pg_stat_statements' counts afresh; false when the server does not preload it. */
export async function resetStatements(stack: Stack): Promise<boolean> {
  try {
    await stack.sql("managed-ai", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await stack.sql("managed-ai", "SELECT pg_stat_statements_reset()");
    return true;
  } catch {
    return false;
  }
}

export async function statementStats(stack: Stack): Promise<StatementStats[]> {
  try {
    const rows = await stack.sql<{ query: string; calls: string; total: number; hits: string; rows: string }>(
      "managed-ai",
      `SELECT query, calls::text, total_exec_time AS total, shared_blks_hit::text AS hits, rows::text
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return STATEMENTS.map(([name, piece]) => {
      const mine = rows.filter((r) => r.query.includes(piece));
      const calls = mine.reduce((n, r) => n + Number(r.calls), 0);
      const per = (f: (r: (typeof rows)[number]) => number) => mine.reduce((n, r) => n + f(r), 0) / Math.max(1, calls);
      return { name, calls, meanMs: per((r) => r.total), hitsPerCall: per((r) => Number(r.hits)), rowsPerCall: per((r) => Number(r.rows)) };
    });
  } catch {
    return [];
  }
}

/** The difference of two readings of the table counters (sizes and dead rows as they stand). */
export function tableDelta(before: TableStats[], after: TableStats[]): TableStats[] {
  return after.map((a) => {
    const b = before.find((x) => x.table === a.table);
    return { ...a, updates: a.updates - (b?.updates ?? 0), hot: a.hot - (b?.hot ?? 0) };
  });
}
