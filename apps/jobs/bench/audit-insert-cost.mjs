// What one audit row costs PostgreSQL (issue 36, docs/decisions/0315): the audit consumer's
// insert (domain/audit/record.ts, jsonb_array_elements of the batch) against other shapes of
// the same insert, in batches of the size the consumer commits under load (about 230 events:
// 50 ms of linger at 1,100 metered requests a second, 3 events each), on jobs' real schema.
// Then the same insert with the audit trail's secondary indexes dropped, and with its primary
// key dropped as well, to split the row's cost. Prints the backend's CPU (/proc, so run it on
// the machine that runs PostgreSQL) and wall time per event.
//
//   pnpm --filter @gateway/jobs build
//   flock /tmp/bench.lock node apps/jobs/bench/audit-insert-cost.mjs [batches=150]
//
// AUDIT_COST_SERVER: the server (default the machine's, postgresql://postgres@127.0.0.1:5432/postgres).
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createPool, dropDatabase, prepareDatabase } from "@gateway/db-kit";

const SERVER = process.env.AUDIT_COST_SERVER ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const PRISMA = fileURLToPath(new URL("../prisma", import.meta.url));
const batches = Number(process.argv[2] ?? 150);
const SIZE = 231;
const name = `jobs_audit_cost_${randomBytes(3).toString("hex")}`;
const url = await prepareDatabase({ serverUrl: SERVER, name, schemaPath: `${PRISMA}/schema.prisma`, migrationsDir: `${PRISMA}/migrations`, migrate: true });
const pool = createPool(url, { poolSize: 1 });

let n = 0;
const evtId = () => `evt_${createHash("md5").update(`${n++}:${Math.random()}`).digest("hex").slice(0, 26).toUpperCase()}`;
const ten = "ten_01KXYZABCDEFGHJKMNPQRSTVWX";
const key = "key_01KXYZABCDEFGHJKMNPQRSTVWX";
/** A batch as the consumer sees it: per metered request its reserved, settled and posted events. */
function batch() {
  const out = [];
  for (let i = 0; i < SIZE / 3; i++) {
    const req = `req_${randomUUID().replaceAll("-", "").slice(0, 26)}`;
    const t = new Date().toISOString();
    const base = { source: "managed-ai", occurred_at: t, request_id: req };
    out.push({
      id: evtId(),
      type: "managed_ai.request_reserved",
      ...base,
      data: {
        stream: false,
        key_id: key,
        price_id: "prc_01KXYZABCDEFGHJKMNPQRSTVWX",
        tenant_id: ten,
        request_id: req,
        model_alias: "bench-small",
        service_alias: "bench",
        reserved_units: "12345",
      },
    });
    out.push({
      id: evtId(),
      type: "managed_ai.request_settled",
      ...base,
      data: { status: "completed", key_id: key, tenant_id: ten, error_code: null, request_id: req, final_units: "345", reserved_units: "12345" },
    });
    out.push({
      id: evtId(),
      type: "ledger.posted",
      ...base,
      source: "ledger",
      data: {
        tenant_id: ten,
        transfer_id: `trf_${randomUUID()}`,
        allotment_id: "alt_01KXYZABCDEFGHJKMNPQRSTVWX",
        units: "345",
        reference: req,
        balance_units: "99999999999",
      },
    });
  }
  return out;
}

const COLUMNS = "INSERT INTO audit_events (event_id, type, source, request_id, occurred_at, data)";
const TAIL = "ON CONFLICT (event_id) DO NOTHING RETURNING event_id";
const RECORD = "AS e(id text, type text, source text, request_id text, occurred_at timestamptz, data jsonb)";
const SHAPES = {
  // domain/audit/record.ts as it is
  "jsonb_array_elements (as built)": `${COLUMNS} SELECT e->>'id', e->>'type', e->>'source', e->>'request_id', (e->>'occurred_at')::timestamptz, e->'data' FROM jsonb_array_elements($1::jsonb) AS e ${TAIL}`,
  jsonb_to_recordset: `${COLUMNS} SELECT e.id, e.type, e.source, e.request_id, e.occurred_at, e.data FROM jsonb_to_recordset($1::jsonb) ${RECORD} ${TAIL}`,
  json_to_recordset: `${COLUMNS} SELECT e.id, e.type, e.source, e.request_id, e.occurred_at, e.data FROM json_to_recordset($1::json) ${RECORD} ${TAIL}`,
};

const client = await pool.connect();
const pid = (await client.query("SELECT pg_backend_pid() AS p")).rows[0].p;
/** The backend's user + system CPU in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpu = () => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
async function run(label, sql) {
  const work = Array.from({ length: batches }, batch);
  await client.query("CHECKPOINT");
  const c0 = cpu();
  const t0 = performance.now();
  for (const events of work) {
    await client.query("BEGIN; SET LOCAL synchronous_commit = off");
    const r = await client.query(sql, [JSON.stringify(events)]);
    if (r.rowCount !== events.length) throw new Error(`${label}: ${r.rowCount} of ${events.length} stored`);
    await client.query("COMMIT");
  }
  const per = SIZE * batches;
  console.log(
    `${label}: backend CPU ${(((cpu() - c0) * 1000) / per).toFixed(1)} µs/event, wall ${(((performance.now() - t0) * 1000) / per).toFixed(1)} µs/event`,
  );
}
try {
  for (let round = 0; round < 2; round++) for (const [label, sql] of Object.entries(SHAPES)) await run(label, sql);
  if (process.env.AUDIT_COST_COLLATE_C === "1") {
    // The keys compared byte by byte (COLLATE "C") instead of by the database's collation.
    await client.query(
      `ALTER TABLE audit_events ALTER COLUMN event_id TYPE text COLLATE "C", ALTER COLUMN request_id TYPE text COLLATE "C", ALTER COLUMN type TYPE text COLLATE "C"`,
    );
    for (let round = 0; round < 2; round++) await run('as built, keys COLLATE "C"', SHAPES["jsonb_array_elements (as built)"]);
  }
  await client.query("DROP INDEX audit_events_request_id_idx, audit_events_type_occurred_at_idx, audit_events_occurred_at_idx");
  await run("as built, without the three secondary indexes", SHAPES["jsonb_array_elements (as built)"]);
  await client.query("ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey");
  await run("as built, no index at all (no conflict check)", SHAPES["jsonb_array_elements (as built)"].replace(TAIL, "RETURNING event_id"));
} finally {
  client.release();
  await pool.end();
  await dropDatabase(SERVER, name);
}
