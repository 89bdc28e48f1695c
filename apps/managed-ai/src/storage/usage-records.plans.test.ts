import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOG_RELAY_SETTINGS, logRelaySelect, poolStatements } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { freshDatabase, type FreshDatabase } from "@gateway/testkit";
import { recordToOpen } from "../testing/records.js";
import { SETTLE, UsageRecordWriter, type RecordToOpen } from "./usage-records.js";

/**
 * The usage-record statements are named prepared statements (docs/decisions/0167): parsed
 * once per connection, and planned once when PostgreSQL keeps their generic plan. Checked
 * on one connection that starts on an empty database, with the parser's and planner's
 * statistics (one notice per parse and per plan) and auto_explain (the plan each
 * execution used): the plans must look records and keys up by index, as the custom
 * plans do, also when made on empty tables.
 */
const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));
let db: FreshDatabase;
let pool: FreshDatabase["pool"];
const notices: string[] = [];

beforeAll(async () => {
  db = await freshDatabase({ prefix: "gw_test_mai_plans", prismaDir: PRISMA_DIR, poolSize: 1 });
  pool = db.pool;
  const client = await pool.connect();
  client.on("notice", (n) => notices.push(n.message ?? ""));
  await client.query("LOAD 'auto_explain'");
  await client.query("SET auto_explain.log_min_duration = 0; SET client_min_messages = log; SET log_parser_stats = on; SET log_planner_stats = on");
  client.release();
});
afterAll(() => db?.drop());

let n = 0;
function record(): RecordToOpen {
  const id = `req_plan_${++n}`;
  return recordToOpen({ id, tenantId: "ten_plan", apiKeyId: "key_plan", idempotencyKey: `idem_${id}` });
}
const settlement = (id: string) => ({
  id,
  status: "completed" as const,
  errorCode: null,
  holdId: `hold_${id}`,
  finalUnits: 100n,
  usageJson: '{"prompt_tokens":1}',
});

/** Parses and plans (one notice each) of `rounds` opens and settlements of one record, with or without statement names. */
async function run(rounds: number, named: boolean): Promise<{ parses: number; plans: number; used: string[] }> {
  const statements = poolStatements(pool);
  const sql = named ? statements : { ...statements, query: <R>(text: string, values: unknown[]) => statements.query<R>(text, values) };
  const writer = new UsageRecordWriter(sql, createLogger({ service: "plans-test", level: "silent" }), undefined, { concurrency: 1 });
  notices.length = 0;
  for (let i = 0; i < rounds; i++) {
    const r = record();
    expect(await writer.open(r)).not.toBeNull();
    expect(await writer.settle(settlement(r.id))).toBe(true);
  }
  return {
    parses: notices.filter((m) => m.startsWith("PARSER STATISTICS")).length,
    plans: notices.filter((m) => m.startsWith("PLANNER STATISTICS")).length,
    used: notices.filter((m) => /plan:/.test(m)),
  };
}

describe("the usage-record statements", () => {
  it("are parsed once per connection and planned once, with index lookups also when planned on empty tables", async () => {
    const rounds = 12;
    const named = await run(rounds, true);
    const statementsRun = 2 * rounds;
    // Before: every execution parsed and planned.
    const unnamed = await run(rounds, false);
    console.log(
      `usage-record statements, ${statementsRun} executions on one connection: unnamed ${unnamed.parses} parses / ${unnamed.plans} plans; named ${named.parses} parses / ${named.plans} plans`,
    );
    // The settlement inlines allotment_claim (a SQL function: its body is parsed whenever
    // the statement is planned), so an unnamed run parses it every time too.
    expect(unnamed.parses).toBe(statementsRun + rounds);
    // Five custom plans each, then the generic plan is kept (plan_cache_mode = auto); the
    // settlement's plans parse the inlined function's body, and nothing parses after that.
    // The triggers that keep usage_records' side tables (docs/decisions/0242) add their
    // statements' plans once per connection (PL/pgSQL keeps them): 8 on this one.
    expect(named.plans).toBeLessThanOrEqual(2 * 6 + 8);
    expect(named.parses).toBe(2 + 6);
    const { rows } = await pool.query<{ name: string; generic_plans: string; custom_plans: string }>(
      "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'usage_records_%' ORDER BY name",
    );
    expect(rows.map((r) => [r.name, Number(r.generic_plans) > 0])).toEqual([
      ["usage_records_open", true],
      ["usage_records_settle", true],
    ]);
    // usage_records has no index on status since decision 0242 (a settlement's update stays
    // HOT): on a table that was never analyzed the planner reads its (assumed 10) pages for
    // the settlement's "reserved, by id" instead of the primary key, until the first
    // autoanalyze (50 rows) plans again; the next test checks the plan on a table with
    // statistics. The side tables (usage_records_unsettled, ...) hold a few hundred rows.
    const scans = named.used.filter((p) => /Seq Scan on (idempotency_keys|allotments)\b/.test(p));
    expect(named.used.length).toBeGreaterThanOrEqual(statementsRun);
    if (scans.length) console.log(named.used.find((p) => /Seq Scan on allotments/.test(p)));
    expect(scans).toEqual([]);
  });

  it("look the settled records up by their key once usage_records has statistics (docs/decisions/0242)", async () => {
    const client = await pool.connect();
    try {
      await client.query(
        `INSERT INTO usage_records (id, tenant_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
           input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, updated_at)
         SELECT 'req_stats_' || i, 'ten_' || (i % 100), 'chat', 'small', 'price_1', 'up_1', 0, CASE WHEN i % 500 = 0 THEN 'reserved' ELSE 'completed' END,
           false, 10, 20, 123, now(), now()
         FROM generate_series(1, 20000) AS i`,
      );
      await client.query("ANALYZE usage_records");
      const results = (await client.query(
        `BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; PREPARE settle_plan AS ${SETTLE};
         EXPLAIN EXECUTE settle_plan('{a}', '{completed}', '{NULL}', '{NULL}', '{1}', '{NULL}'); DEALLOCATE settle_plan; ROLLBACK`,
      )) as unknown as { rows: { "QUERY PLAN": string }[] }[];
      const plan = results
        .flatMap((r) => r.rows ?? [])
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Scan using usage_records_pkey on usage_records/);
      expect(plan).not.toMatch(/Seq Scan on usage_records\b/);
    } finally {
      await client.query("DELETE FROM usage_records WHERE id LIKE 'req_stats_%'");
      client.release();
    }
  });

  it("let the relay read the records' events by index range scans, also when planned on an empty table (docs/decisions/0205)", async () => {
    const client = await pool.connect();
    const explain = async () => {
      // As a relay round plans it: inside its transaction, with its settings.
      const results = (await client.query(
        `BEGIN; ${LOG_RELAY_SETTINGS}; EXPLAIN ${logRelaySelect("usage_record_events", "usage_record_events", 500, "transaction")}; ROLLBACK`,
      )) as unknown as { rows: { "QUERY PLAN": string }[] }[];
      return results
        .flatMap((r) => r.rows ?? [])
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    };
    try {
      await client.query("DELETE FROM usage_records; DELETE FROM usage_record_settlements");
      await client.query("ANALYZE usage_records; ANALYZE usage_record_settlements");
      const empty = await explain();
      await client.query(
        `INSERT INTO usage_records (id, tenant_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
           input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, updated_at, opened_txid, settled_txid, settled_status, settled_event_at)
         SELECT 'req_seed_' || i, 'ten_' || (i % 100), 'chat', 'small', 'price_1', 'up_1', 0, 'completed', false, 10, 20, 123, now(), now(),
           i / 8, i / 8 + 3, 'completed', now()
         FROM generate_series(1, 20000) AS i`,
      );
      await client.query(
        `INSERT INTO usage_record_settlements (seq, record_id, tenant_id, status, reserved_units, created_at)
         SELECT settled_txid, id, tenant_id, settled_status, reserved_units, settled_event_at FROM usage_records WHERE id LIKE 'req_seed_%'`,
      );
      await client.query("ANALYZE usage_records; ANALYZE usage_record_settlements");
      const seeded = await explain();
      for (const plan of [empty, seeded]) {
        expect(plan).not.toMatch(/Seq Scan on usage_records/);
        expect(plan).toMatch(/usage_records_opened_txid_idx/);
        // The settlements are tailed from their own log (docs/decisions/0242), by its key (seq, record_id).
        expect(plan).toMatch(/usage_record_settlements_pkey/);
        expect(plan).not.toMatch(/Seq Scan on usage_record_settlements/);
      }
    } finally {
      client.release();
    }
  });
});
