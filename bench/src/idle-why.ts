// What PostgreSQL does in a window of the idle benchmark, told apart: which processes of the
// cluster spent the CPU (by backend type, and those that ended in the window), which tables
// autovacuum and autoanalyze visited, how many rows and transactions each service's database
// saw, and what was seen running (pg_stat_activity sampled every few hundred milliseconds).
import pg from "pg";
import { sampleCpu, usageBetween, type CpuSample, type ProcessGroup } from "./cpu.js";
import { childrenOf, reapedCpu } from "./servers.js";

/** The benchmark's own connections carry this name; their backends are not the stack's. */
export const BENCH_APPLICATION = "idle-bench";

type TableCounts = Map<string, { vacuums: number; analyzes: number; ins: number; upd: number; del: number }>;
type Counts = { tables: TableCounts; transactions: Map<string, number>; wal: bigint };

/** A connection of the benchmark's own (application_name `idle-bench`). */
async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, application_name: BENCH_APPLICATION });
  await c.connect();
  return c;
}

const withDatabase = (serverUrl: string, database: string) => {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
};

export type PgWatch = {
  /** Process groups of the cluster (own servers only: by backend type; backends by service). */
  groups(): ProcessGroup[];
  /** Reads which process is which (before each CPU sample). */
  classify(): Promise<void>;
  /** Starts a window: counters now, and the activity sampler until `end`. */
  begin(): Promise<WindowStart>;
  close(): Promise<void>;
};

export type WindowStart = {
  /** The CPU sample of `groups` and the figures that tell PostgreSQL's work apart. */
  end(sample: CpuSample, beginSample: CpuSample): Promise<{ endedCpu: number; lines: string[] }>;
  reaped: number;
};

/**
 * Watches the stack's PostgreSQL. `databases` maps each service's database name to the
 * service. With `postmaster` (the benchmark's own cluster) every process of the cluster is
 * grouped by what it is, and the CPU of those that ended in a window is recovered from the
 * postmaster's reaped-children time.
 */
export async function watchPostgres(options: { serverUrl: string; databases: Map<string, string>; postmaster?: number; sampleMs: number }): Promise<PgWatch> {
  const { serverUrl, databases, postmaster, sampleMs } = options;
  const probe = await client(serverUrl);
  const perDb = new Map<string, pg.Client>();
  for (const [db, service] of databases) perDb.set(service, await client(withDatabase(serverUrl, db)));
  // pid → group, from the last classify().
  let groupOf = new Map<number, string>();
  const names = new Set<string>([
    ...[...databases.values()].map((s) => `postgres (${s})`),
    "postgres (autovacuum workers)",
    "postgres (autovacuum launcher)",
    "postgres (checkpointer)",
    "postgres (background writer)",
    "postgres (walwriter)",
    "postgres (logical replication launcher)",
    "postgres (postmaster)",
    "postgres (other)",
    "bench connections",
  ]);

  const counts = async (): Promise<Counts> => {
    const tables: TableCounts = new Map();
    for (const [service, c] of perDb) {
      const { rows } = await c.query<{ relname: string; v: string; a: string; i: string; u: string; d: string }>(
        `SELECT relname, autovacuum_count::text AS v, autoanalyze_count::text AS a, n_tup_ins::text AS i, n_tup_upd::text AS u, n_tup_del::text AS d
         FROM pg_stat_user_tables`,
      );
      for (const r of rows)
        tables.set(`${service}.${r.relname}`, { vacuums: Number(r.v), analyzes: Number(r.a), ins: Number(r.i), upd: Number(r.u), del: Number(r.d) });
    }
    const { rows } = await probe.query<{ datname: string; n: string }>(
      "SELECT datname, (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = ANY($1)",
      [[...databases.keys()]],
    );
    // The cluster's WAL position (the whole server's, other databases included when it is shared).
    const { rows: wal } = await probe.query<{ lsn: string }>("SELECT (pg_current_wal_lsn() - '0/0')::text AS lsn");
    return { tables, transactions: new Map(rows.map((r) => [databases.get(r.datname)!, Number(r.n)])), wal: BigInt(wal[0]!.lsn) };
  };

  return {
    groups() {
      if (postmaster === undefined) return [];
      return [...names].map((name) => ({ name, pids: () => [...groupOf].filter(([, g]) => g === name).map(([pid]) => pid) }));
    },
    async classify() {
      if (postmaster === undefined) return;
      const { rows } = await probe.query<{ pid: number; datname: string | null; backend_type: string; application_name: string }>(
        "SELECT pid, datname, backend_type, application_name FROM pg_stat_activity",
      );
      const byPid = new Map(rows.map((r) => [r.pid, r]));
      const next = new Map<number, string>([[postmaster, "postgres (postmaster)"]]);
      for (const pid of childrenOf(postmaster)) {
        const r = byPid.get(pid);
        let group = "postgres (other)";
        if (r?.backend_type === "client backend") {
          const service = r.datname ? databases.get(r.datname) : undefined;
          group = r.application_name === BENCH_APPLICATION ? "bench connections" : service ? `postgres (${service})` : "postgres (other)";
        } else if (r?.backend_type === "autovacuum worker") group = "postgres (autovacuum workers)";
        else if (r && names.has(`postgres (${r.backend_type})`)) group = `postgres (${r.backend_type})`;
        next.set(pid, group);
      }
      groupOf = next;
    },
    async begin() {
      const before = await counts();
      const reaped = postmaster === undefined ? 0 : reapedCpu(postmaster);
      const seen = new Map<string, number>();
      let samples = 0;
      let running = true;
      const sampler = (async () => {
        while (running && sampleMs > 0) {
          const { rows } = await probe.query<{ datname: string | null; backend_type: string; q: string }>(
            `SELECT datname, backend_type, left(regexp_replace(coalesce(query, ''), '\\s+', ' ', 'g'), 80) AS q FROM pg_stat_activity
             WHERE pid <> pg_backend_pid() AND application_name <> $1
               AND ((backend_type = 'client backend' AND state = 'active') OR backend_type = 'autovacuum worker')`,
            [BENCH_APPLICATION],
          );
          samples++;
          for (const r of rows) {
            const service = r.datname ? databases.get(r.datname) : undefined;
            if (!service) continue;
            const key = `${r.backend_type === "autovacuum worker" ? "autovacuum in " : ""}${service}: ${r.q}`;
            seen.set(key, (seen.get(key) ?? 0) + 1);
          }
          await new Promise((r) => setTimeout(r, sampleMs));
        }
      })();
      return {
        reaped,
        async end(sample, beginSample) {
          running = false;
          await sampler;
          const after = await counts();
          const lines: string[] = [];
          // CPU of the cluster's processes that ended in the window: the postmaster's reaped time,
          // less what those that were alive at the start had used before it.
          let endedCpu = 0;
          if (postmaster !== undefined) {
            const alive = new Set([...sample.values()].flatMap((m) => [...m.keys()]));
            let before = 0;
            for (const [name, pids] of beginSample)
              if (name.startsWith("postgres") || name === "bench connections") for (const [pid, u] of pids) if (!alive.has(pid)) before += u.cpu;
            endedCpu = Math.max(0, reapedCpu(postmaster) - reaped - before);
          }
          const vac: string[] = [];
          const ana: string[] = [];
          const rows = new Map<string, { ins: number; upd: number; del: number }>();
          for (const [table, a] of after.tables) {
            const b = before.tables.get(table) ?? { vacuums: 0, analyzes: 0, ins: 0, upd: 0, del: 0 };
            if (a.vacuums > b.vacuums) vac.push(`${table}${a.vacuums - b.vacuums > 1 ? ` ×${a.vacuums - b.vacuums}` : ""}`);
            if (a.analyzes > b.analyzes) ana.push(`${table}${a.analyzes - b.analyzes > 1 ? ` ×${a.analyzes - b.analyzes}` : ""}`);
            const service = table.slice(0, table.indexOf("."));
            const r = rows.get(service) ?? { ins: 0, upd: 0, del: 0 };
            r.ins += a.ins - b.ins;
            r.upd += a.upd - b.upd;
            r.del += a.del - b.del;
            rows.set(service, r);
          }
          // Less the one read of this window's end in each database (the benchmark's own).
          const tx = [...after.transactions]
            .map(([s, n]) => [s, n - (before.transactions.get(s) ?? n) - 1] as const)
            .filter(([, n]) => n > 0)
            .map(([s, n]) => `${s} ${n}`);
          const changed = [...rows].filter(([, r]) => r.ins + r.upd + r.del > 0).map(([s, r]) => `${s} ${r.ins}/${r.upd}/${r.del}`);
          lines.push(
            `autovacuum: ${vac.join(", ") || "none"}; autoanalyze: ${ana.join(", ") || "none"}; transactions: ${tx.join(", ") || "none"}; WAL ${after.wal - before.wal} bytes`,
          );
          if (changed.length > 0) lines.push(`rows inserted/updated/deleted: ${changed.join(", ")}`);
          if (sampleMs > 0) {
            const top = [...seen].sort((a, b) => b[1] - a[1]).slice(0, 6);
            lines.push(`running in ${samples} samples: ${top.map(([k, n]) => `${n}× ${k}`).join(" | ") || "nothing"}`);
          }
          return { endedCpu, lines };
        },
      };
    },
    async close() {
      await probe.end();
      for (const c of perDb.values()) await c.end();
    },
  };
}

/** Per group: ms of CPU per second and wake-ups per second between two samples. */
export function perSecond(a: CpuSample, b: CpuSample, ms: number): (readonly [string, number, number])[] {
  return [...usageBetween(a, b)].map(([name, u]) => [name.replace(" (this process)", ""), (u.cpu * 1000 * 1000) / ms, (u.wakeups * 1000) / ms] as const);
}

export { sampleCpu };
