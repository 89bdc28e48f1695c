// PostgreSQL CPU per movement of ledger_apply, measured on the backend itself (from
// /proc, user + system), so that other load on the machine changes it little:
//   node bench/apply-cpu.mjs [--prisma <dir>] [--batch 16] [--pairs 3000] [--tenants 1] [--posts]
// Creates a database from <dir>'s migrations (default ../prisma; pass a previous build's
// prisma directory for before/after), credits the tenants, then runs reserve batches and
// capture batches of --batch movements through ledger_apply on one connection (commits
// without waiting for the disk: the flush is not CPU), and prints the backend's CPU
// per pair and the row changes per pair. With --posts: one allotment per tenant, then
// batches of posts against them (a "pair" is one post).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { dropDatabase, prepareDatabase } from "@gateway/db-kit";

const { values: args } = parseArgs({
  options: {
    prisma: { type: "string", default: fileURLToPath(new URL("../prisma", import.meta.url)) },
    batch: { type: "string", default: "16" },
    pairs: { type: "string", default: "3000" },
    tenants: { type: "string", default: "1" },
    posts: { type: "boolean", default: false },
  },
});
const batch = Number(args.batch);
const pairs = Number(args.pairs);
const tenants = Number(args.tenants);
const server = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const name = `gw_bench_apply_${process.pid}`;
const url = await prepareDatabase({
  serverUrl: server,
  name,
  schemaPath: `${args.prisma}/schema.prisma`,
  migrationsDir: `${args.prisma}/migrations`,
  migrate: true,
});
const c = new pg.Client({ connectionString: url });
await c.connect();
try {
  await c.query("SET synchronous_commit = off");
  const [{ pid }] = (await c.query("SELECT pg_backend_pid() AS pid")).rows;
  const cpu = () => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) * 10; // ms
  };
  const changes = async () => {
    await c.query("SELECT pg_stat_force_next_flush()").catch(() => undefined);
    await c.query("SELECT pg_stat_clear_snapshot()");
    return Number((await c.query("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint AS n FROM pg_stat_user_tables")).rows[0].n);
  };
  for (let t = 0; t < tenants; t++)
    await c.query("SELECT * FROM ledger_credit($1, 'h', $2, 1000000000000, 'x', $3, $4, NULL)", [`fund${t}`, `t${t}`, `trf_f${t}`, `evt_f${t}`]);
  const apply =
    "SELECT * FROM ledger_apply($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::boolean[], $15::text[], $16::bigint[], $17::text[], $18::text[], $19::text[])";
  const runPosts = async (from, to) => {
    for (let b = from; b < to; b += batch) {
      const ids = Array.from({ length: Math.min(batch, to - b) }, (_, k) => b + k);
      const col = (f) => ids.map(f);
      const none = [col(() => false), ...Array.from({ length: 5 }, () => col(() => null))];
      await c.query(apply, [
        col(() => "post"),
        col((i) => `p${i}`),
        col(() => "h"),
        col(() => null),
        col((i) => `allot_${i % tenants}`),
        col(() => "1"),
        col(() => null),
        col(() => null),
        col(() => ""),
        col(() => null),
        col((i) => `trf_p${i}`),
        col((i) => `evt_p${i}`),
        col(() => null),
        ...none,
      ]);
    }
  };
  if (args.posts) {
    for (let t = 0; t < tenants; t++) {
      await c.query(apply, [
        ["reserve"],
        [`a${t}`],
        ["h"],
        [`t${t}`],
        [null],
        ["100000000000"],
        [null],
        [900],
        [""],
        [`allot_${t}`],
        [`trf_a${t}`],
        [`evt_a${t}`],
        [null],
        [true],
        [null],
        [null],
        [null],
        [null],
        [null],
      ]);
    }
  }
  const run = args.posts
    ? runPosts
    : async (from, to) => {
        for (let b = from; b < to; b += batch) {
          const ids = Array.from({ length: Math.min(batch, to - b) }, (_, k) => b + k);
          const col = (f) => ids.map(f);
          // Not allotments, no release first (arguments 14-19).
          const none = [col(() => false), ...Array.from({ length: 5 }, () => col(() => null))];
          await c.query(apply, [
            col(() => "reserve"),
            col((i) => `r${i}`),
            col(() => "h"),
            col((i) => `t${i % tenants}`),
            col(() => null),
            col(() => "100"),
            col(() => null),
            col(() => 900),
            col(() => ""),
            col((i) => `hold_${i}`),
            col((i) => `trf_r${i}`),
            col((i) => `evt_r${i}`),
            col(() => null),
            ...none,
          ]);
          await c.query(apply, [
            col(() => "capture"),
            col((i) => `c${i}`),
            col(() => "h"),
            col(() => null),
            col((i) => `hold_${i}`),
            col(() => "61"),
            col(() => null),
            col(() => null),
            col(() => ""),
            col(() => null),
            col((i) => `trf_c${i}`),
            col((i) => `evt_c${i}`),
            col(() => null),
            ...none,
          ]);
        }
      };
  await run(0, 500); // warm-up
  const cpu0 = cpu();
  const rows0 = await changes();
  const t0 = Date.now();
  await run(500, 500 + pairs);
  const cpuMs = cpu() - cpu0;
  const rows = (await changes()) - rows0;
  console.log(
    `${args.prisma}${args.posts ? " (posts)" : ""}: batch ${batch}, ${tenants} tenants, ${pairs} pairs: PostgreSQL CPU ${((cpuMs * 1000) / pairs).toFixed(0)} µs per pair, ${(rows / pairs).toFixed(2)} row changes per pair (${Date.now() - t0} ms wall)`,
  );
} finally {
  await c.end();
  await dropDatabase(server, name);
}
