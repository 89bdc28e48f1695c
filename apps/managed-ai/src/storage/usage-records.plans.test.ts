import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "@gateway/db-kit";
import { LOG_RELAY_SETTINGS, logRelaySelect, poolStatements } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { freshDatabase, type FreshDatabase } from "@gateway/testkit";
import { recordToOpen } from "../testing/records.js";
import { OPEN, OPEN_ONE, SETTLE, SETTLE_ONE, UsageRecordWriter, type RecordToOpen } from "./usage-records.js";

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
/** Connections for `plansOf` (each used once, then closed with its settings). */
let probes: ReturnType<typeof createPool>;
const notices: string[] = [];

beforeAll(async () => {
  db = await freshDatabase({ prefix: "gw_test_mai_plans", prismaDir: PRISMA_DIR, poolSize: 1 });
  pool = db.pool;
  probes = createPool(db.url, { poolSize: 1 });
  const client = await pool.connect();
  client.on("notice", (n) => notices.push(n.message ?? ""));
  await client.query("LOAD 'auto_explain'");
  await client.query("SET auto_explain.log_min_duration = 0; SET client_min_messages = log; SET log_parser_stats = on; SET log_planner_stats = on");
  client.release();
});
afterAll(async () => {
  await probes?.end();
  await db?.drop();
});

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

/**
 * The plans a statement runs with, its nested statements' included (the settlement is a
 * PL/pgSQL function, its triggers' statements run inside it): auto_explain's notices for one
 * execution, in a transaction rolled back, with the plan PostgreSQL keeps after the fifth
 * call (the generic one) unless `custom`.
 */
async function plansOf(text: string, values: string, options: { settings?: string; custom?: boolean } = {}): Promise<string> {
  const client = await probes.connect();
  const seen: string[] = [];
  const listen = (n: { message?: string }) => seen.push(n.message ?? "");
  client.on("notice", listen);
  try {
    await client.query("LOAD 'auto_explain'");
    await client.query(
      `SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log;
       SET plan_cache_mode = ${options.custom ? "force_custom_plan" : "force_generic_plan"}`,
    );
    await client.query(`BEGIN; ${options.settings ?? ""}`);
    await client.query(`PREPARE plans_of AS ${text}`);
    await client.query(`EXECUTE plans_of${values}`);
    await client.query("ROLLBACK; DEALLOCATE plans_of");
  } finally {
    client.off("notice", listen);
    // Its settings (auto_explain, plan cache mode) go with it.
    client.release(true);
  }
  return seen.filter((m) => /plan:/.test(m)).join("\n");
}
const OPEN_VALUES =
  "('{req_probe}','{ten_plan}','{key_plan}','{chat}','{small}','{price_1}','{up_1}','{0}','{f}','{1}','{1}','{1}','{2030-01-01}','{idem_probe}','{managed}','{x}')";
const SETTLE_VALUES = "('{req_probe}', '{completed}', '{NULL}', '{NULL}', '{1}', '{NULL}')";
const OPEN_ONE_VALUES = "('req_probe','ten_plan','key_plan','chat','small','price_1','up_1','0','f','1','1','1','2030-01-01','idem_probe','managed','x')";
const SETTLE_ONE_VALUES = "('req_probe', 'completed', NULL, NULL, '1', NULL)";
/** Tables the request path's statements must only probe (by key), never scan. */
const PROBED = /Seq Scan on (usage_records|usage_records_unsettled|usage_record_own_holds|usage_record_settlements|allotments|idempotency_keys)\b/;

/**
 * Parses and plans (one notice each) of `rounds` opens and settlements of one record, with or
 * without statement names, by one record's statements or (`singleRow` false) the batch ones.
 */
async function run(rounds: number, named: boolean, singleRow: boolean): Promise<{ parses: number; plans: number; used: string[] }> {
  const statements = poolStatements(pool);
  const sql = named ? statements : { ...statements, query: <R>(text: string, values: unknown[]) => statements.query<R>(text, values) };
  const writer = new UsageRecordWriter(sql, createLogger({ service: "plans-test", level: "silent" }), undefined, { concurrency: 1, singleRow });
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
  it("probe usage_records and allotments by key from the first call on a new, never-analyzed database (docs/decisions/0280)", async () => {
    // The premise: nothing has analyzed the tables the migrations just made.
    const { rows } = await pool.query<{ relname: string; reltuples: number }>(
      "SELECT relname, reltuples FROM pg_class WHERE relname IN ('usage_records', 'allotments', 'idempotency_keys') ORDER BY relname",
    );
    expect(rows.map((r) => [r.relname, Number(r.reltuples)])).toEqual([
      ["allotments", -1],
      ["idempotency_keys", -1],
      ["usage_records", -1],
    ]);
    await pool.query(
      `INSERT INTO allotments (id, tenant_id, state, hold_id, units, expires_at) VALUES ('alt_probe', 'ten_plan', 'open', 'hold_alt_probe', 1000000, now() + interval '1 day')`,
    );
    try {
      for (const custom of [false, true]) {
        const open = await plansOf(OPEN, OPEN_VALUES, { custom });
        const settle = await plansOf(SETTLE, SETTLE_VALUES, { custom });
        const relay = await plansOf(logRelaySelect("usage_record_events", "usage_record_events", 500, "transaction"), "", {
          settings: LOG_RELAY_SETTINGS,
          custom,
        });
        const openOne = await plansOf(OPEN_ONE, OPEN_ONE_VALUES, { custom });
        const settleOne = await plansOf(SETTLE_ONE, SETTLE_ONE_VALUES, { custom });
        for (const plan of [open, settle, relay, openOne, settleOne]) expect(plan.split("\n").filter((l) => PROBED.test(l))).toEqual([]);
        // One record's open finds the tenant's open allotment by the live-allotment key (docs/decisions/0332).
        expect(openOne).toMatch(/allotments_live_key/);
        expect(openOne).not.toMatch(/allotments_state_next_check_at_idx/);
        expect(settleOne).toMatch(/Index Scan using usage_records_pkey on usage_records/);
        // The settlement reads usage_records by its key only (each record of the batch), and
        // locks and updates allotments by theirs.
        expect(settle).toMatch(/Index Scan using usage_records_pkey on usage_records/);
        // Every index it reads is a key: the records' and allotments' primary keys, the side tables'.
        const indexes = [...settle.matchAll(/(?:Index Scan using|Index Only Scan using|Bitmap Index Scan on) (\w+)/g)].map((m) => m[1]);
        expect(indexes).toContain("usage_records_pkey");
        expect(indexes.filter((i) => !/^(usage_records|allotments|usage_records_unsettled|usage_record_own_holds)_pkey$/.test(i!))).toEqual([]);
      }
    } finally {
      await pool.query("DELETE FROM allotments WHERE id = 'alt_probe'");
    }
  });

  it("are parsed once per connection and planned once, with index lookups also when planned on empty tables", async () => {
    const rounds = 12;
    const statementsRun = 2 * rounds;
    // One record's statements (a batch of one, docs/decisions/0332), then the batch statements.
    for (const singleRow of [true, false]) {
      const named = await run(rounds, true, singleRow);
      const again = await run(rounds, true, singleRow);
      // Before: every execution parsed and planned.
      const unnamed = await run(rounds, false, singleRow);
      console.log(
        `usage-record ${singleRow ? "one-record" : "batch"} statements, ${statementsRun} executions on one connection: unnamed ${unnamed.parses} parses / ${unnamed.plans} plans; named ${named.parses} parses / ${named.plans} plans, then ${again.parses} / ${again.plans}`,
      );
      expect(unnamed.parses).toBe(statementsRun);
      // Each named statement is parsed once (and the batch settlement's one statement). Five
      // custom plans each, then the generic plan is kept (plan_cache_mode = auto); the PL/pgSQL
      // functions' statements and expressions are planned once per connection (PL/pgSQL keeps
      // them): one record's two functions 13, the batch settlement 1, and the triggers that
      // keep usage_records' side tables (docs/decisions/0242) 8, on whichever path runs them
      // first. After that nothing parses or plans again.
      expect(named.parses).toBe(singleRow ? 2 : 2 + 1);
      expect(named.plans).toBeLessThanOrEqual(singleRow ? 2 * 6 + 13 + 8 : 2 * 6 + 1 + 8);
      expect(again).toMatchObject({ parses: 0, plans: 0 });
      // Planned on tables never analyzed, as the first test: nothing read whole (the functions'
      // nested plans are checked there; here the top-level ones, custom and generic).
      const scans = named.used.filter((p) => /Seq Scan on (idempotency_keys|allotments|usage_records)\b/.test(p));
      expect(named.used.length).toBeGreaterThanOrEqual(statementsRun);
      if (scans.length) console.log(named.used.find((p) => /Seq Scan on allotments/.test(p)));
      expect(scans).toEqual([]);
    }
    const { rows } = await pool.query<{ name: string; generic_plans: string; custom_plans: string }>(
      "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'usage_records_%' ORDER BY name",
    );
    expect(rows.map((r) => [r.name, Number(r.generic_plans) > 0])).toEqual([
      ["usage_records_open", true],
      ["usage_records_open_one", true],
      ["usage_records_settle", true],
      ["usage_records_settle_one", true],
    ]);
  });

  it("look the settled records up by their key once usage_records has statistics (docs/decisions/0242)", async () => {
    try {
      await pool.query(
        `INSERT INTO usage_records (id, tenant_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
           input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, updated_at)
         SELECT 'req_stats_' || i, 'ten_' || (i % 100), 'chat', 'small', 'price_1', 'up_1', 0, CASE WHEN i % 500 = 0 THEN 'reserved' ELSE 'completed' END,
           false, 10, 20, 123, now(), now()
         FROM generate_series(1, 20000) AS i`,
      );
      await pool.query("ANALYZE usage_records");
      const plan = await plansOf(SETTLE, SETTLE_VALUES);
      expect(plan).toMatch(/Index Scan using usage_records_pkey on usage_records/);
      expect(plan).not.toMatch(/Seq Scan on usage_records\b/);
    } finally {
      await pool.query("DELETE FROM usage_records WHERE id LIKE 'req_stats_%'");
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
