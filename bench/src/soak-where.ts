// Where the soak's time goes, window by window (issue 37): CPU per answered request of
// every process group (bench/src/cpu.ts), the top statements per database by total time
// (pg_stat_statements, when the server preloads it), the tables that grow (rows and size),
// and each service's V8 heap (its /metrics). Read at each window's end; the report compares
// the windows of one run, which the machine's load moves far less than latencies.
import { cpuBetween, sampleCpu, type CpuSample } from "./cpu.js";
import { PROCS, type Gateway } from "./gateway.js";

type Service = (typeof PROCS)[number];
type Statement = { service: Service; query: string; calls: number; ms: number; hits: number; reads: number; rows: number };
type Table = { rows: number; bytes: number };
type Heap = { used: number; total: number; external: number };

/** One reading, at a window's edge. */
export type Mark = {
  at: number;
  answered: number;
  cpu: CpuSample;
  /** By database and queryid; null without pg_stat_statements. */
  statements: Map<string, Statement> | null;
  /** `service.table` → rows (the planner's live count) and total size (heap, indexes, TOAST). */
  tables: Map<string, Table>;
  heap: Map<Service, Heap>;
};

export type Where = { mark(at: number, answered: number): Promise<Mark>; report(marks: Mark[]): string[] };

const MiB = 1024 * 1024;

export async function whereTheTimeGoes(gateway: Gateway): Promise<Where> {
  const { stack } = gateway;
  const dbOf = new Map<string, Service>();
  for (const p of PROCS) dbOf.set((await stack.sql<{ db: string }>(p, "SELECT current_database() AS db"))[0]!.db, p);
  // The view lives in the extension, which one database of the stack must hold; it shows every database's statements.
  let statementsOn = false;
  try {
    await stack.sql("ledger", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await stack.sql("ledger", "SELECT pg_stat_statements_reset()");
    statementsOn = true;
  } catch {
    statementsOn = false;
  }

  async function statements(): Promise<Map<string, Statement> | null> {
    if (!statementsOn) return null;
    const rows = await stack.sql<{ db: string; id: string; query: string; calls: string; ms: number; hits: string; reads: string; rows: string }>(
      "ledger",
      `SELECT d.datname AS db, s.queryid::text AS id, s.query, s.calls::text, s.total_exec_time AS ms, s.shared_blks_hit::text AS hits,
              s.shared_blks_read::text AS reads, s.rows::text
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ANY ($1)`,
      [[...dbOf.keys()]],
    );
    const out = new Map<string, Statement>();
    for (const r of rows) {
      const service = dbOf.get(r.db)!;
      // The same statement may be listed once per user and top-level flag: summed.
      const key = `${service}:${r.id}`;
      const was = out.get(key);
      const s = { service, query: r.query, calls: Number(r.calls), ms: Number(r.ms), hits: Number(r.hits), reads: Number(r.reads), rows: Number(r.rows) };
      out.set(
        key,
        was ? { ...was, calls: was.calls + s.calls, ms: was.ms + s.ms, hits: was.hits + s.hits, reads: was.reads + s.reads, rows: was.rows + s.rows } : s,
      );
    }
    return out;
  }

  async function tables(): Promise<Map<string, Table>> {
    const out = new Map<string, Table>();
    for (const p of PROCS) {
      const rows = await stack.sql<{ name: string; rows: string; bytes: string }>(
        p,
        "SELECT relname AS name, n_live_tup::text AS rows, pg_total_relation_size(relid)::text AS bytes FROM pg_stat_user_tables",
      );
      for (const r of rows) out.set(`${p}.${r.name}`, { rows: Number(r.rows), bytes: Number(r.bytes) });
    }
    return out;
  }

  async function heaps(): Promise<Map<Service, Heap>> {
    const out = new Map<Service, Heap>();
    for (const p of PROCS) {
      try {
        const text = await (await fetch(stack.metricsUrl(p))).text();
        const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, "m").exec(text)?.[1] ?? 0);
        out.set(p, {
          used: value("nodejs_heap_size_used_bytes"),
          total: value("nodejs_heap_size_total_bytes"),
          external: value("nodejs_external_memory_bytes"),
        });
      } catch {
        out.set(p, { used: 0, total: 0, external: 0 });
      }
    }
    return out;
  }

  return {
    async mark(at, answered) {
      await gateway.snapshotBackends();
      const cpu = sampleCpu(gateway.groups());
      return { at, answered, cpu, statements: await statements(), tables: await tables(), heap: await heaps() };
    },
    report(marks) {
      return report(marks, statementsOn);
    },
  };
}

const cell = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

function report(marks: Mark[], statementsOn: boolean): string[] {
  const lines: string[] = [];
  const spans = marks.slice(1).map((m, i) => ({ from: marks[i]!, to: m }));
  const head = spans.map((s) => `${(s.from.at / 60_000).toFixed(0)}–${(s.to.at / 60_000).toFixed(0)} min`);
  const table = (first: string) => {
    lines.push(`| ${first} | ${head.join(" | ")} |`);
    lines.push(`|---|${head.map(() => "---:").join("|")}|`);
  };

  lines.push("## Where the time goes (CPU ms per answered request, per window)");
  lines.push("");
  table("Process group");
  const cpu = spans.map((s) => ({ per: cpuBetween(s.from.cpu, s.to.cpu), answered: Math.max(1, s.to.answered - s.from.answered) }));
  const groups = [...(cpu[0]?.per.keys() ?? [])];
  const total = cpu.map(() => 0);
  for (const g of groups) {
    const row = cpu.map((c, i) => {
      const ms = ((c.per.get(g) ?? 0) * 1000) / c.answered;
      if (!g.startsWith("load generator")) total[i]! += ms;
      return ms;
    });
    lines.push(`| ${g} | ${row.map(cell).join(" | ")} |`);
  }
  lines.push(`| **the stack (all but the load generator)** | ${total.map(cell).join(" | ")} |`);
  lines.push(`| requests answered | ${cpu.map((c) => c.answered).join(" | ")} |`);
  lines.push("");
  lines.push(
    "CPU seconds each group used in the window (threads' run time, /proc/<pid>/task/*/schedstat) ÷ requests answered in it. " +
      "PostgreSQL backends are grouped by the database they serve; `own processes` also holds every other cluster's processes on the machine, " +
      "and NATS and Redis are the machine's, shared with whatever else runs: compare the windows, not the absolute figures. " +
      "The load generator is this process, which also runs the mock AI provider, the webhook receiver and the TRON mock.",
  );
  lines.push("");

  lines.push("## Heap of each service (V8 heap used / external memory, MiB, at each window's end)");
  lines.push("");
  lines.push(`| Service | start | ${head.join(" | ")} |`);
  lines.push(`|---|---:|${head.map(() => "---:").join("|")}|`);
  for (const p of PROCS)
    lines.push(`| ${p} | ${marks.map((m) => `${cell((m.heap.get(p)?.used ?? 0) / MiB)} / ${cell((m.heap.get(p)?.external ?? 0) / MiB)}`).join(" | ")} |`);
  lines.push("");

  lines.push("## Top statements per database (per window: total ms, calls, ms per call, buffer hits per call)");
  lines.push("");
  if (!statementsOn || marks.some((m) => !m.statements)) {
    lines.push("The server does not preload pg_stat_statements: run with DATABASE_URL on a cluster that does (see the notes).");
    lines.push("");
  } else {
    const delta = spans.map((s) => {
      const out = new Map<string, Statement>();
      for (const [k, b] of s.to.statements!) {
        const a = s.from.statements!.get(k);
        out.set(k, {
          ...b,
          calls: b.calls - (a?.calls ?? 0),
          ms: b.ms - (a?.ms ?? 0),
          hits: b.hits - (a?.hits ?? 0),
          reads: b.reads - (a?.reads ?? 0),
          rows: b.rows - (a?.rows ?? 0),
        });
      }
      return out;
    });
    for (const p of PROCS) {
      // The statements that cost most over the run, and those that cost most in the last window.
      const whole = new Map<string, number>();
      for (const d of delta) for (const [k, s] of d) if (s.service === p) whole.set(k, (whole.get(k) ?? 0) + s.ms);
      const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k]) => k);
      const last = new Map([...(delta.at(-1) ?? new Map<string, Statement>())].filter(([, s]) => s.service === p).map(([k, s]) => [k, s.ms] as const));
      const keys = [...new Set([...top(whole).slice(0, 4), ...top(last).slice(0, 2)])];
      if (keys.length === 0) continue;
      lines.push(`${p}:`);
      lines.push("");
      table("Statement");
      for (const k of keys) {
        const query = (delta.find((d) => d.has(k))?.get(k)?.query ?? "").replace(/\s+/g, " ").replace(/\|/g, "\\|").slice(0, 90);
        const row = delta.map((d) => {
          const s = d.get(k);
          if (!s || s.calls === 0) return "–";
          return `${cell(s.ms)} ms, ${s.calls}, ${cell(s.ms / s.calls)}, ${cell(s.hits / s.calls)}`;
        });
        lines.push(`| \`${query}\` | ${row.join(" | ")} |`);
      }
      lines.push("");
    }
  }

  lines.push("## Tables that grow (rows / MiB at each window's end; the largest 15)");
  lines.push("");
  const end = marks.at(-1)!.tables;
  const biggest = [...end]
    .filter(([, t]) => t.rows >= 1_000 || t.bytes >= MiB)
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, 15)
    .map(([k]) => k);
  lines.push(`| Table | start | ${head.join(" | ")} |`);
  lines.push(`|---|---:|${head.map(() => "---:").join("|")}|`);
  for (const k of biggest)
    lines.push(`| ${k} | ${marks.map((m) => `${m.tables.get(k)?.rows ?? 0} / ${cell((m.tables.get(k)?.bytes ?? 0) / MiB)}`).join(" | ")} |`);
  lines.push("");
  lines.push("Rows: pg_stat_user_tables.n_live_tup; MiB: pg_total_relation_size (heap, indexes, TOAST).");
  lines.push("");
  return lines;
}
