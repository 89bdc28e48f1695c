// The request path's record statements on a new, never-analyzed database (issue 36,
// docs/decisions/0280): the generic plans PostgreSQL keeps for them, then buffer hits and
// milliseconds per call (pg_stat_statements) over the first requests, in phases.
//
//   pnpm --filter @gateway/managed-ai build
//   node apps/managed-ai/bench/first-calls.mjs [requests=3000] [phase=1000]
//
// Needs a PostgreSQL started with shared_preload_libraries=pg_stat_statements
// (FIRST_CALLS_SERVER, default postgresql://postgres@127.0.0.1:5461/postgres). The database
// is made by the service's own start-up step (prepareDatabase: create + migrate) and dropped.
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createPool, dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { LOG_RELAY_SETTINGS, logRelaySelect, poolStatements, tailedLog } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { OPEN, SETTLE, UsageRecordWriter } from "../dist/storage/usage-records.js";

const SERVER = process.env.FIRST_CALLS_SERVER ?? "postgresql://postgres@127.0.0.1:5461/postgres";
const PRISMA = fileURLToPath(new URL("../prisma", import.meta.url));
const requests = Number(process.argv[2] ?? 3000);
const phase = Number(process.argv[3] ?? 1000);
const tenants = 50;
const name = `records2_first_calls_${randomBytes(3).toString("hex")}`;

const url = await prepareDatabase({ serverUrl: SERVER, name, schemaPath: `${PRISMA}/schema.prisma`, migrationsDir: `${PRISMA}/migrations`, migrate: true });
const pool = createPool(url, { poolSize: 4 });
try {
  await pool.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  // Half the tenants charge from an open allotment (the claim and the give-back run), half hold per request.
  await pool.query(
    `INSERT INTO allotments (id, tenant_id, state, hold_id, units, expires_at)
     SELECT 'alt_' || i, 'ten_' || i, 'open', 'hold_alt_' || i, 1000000000000, now() + interval '1 day' FROM generate_series(0, $1 - 1, 2) i`,
    [tenants],
  );

  // The plans each statement runs with, generic (as kept after the fifth call), nested ones
  // included (the statements are PL/pgSQL functions since decision 0280): auto_explain's notices.
  const explain = async (label, text, values, settings = "") => {
    const client = await pool.connect();
    const notices = [];
    const listen = (n) => notices.push(n.message ?? "");
    client.on("notice", listen);
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query(
        "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log; SET plan_cache_mode = force_generic_plan",
      );
      await client.query(`BEGIN; ${settings}`);
      await client.query(`PREPARE p AS ${text}`);
      await client.query(`EXECUTE p${values}`);
      await client.query("ROLLBACK; DEALLOCATE p; RESET ALL");
    } finally {
      client.off("notice", listen);
      client.release(true);
    }
    if (process.env.FIRST_CALLS_PLANS) console.log(notices.join("\n"));
    const scans = notices
      .flatMap((n) => n.split("\n"))
      .filter((l) => /Seq Scan on (usage_records|usage_record_settlements|allotments|idempotency_keys|usage_records_unsettled)\b/.test(l));
    const probes = notices
      .flatMap((n) => n.split("\n"))
      .filter((l) => /Index (Only )?Scan using \w+ on (usage_records|allotments|idempotency_keys)\b/.test(l)).length;
    console.log(
      `${label} (${probes} index scans of usage_records, allotments, idempotency_keys): ${scans.length === 0 ? "no sequential scan of a table it should probe" : scans.map((s) => s.trim().replace(/\s+\(.*$/, "")).join("; ")}`,
    );
  };
  const stats = await pool.query(
    "SELECT relname, reltuples FROM pg_class WHERE relname IN ('usage_records', 'usage_record_settlements', 'allotments', 'idempotency_keys') ORDER BY relname",
  );
  console.log(`database ${name}; reltuples after start-up: ${stats.rows.map((r) => `${r.relname} ${r.reltuples}`).join(", ")}`);
  await explain(
    "open, generic plan",
    OPEN,
    "('{a}','{ten_0}','{k}','{chat}','{small}','{p}','{u}','{0}','{f}','{1}','{1}','{1}','{2030-01-01}','{i}','{managed}','{x}')",
  );
  await explain("settle, generic plan", SETTLE, "('{a}','{completed}','{NULL}','{NULL}','{1}','{NULL}')");
  await explain("log relay, generic plan", logRelaySelect("usage_record_events", "usage_record_events", 500, "transaction"), "", LOG_RELAY_SETTINGS);

  const writer = new UsageRecordWriter(poolStatements(pool), createLogger({ service: "first-calls", level: "silent" }), undefined, { concurrency: 2 });
  const relay = tailedLog({ pool, log: "usage_record_events", checkpoint: "usage_record_events", order: "transaction" });
  const one = async (i) => {
    const id = `req_fc_${i}`;
    const tenant = `ten_${i % tenants}`;
    await writer.open({
      id,
      tenantId: tenant,
      apiKeyId: `key_${tenant}`,
      serviceAlias: "chat",
      modelAlias: "small",
      priceId: "price_1",
      upstreamId: "up_1",
      discountBps: 0,
      stream: false,
      inputTokensBound: 10,
      outputTokensCap: 20,
      reservedUnits: 1000n,
      holdExpiresAt: new Date(Date.now() + 60_000),
      idempotencyKey: `idem_${id}`,
    });
    await writer.settle({ id, status: "completed", errorCode: null, holdId: i % 2 === 0 ? null : `hold_${id}`, finalUnits: 700n, usageJson: "{}" });
  };
  const WANTED = [
    // Before decision 0280 the statements' own text, since then the calls of their functions.
    [
      "open",
      "%WITH input AS (%unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[]%",
      "%FROM usage_records_open(%",
    ],
    ["settle", "%usage_record_settlements (seq, record_id%", "%FROM usage_records_settle(%"],
    // A batch of one record, since decision 0332.
    ["open (one record)", "%FROM usage_records_open_one(%"],
    ["settle (one record)", "%FROM usage_records_settle_one(%"],
    ["log relay", "%log_relay_usage_record_events%"],
  ];
  console.log("phase (requests) | statement | calls | ms/call | buffer hits/call | reads/call");
  for (let from = 0; from < requests; from += phase) {
    await pool.query("SELECT pg_stat_statements_reset()");
    // 8 requests at a time, a relay round every 50 (it publishes nowhere).
    for (let i = from; i < Math.min(requests, from + phase); i += 8) {
      await Promise.all(Array.from({ length: Math.min(8, requests - i) }, (_, k) => one(i + k)));
      if ((i / 8) % 6 === 5) await relay.round(500, async () => undefined);
    }
    for (const [label, like, likeToo = like] of WANTED) {
      const { rows } = await pool.query(
        `SELECT sum(calls)::int AS calls, sum(total_exec_time + total_plan_time) / sum(calls) AS ms, sum(shared_blks_hit)::float / sum(calls) AS hits,
           sum(shared_blks_read)::float / sum(calls) AS reads
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND (query LIKE $1 OR query LIKE $2) AND query NOT LIKE '%EXPLAIN%'`,
        [like, likeToo],
      );
      const r = rows[0];
      console.log(
        `${from + 1}-${Math.min(requests, from + phase)} | ${label} | ${r.calls} | ${Number(r.ms).toFixed(3)} | ${Number(r.hits).toFixed(1)} | ${Number(r.reads).toFixed(2)}`,
      );
    }
  }
  const an = await pool.query(
    "SELECT relname, coalesce(last_autoanalyze::text, 'never') AS a FROM pg_stat_user_tables WHERE relname IN ('usage_records', 'usage_record_settlements', 'allotments') ORDER BY relname",
  );
  console.log(`autoanalyze during the run: ${an.rows.map((r) => `${r.relname} ${r.a}`).join(", ")}`);
} finally {
  await pool.end();
  await dropDatabase(SERVER, name);
}
