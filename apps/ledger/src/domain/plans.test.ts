import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { PRISMA_DIR, SERVER_URL } from "../testing/ledger-database.js";

/**
 * PL/pgSQL keeps each statement's plan for the connection's life. Planned on a new,
 * empty ledger, the lookups by operation id and hold id were sequential scans, and
 * stayed so while the table grew (most of the ledger's database CPU in its benchmark).
 * Every statement that ledger_apply and ledger_credit run (and the triggers they fire)
 * must be planned as index lookups, whatever the table's size when planned. Checked with
 * auto_explain on one connection that starts on an empty database. ledger_apply is
 * called as the service calls it, a named prepared statement (decision 0167).
 */
const name = `gw_test_ledger_plans_${randomBytes(4).toString("hex")}`;
let c: pg.Client;
const plans: string[] = [];

beforeAll(async () => {
  const url = await prepareDatabase({ serverUrl: SERVER_URL, name, schemaPath: `${PRISMA_DIR}/schema.prisma`, migrationsDir: `${PRISMA_DIR}/migrations`, migrate: true });
  c = new pg.Client({ connectionString: url });
  await c.connect();
  c.on("notice", (n) => {
    if (n.message && /plan:/.test(n.message)) plans.push(n.message);
  });
  await c.query("LOAD 'auto_explain'");
  await c.query("SET auto_explain.log_min_duration = 0");
  await c.query("SET auto_explain.log_nested_statements = on");
  await c.query("SET client_min_messages = log");
});
afterAll(async () => {
  await c?.end();
  await dropDatabase(SERVER_URL, name);
});

const APPLY =
  "SELECT * FROM ledger_apply($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])";

describe("the ledger functions' plans", () => {
  it("look rows up by index, also when planned on an empty ledger", async () => {
    // Enough calls on one connection for PL/pgSQL to settle on its cached (generic) plans.
    for (let t = 0; t < 4; t++) {
      await c.query("SELECT * FROM ledger_credit($1, 'h', $2, 1000000, 'funds', $3, $4, NULL)", [`fund${t}`, `t${t}`, `trf_f${t}`, `evt_f${t}`]);
    }
    for (let b = 0; b < 12; b++) {
      const ids = [0, 1, 2, 3].map((k) => b * 4 + k);
      const col = <T>(f: (i: number) => T) => ids.map(f);
      await c.query({ name: "ledger_apply", text: APPLY, values: [col(() => "reserve"), col((i) => `r${i}`), col(() => "h"), col((i) => `t${i % 4}`), col(() => null), col(() => "100"), col(() => null), col(() => 900), col(() => ""), col((i) => `hold_${i}`), col((i) => `trf_r${i}`), col((i) => `evt_r${i}`), col(() => null)] });
      await c.query({ name: "ledger_apply", text: APPLY, values: [col(() => "capture"), col((i) => `c${i}`), col(() => "h"), col(() => null), col((i) => `hold_${i}`), col(() => "61"), col(() => null), col(() => null), col(() => ""), col(() => null), col((i) => `trf_c${i}`), col((i) => `evt_c${i}`), col(() => null)] });
    }
    const nested = plans.filter((p) => /"transfers"|"accounts"/.test(p) && !/ledger_apply\(\$1|ledger_credit\(\$1/.test(p.split("\n")[1] ?? ""));
    expect(nested.length).toBeGreaterThan(50);
    const scans = nested.filter((p) => /Seq Scan on (transfers|accounts)/.test(p));
    expect(scans.map((p) => p.split("\n").slice(0, 6).join("\n"))).toEqual([]);
    // ledger_apply is sent as the service sends it, a named statement (decision 0167): its
    // outer plan (a function scan) went generic, and the function's plans above are unchanged.
    const { rows } = await c.query<{ generic_plans: string; custom_plans: string }>("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'ledger_apply'");
    console.log(`ledger_apply, 24 calls on one connection: ${rows[0]?.custom_plans} custom plans, ${rows[0]?.generic_plans} executions of the generic plan`);
    expect(Number(rows[0]?.generic_plans)).toBeGreaterThan(0);
  });
});
