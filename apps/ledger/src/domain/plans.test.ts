import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLedgerConnection, type LedgerConnection } from "../testing/ledger-database.js";

/**
 * PL/pgSQL keeps each statement's plan for the connection's life. Planned on a new,
 * empty ledger, the lookups by operation id and hold id were sequential scans, and
 * stayed so while the table grew (most of the ledger's database CPU in its benchmark).
 * Every statement that ledger_apply and ledger_credit run (and the triggers they fire)
 * must be planned as index lookups, whatever the table's size when planned. Checked with
 * auto_explain on one connection that starts on an empty database. ledger_apply is
 * called as the service calls it, a named prepared statement (decision 0167).
 */
let db: LedgerConnection;
let c: pg.Client;
const plans: string[] = [];

beforeAll(async () => {
  db = await openLedgerConnection("gw_test_ledger_plans");
  c = db.client;
  c.on("notice", (n) => {
    if (n.message && /plan:/.test(n.message)) plans.push(n.message);
  });
  await c.query("LOAD 'auto_explain'");
  await c.query("SET auto_explain.log_min_duration = 0");
  await c.query("SET auto_explain.log_nested_statements = on");
  await c.query("SET client_min_messages = log");
});
afterAll(() => db?.close());

const APPLY =
  "SELECT * FROM ledger_apply($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::boolean[], $15::text[], $16::bigint[], $17::text[], $18::text[], $19::text[])";

describe("the ledger functions' plans", () => {
  it("look rows up by index, also when planned on an empty ledger", async () => {
    // Enough calls on one connection for PL/pgSQL to settle on its cached (generic) plans.
    for (let t = 0; t < 4; t++) {
      await c.query("SELECT * FROM ledger_credit($1, 'h', $2, 1000000, 'funds', $3, $4, NULL)", [`fund${t}`, `t${t}`, `trf_f${t}`, `evt_f${t}`]);
    }
    // The columns of a batch: kind, op, hash, tenant, hold, units, expires, ttl, reason, new hold, transfer, event,
    // request, allotment, from hold, from units, from op, from transfer, from event.
    const apply = (ids: number[], m: (i: number) => unknown[]) =>
      c.query({ name: "ledger_apply", text: APPLY, values: Array.from({ length: 19 }, (_, col) => ids.map((i) => m(i)[col] ?? null)) });
    for (let b = 0; b < 12; b++) {
      const ids = [0, 1, 2, 3].map((k) => b * 4 + k);
      await apply(ids, (i) => ["reserve", `r${i}`, "h", `t${i % 4}`, null, "100", null, 900, "", `hold_${i}`, `trf_r${i}`, `evt_r${i}`, null, false]);
      await apply(ids, (i) => ["capture", `c${i}`, "h", null, `hold_${i}`, "61", null, null, "", null, `trf_c${i}`, `evt_c${i}`, null]);
      // Allotments: one per tenant, posts and releases from it, a reserve that releases from it first, a
      // replay of an earlier post (its totals then, from the journal), then its void.
      await apply(ids, (i) => ["reserve", `ra${i}`, "h", `t${i % 4}`, null, "1000", null, 900, "", `allot_${i}`, `trf_ra${i}`, `evt_ra${i}`, null, true]);
      await apply(ids, (i) => ["post", `p${i}`, "h", null, `allot_${i}`, "10", null, null, "", null, `trf_p${i}`, `evt_p${i}`, null]);
      await apply(ids, (i) => ["release", `l${i}`, "h", null, `allot_${i}`, "10", null, null, "", null, `trf_l${i}`, `evt_l${i}`, null]);
      await apply(ids, (i) => [
        "reserve",
        `rf${i}`,
        "h",
        `t${i % 4}`,
        null,
        "50",
        null,
        900,
        "",
        `holdf_${i}`,
        `trf_rf${i}`,
        `evt_rf${i}`,
        null,
        false,
        `allot_${i}`,
        "20",
        `rf${i}:from`,
        `trf_rff${i}`,
        `evt_rff${i}`,
      ]);
      await apply(ids, (i) => ["post", `p${i}`, "h", null, `allot_${i}`, "10", null, null, "", null, `trf_p${i}x`, `evt_p${i}x`, null]);
      await apply(ids, (i) => ["void", `va${i}`, "h", null, `allot_${i}`, null, null, null, "", null, `trf_va${i}`, `evt_va${i}`, null]);
    }
    // (Every movement above moved: one post, one release and one release-first per allotment, and its void.)
    const { rows: kinds } = await c.query<{ kind: string; n: number }>(
      "SELECT kind, count(*)::int AS n FROM transfers WHERE kind IN ('post', 'release', 'void') GROUP BY kind ORDER BY kind",
    );
    expect(kinds).toEqual([
      { kind: "post", n: 48 },
      { kind: "release", n: 96 },
      { kind: "void", n: 48 },
    ]);
    const nested = plans.filter((p) => /"transfers"|"accounts"|"allotments"/.test(p) && !/ledger_apply\(\$1|ledger_credit\(\$1/.test(p.split("\n")[1] ?? ""));
    expect(nested.length).toBeGreaterThan(50);
    // The allotments' statements were among them.
    expect(nested.some((p) => /allotments_pkey/.test(p))).toBe(true);
    expect(nested.some((p) => /transfers_allotment_moves_key/.test(p))).toBe(true);
    const scans = nested.filter((p) => /Seq Scan on (transfers|accounts|allotments)/.test(p));
    expect(scans.map((p) => p.split("\n").slice(0, 6).join("\n"))).toEqual([]);
    // ledger_apply is sent as the service sends it, a named statement (decision 0167): its
    // outer plan (a function scan) went generic, and the function's plans above are unchanged.
    const { rows } = await c.query<{ generic_plans: string; custom_plans: string }>(
      "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'ledger_apply'",
    );
    console.log(`ledger_apply, 96 calls on one connection: ${rows[0]?.custom_plans} custom plans, ${rows[0]?.generic_plans} executions of the generic plan`);
    expect(Number(rows[0]?.generic_plans)).toBeGreaterThan(0);
  });
});
