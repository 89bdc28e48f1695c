// What it costs to drop the relay's published settlement events (issue 37, docs/decisions/0281):
// the bounded DELETE behind the checkpoint (storage/settlement-log.ts) against partitions of the
// log by seq range dropped whole, on the same rows. Prints ms, WAL bytes and buffer hits per row,
// and what each costs the request path (the settlement's insert into the log).
//
//   pnpm --filter @gateway/managed-ai build
//   node apps/managed-ai/bench/prune-cost.mjs [rows=200000]
//
// FIRST_CALLS_SERVER as bench/first-calls.mjs (a private PostgreSQL with pg_stat_statements).
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createPool, dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { settlementLogPruner } from "../dist/storage/settlement-log.js";

const SERVER = process.env.FIRST_CALLS_SERVER ?? "postgresql://postgres@127.0.0.1:5461/postgres";
const PRISMA = fileURLToPath(new URL("../prisma", import.meta.url));
const rows = Number(process.argv[2] ?? 200_000);
const name = `records2_prune_${randomBytes(3).toString("hex")}`;
const url = await prepareDatabase({ serverUrl: SERVER, name, schemaPath: `${PRISMA}/schema.prisma`, migrationsDir: `${PRISMA}/migrations`, migrate: true });
const pool = createPool(url, { poolSize: 2 });
const lsn = async () => BigInt((await pool.query("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint::text AS l")).rows[0].l);
const hits = async () => Number((await pool.query("SELECT blks_hit::bigint AS h FROM pg_stat_database WHERE datname = current_database()")).rows[0].h);
const measure = async (label, fn, per) => {
  await pool.query("SELECT pg_stat_force_next_flush()").catch(() => undefined);
  const w0 = await lsn();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  const w1 = await lsn();
  console.log(`${label}: ${ms.toFixed(0)} ms, ${((ms * 1000) / per).toFixed(2)} µs/row, WAL ${(Number(w1 - w0) / per).toFixed(0)} B/row`);
};
// Rows as the settlement writes them: 3 a transaction id (a group-committed batch).
const fill = (table) =>
  pool.query(
    `INSERT INTO ${table} (seq, record_id, tenant_id, api_key_id, status, reserved_units, final_units, error_code, created_at)
     SELECT 1000 + i / 3, 'req_' || lpad(i::text, 12, '0'), 'ten_' || (i % 1000), 'key_' || (i % 1000), 'completed', 1000, 700, NULL, now()
     FROM generate_series(1, $1) i`,
    [rows],
  );
try {
  const span = Math.ceil(rows / 3);
  // The plain log (as the migrations make it).
  await measure(`insert ${rows} into the plain log`, () => fill("usage_record_settlements"), rows);
  await pool.query("VACUUM ANALYZE usage_record_settlements");
  await pool.query(
    "INSERT INTO relay_checkpoints (name, position) VALUES ('usage_record_events', $1) ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position",
    [1000 + span],
  );
  const h0 = await hits();
  await measure(
    "bounded DELETE behind the checkpoint (5,000 a statement)",
    async () => {
      const pruner = settlementLogPruner(pool, { batch: 5_000, maxBatches: 1_000 });
      const deleted = await pruner.round();
      if (deleted !== rows) throw new Error(`deleted ${deleted}`);
    },
    rows,
  );
  console.log(`  buffer hits ${((await hits()) - h0) / rows} a row (the database's, incl. this script's reads)`);
  await measure("VACUUM after it", () => pool.query("VACUUM usage_record_settlements"), rows);

  // The same log partitioned by seq range (a partition per 10,000 positions), dropped whole.
  await pool.query(`CREATE TABLE log_p (LIKE usage_record_settlements INCLUDING ALL) PARTITION BY RANGE (seq)`.replace("INCLUDING ALL", "INCLUDING DEFAULTS"));
  await pool.query("ALTER TABLE log_p ADD PRIMARY KEY (seq, record_id)");
  const parts = Math.ceil(span / 10_000) + 1;
  for (let p = 0; p < parts; p++)
    await pool.query(`CREATE TABLE log_p_${p} PARTITION OF log_p FOR VALUES FROM (${1000 + p * 10_000}) TO (${1000 + (p + 1) * 10_000})`);
  await measure(`insert ${rows} into the partitioned log (${parts} partitions)`, () => fill("log_p"), rows);
  await measure(
    "DROP of every partition behind the checkpoint",
    async () => {
      for (let p = 0; p < parts; p++) await pool.query(`DROP TABLE log_p_${p}`);
    },
    rows,
  );

  // The request path: one settlement's insert into the log, 2,000 times each (3 rows a statement).
  for (const table of ["usage_record_settlements", "log_p"]) {
    if (table === "log_p")
      for (let p = 0; p < 2; p++)
        await pool.query(`CREATE TABLE log_p_${p} PARTITION OF log_p FOR VALUES FROM (${p * 10_000_000}) TO (${(p + 1) * 10_000_000})`);
    await pool.query(`TRUNCATE ${table}`);
    const t0 = performance.now();
    for (let i = 0; i < 2_000; i++)
      await pool.query({
        name: `ins_${table}`,
        text: `INSERT INTO ${table} (seq, record_id, tenant_id, status, reserved_units, created_at)
               SELECT $1::bigint, unnest($2::text[]), 'ten_1', 'completed', 1000, now()`,
        values: [100 + i, [`a${i}`, `b${i}`, `c${i}`]],
      });
    console.log(`insert of a 3-record settlement into ${table}: ${((performance.now() - t0) / 2_000).toFixed(3)} ms a statement (round trip included)`);
  }
} finally {
  await pool.end();
  await dropDatabase(SERVER, name);
}
