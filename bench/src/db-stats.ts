// What PostgreSQL says about the hot tables and statements of managed-ai (issue 36):
// updates and how many were HOT, dead row versions, sizes (pg_stat_user_tables), and per
// statement its calls, time and buffers (pg_stat_statements, when the server preloads it:
// a cluster of one's own started with shared_preload_libraries = 'pg_stat_statements').
import type { Stack } from "@gateway/testkit";

export type TableStats = { table: string; updates: number; hot: number; dead: number; live: number; heapBytes: number; indexBytes: number };
export type StatementStats = { name: string; calls: number; meanMs: number; hitsPerCall: number; rowsPerCall: number; walBytesPerRow: number };
/** WAL records of a phase per table of managed-ai (pg_walinspect): index entries written, heap inserts, updates (HOT), deletes. */
export type WalStats = { table: string; indexEntries: number; inserts: number; updates: number; hot: number; deletes: number };

const TABLES = ["allotments", "usage_records", "usage_records_unsettled", "usage_record_settlements", "budget_claims", "idempotency_keys"];
/** The tables whose WAL records are counted (those a build does not have are left out). */
const WAL_TABLES = ["usage_records", "usage_records_unsettled", "usage_record_own_holds", "usage_record_settlements", "allotments", "idempotency_keys"];

/** The statements followed, by pieces of their text (any of them: builds before and after a change). */
const STATEMENTS: [string, string[]][] = [
  ["record open", ["key_claim AS"]],
  // Since decision 0280 the settlement is a function, its call the statement pg_stat_statements sees.
  ["record settle", ["usage_records u SET status", "FROM usage_records_settle("]],
  ["relay round", ["relay_checkpoints WHERE name = 'usage_record_events'"]],
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
    const rows = await stack.sql<{ query: string; calls: string; total: number; hits: string; rows: string; wal: string }>(
      "managed-ai",
      `SELECT query, calls::text, total_exec_time AS total, shared_blks_hit::text AS hits, rows::text, wal_bytes::text AS wal
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return STATEMENTS.map(([name, pieces]) => {
      const mine = rows.filter((r) => pieces.some((piece) => r.query.includes(piece)));
      const calls = mine.reduce((n, r) => n + Number(r.calls), 0);
      const per = (f: (r: (typeof rows)[number]) => number) => mine.reduce((n, r) => n + f(r), 0) / Math.max(1, calls);
      const records = mine.reduce((n, r) => n + Number(r.rows), 0);
      const wal = mine.reduce((n, r) => n + Number(r.wal), 0);
      return {
        name,
        calls,
        meanMs: per((r) => r.total),
        hitsPerCall: per((r) => Number(r.hits)),
        rowsPerCall: per((r) => Number(r.rows)),
        walBytesPerRow: wal / Math.max(1, records),
      };
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

/** Where the WAL is now (the start of a phase for `walStats`); null without pg_walinspect. */
export async function walPosition(stack: Stack): Promise<string | null> {
  try {
    await stack.sql("managed-ai", "CREATE EXTENSION IF NOT EXISTS pg_walinspect");
    const [row] = await stack.sql<{ lsn: string }>("managed-ai", "SELECT pg_current_wal_lsn()::text AS lsn");
    return row?.lsn ?? null;
  } catch {
    return null;
  }
}

/**
 * The WAL records written since `from` for managed-ai's tables (pg_walinspect, PostgreSQL
 * 15): b-tree leaf inserts into each table's indexes (index entries written), heap inserts,
 * updates (of which HOT) and deletes. Load-independent: what a request writes, not how fast.
 */
export async function walStats(stack: Stack, from: string | null): Promise<WalStats[]> {
  if (!from) return [];
  try {
    const rows = await stack.sql<{ tbl: string; idx: string; ins: string; upd: string; hot: string; del: string }>(
      "managed-ai",
      `WITH w AS (
         SELECT w.resource_manager AS rm, w.record_type AS rt, (regexp_match(w.block_ref, 'rel \\d+/(\\d+)/(\\d+)')) AS m
         FROM pg_get_wal_records_info($1::pg_lsn, pg_current_wal_lsn()) w
         WHERE w.resource_manager IN ('Heap', 'Btree')),
       rel AS (
         SELECT c.relfilenode, coalesce(t.relname, c.relname) AS tbl, c.relkind
         FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
         WHERE coalesce(t.relname, c.relname) = ANY ($2) AND c.relkind IN ('r', 'i'))
       SELECT rel.tbl,
         count(*) FILTER (WHERE w.rm = 'Btree' AND w.rt = 'INSERT_LEAF')::text AS idx,
         count(*) FILTER (WHERE w.rm = 'Heap' AND w.rt LIKE 'INSERT%')::text AS ins,
         count(*) FILTER (WHERE w.rm = 'Heap' AND w.rt LIKE '%UPDATE%')::text AS upd,
         count(*) FILTER (WHERE w.rm = 'Heap' AND w.rt LIKE 'HOT_UPDATE%')::text AS hot,
         count(*) FILTER (WHERE w.rm = 'Heap' AND w.rt LIKE 'DELETE%')::text AS del
       FROM w JOIN rel ON rel.relfilenode = w.m[2]::oid
       WHERE w.m[1]::oid = (SELECT oid FROM pg_database WHERE datname = current_database())
       GROUP BY rel.tbl`,
      [from, WAL_TABLES],
    );
    return rows.map((r) => ({
      table: r.tbl,
      indexEntries: Number(r.idx),
      inserts: Number(r.ins),
      updates: Number(r.upd),
      hot: Number(r.hot),
      deletes: Number(r.del),
    }));
  } catch (err) {
    console.error(`pg_walinspect: ${(err as Error).message}`);
    return [];
  }
}
