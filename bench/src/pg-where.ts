// Where each database's statement time goes per metered request: this gateway on PostgreSQL,
// NATS and Redis of its own (docker-compose.yml's settings plus pg_stat_statements, nested
// statements tracked), a warm-up, then pg_stat_statements over one measured run.
//   pnpm --filter @gateway/bench pg-where [requests] [json|stream] [connections]
import { measure, targets, type Mode } from "./compare.js";
import { startGateway } from "./gateway.js";
import { useOwnServers } from "./servers.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench pg-where [requests=10000] [json|stream] [connections=32]

Per metered request: the top statements of the managed-ai, ledger and jobs databases by
execution time (pg_stat_statements with track=all: a function's total includes the
statements and triggers it runs, which are listed too), calls, rows and buffer hits per
call. Runs on PostgreSQL, NATS and Redis of its own.`);
  process.exit(0);
}
const [requests = "10000", modeArg = "json", connections = "32"] = process.argv.slice(2);
const mode = modeArg as Mode;
process.env.PRIVATE_PG_SETTINGS = "shared_preload_libraries=pg_stat_statements,pg_stat_statements.track=all";
const own = await useOwnServers();
const mock = await startMock("k");
const gw = await startGateway(mock.url, "k", {}, {}, own);
try {
  const t = targets(mock, mock, gw, "k").find((x) => x.name === "gateway")!;
  const model = () => "bench-small";
  await measure(t, mode, Number(connections), 3000, gw, model);
  for (const s of ["managed-ai", "ledger", "jobs"] as const) {
    await gw.stack.sql(s, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  }
  await gw.stack.sql("managed-ai", "SELECT pg_stat_statements_reset()");
  const m = await measure(t, mode, Number(connections), Number(requests), gw, model);
  console.log(`${mode} at ${connections} connections: ${m.total} requests, ${Math.round(m.requestsPerSecond)} req/s`);
  for (const s of ["managed-ai", "ledger", "jobs"] as const) {
    const rows = await gw.stack.sql<{ query: string; calls: string; total: number; hits: string; rows: string }>(
      s,
      `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query, calls::text, total_exec_time AS total, shared_blks_hit::text AS hits, rows::text
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() ORDER BY total_exec_time DESC LIMIT 8`,
    );
    const sum = rows.reduce((n, r) => n + r.total, 0);
    console.log(`== ${s}: top statements ${((sum * 1000) / m.total).toFixed(1)} µs of execution a request`);
    for (const r of rows)
      console.log(
        `  ${((r.total * 1000) / m.total).toFixed(1).padStart(6)} µs/req  calls/req ${(Number(r.calls) / m.total).toFixed(3)}  rows/call ${(Number(r.rows) / Number(r.calls)).toFixed(1)}  hits/call ${(Number(r.hits) / Number(r.calls)).toFixed(0)}  ${r.query}`,
      );
  }
} finally {
  await gw.stop();
  await mock.stop();
  await own.stop();
}
