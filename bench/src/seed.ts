// Fills a running stack's databases the way months of traffic would (issue 36): usage
// records of many tenants, each charged from an allotment that is closed now, and the
// ledger's journal of the same history (a credit per tenant; per allotment its reserve,
// one post per record and the void of what was left). Bulk SQL (generate_series), not the
// API: a million records in a minute or two.
//
// The seeded rows are history that has been published already: their event positions
// (usage records' transaction ids, the journal's seq) are negative, below every relay's
// checkpoint, so no relay sends them again. The ledger's insert trigger (which checks each
// movement against its hold) is off for the seeding session only (session_replication_role):
// the rows are consistent by construction, and each tenant's balances equal its journal.
import type { Stack } from "@gateway/testkit";

export type SeedSize = { tenants: number; records: number; allotmentsPerTenant: number };

export const DEFAULT_SEED: SeedSize = { tenants: 10_000, records: 1_000_000, allotmentsPerTenant: 5 };

/** What one seeded request costs and holds (close to the bench's own requests). */
const FINAL = 86;
const RESERVED = 200;
const ALLOTMENT = 10_000;
const CREDIT = 1_000_000;

export type SeedReport = { seconds: number; managedAi: TableSizes; ledger: TableSizes };
export type TableSizes = Record<string, { rows: number; bytes: number }>;

export async function seed(stack: Stack, size: SeedSize = DEFAULT_SEED): Promise<SeedReport> {
  const { tenants: T, records: R, allotmentsPerTenant: A } = size;
  const perTenant = Math.floor(R / T);
  const perAllotment = Math.floor(perTenant / A);
  if (perAllotment < 1 || perAllotment * A * T !== R) throw new Error(`seed: ${R} records do not split evenly over ${T} tenants × ${A} allotments`);
  const charged = perAllotment * FINAL;
  const left = ALLOTMENT - charged;
  const started = Date.now();
  // A record i (1..R) in time order: tenant (i-1) % T + 1, round (i-1) / T, allotment round / perAllotment + 1.
  const span = "interval '30 days'";
  await stack.sql(
    "managed-ai",
    `INSERT INTO allotments (id, tenant_id, state, hold_id, units, claimed, carved, frozen, version, expires_at, last_claim_at, created_at, updated_at, closed_at, next_check_at, checks)
     SELECT 'alt_seed' || lpad(t::text, 6, '0') || k, 'ten_seed' || lpad(t::text, 6, '0'), 'closed', 'hold_seed' || lpad(t::text, 6, '0') || k,
       ${ALLOTMENT}, ${charged}, 0, 0, ${2 * perAllotment}, ts + interval '1 hour', ts, ts, ts, ts, ts, 1
     FROM generate_series(1, ${T}) t, generate_series(1, ${A}) k,
       LATERAL (SELECT now() - ${span} + ((k - 1) * ${perAllotment} * ${T} + t) * (${span} / ${R}) AS ts) x`,
  );
  await stack.sql(
    "managed-ai",
    `INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, mode, status, stream, api,
       input_tokens_bound, output_tokens_cap, reserved_units, final_units, usage_json, hold_expires_at, settled_at, allotment_id, created_at, updated_at,
       opened_txid, settled_txid, settled_event_at, settled_status, settled_final_units)
     SELECT 'req_seed' || lpad(i::text, 18, '0'), 'ten_seed' || lpad(t::text, 6, '0'), 'key_seed' || lpad(t::text, 6, '0'), 'bench', 'bench-small',
       'price_seed', 'mock', 0, 'managed', 'completed', false, 'chat_completions', 20, 16, ${RESERVED}, ${FINAL},
       '{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}', ts + interval '5 minutes', ts, 'alt_seed' || lpad(t::text, 6, '0') || k, ts, ts,
       -2 * i, -2 * i + 1, ts, 'completed', ${FINAL}
     FROM generate_series(1, ${R}) i,
       LATERAL (SELECT (i - 1) % ${T} + 1 AS t, (i - 1) / ${T} / ${perAllotment} + 1 AS k, now() - ${span} + i * (${span} / ${R}) AS ts) x`,
  );
  // No settlement-log rows (docs/decisions/0242): the history is published, and the log keeps
  // only what the relay has not yet published (decision 0281 prunes the rest).
  // The ledger: accounts, allotments, then the journal (negative seq, in time order per kind).
  const tenantId = "'ten_seed' || lpad(t::text, 6, '0')";
  const hold = "'hold_seed' || lpad(t::text, 6, '0') || k";
  await stack.sql(
    "ledger",
    `SET session_replication_role = replica;
     INSERT INTO accounts (tenant_id, available, held, debits_pending, debits_posted, credits_pending, credits_posted, created_at, updated_at)
     SELECT ${tenantId}, ${CREDIT - A * charged}, 0, 0, ${A * charged}, 0, ${CREDIT}, now() - ${span}, now() FROM generate_series(1, ${T}) t;
     INSERT INTO allotments (hold_id, tenant_id, units, posted, released, claimed, claimed_version, created_at, updated_at, closed_at)
     SELECT ${hold}, ${tenantId}, ${ALLOTMENT}, ${charged}, 0, ${charged}, ${2 * perAllotment}, now() - ${span}, now() - ${span}, now() - ${span}
     FROM generate_series(1, ${T}) t, generate_series(1, ${A}) k;
     INSERT INTO transfers (id, seq, operation_id, request_hash, kind, tenant_id, units, hold_id, reason, available_after, held_after, created_at,
       pending_units, expires_at, debit_account, credit_account, event_id, request_id)
     SELECT 'trf_seed_c' || t, -4000000000 + t, 'seed:credit:' || t, 'seed', 'credit', ${tenantId}, ${CREDIT}, NULL, 'seed', ${CREDIT}, 0, now() - ${span},
       NULL, NULL, 'funding', 'available', 'evt_seed_c' || t, NULL
     FROM generate_series(1, ${T}) t;
     INSERT INTO transfers (id, seq, operation_id, request_hash, kind, tenant_id, units, hold_id, reason, available_after, held_after, created_at,
       pending_units, expires_at, debit_account, credit_account, event_id, request_id)
     SELECT 'trf_seed_r' || t || '_' || k, -3000000000 + t * 10 + k, 'seed:reserve:' || t || ':' || k, 'seed', 'reserve', ${tenantId}, ${ALLOTMENT}, ${hold}, '',
       ${CREDIT} - (k - 1) * ${charged} - ${ALLOTMENT}, ${ALLOTMENT}, now() - ${span}, NULL, now(), 'available', 'held', 'evt_seed_r' || t || '_' || k, NULL
     FROM generate_series(1, ${T}) t, generate_series(1, ${A}) k;
     INSERT INTO transfers (id, seq, operation_id, request_hash, kind, tenant_id, units, hold_id, reason, available_after, held_after, created_at,
       pending_units, expires_at, debit_account, credit_account, event_id, request_id)
     SELECT 'trf_seed_p' || i, -2000000000 + i, 'post:req_seed' || lpad(i::text, 18, '0'), 'seed', 'post', ${tenantId}, ${FINAL}, ${hold}, '',
       ${CREDIT} - (k - 1) * ${charged} - ${ALLOTMENT}, ${ALLOTMENT} - n * ${FINAL}, ts, NULL, NULL, 'held', 'revenue', 'evt_seed_p' || i, 'req_seed' || lpad(i::text, 18, '0')
     FROM generate_series(1, ${R}) i,
       LATERAL (SELECT (i - 1) % ${T} + 1 AS t, (i - 1) / ${T} / ${perAllotment} + 1 AS k, ((i - 1) / ${T}) % ${perAllotment} + 1 AS n,
         now() - ${span} + i * (${span} / ${R}) AS ts) x;
     INSERT INTO transfers (id, seq, operation_id, request_hash, kind, tenant_id, units, hold_id, reason, available_after, held_after, created_at,
       pending_units, expires_at, debit_account, credit_account, event_id, request_id)
     SELECT 'trf_seed_v' || t || '_' || k, -1000000000 + t * 10 + k, 'seed:void:' || t || ':' || k, 'seed', 'void', ${tenantId}, ${left}, ${hold}, '',
       ${CREDIT} - k * ${charged}, 0, now() - ${span}, ${left}, NULL, 'held', 'available', 'evt_seed_v' || t || '_' || k, NULL
     FROM generate_series(1, ${T}) t, generate_series(1, ${A}) k;
     RESET session_replication_role;`,
  );
  // As a database that has lived would be: vacuumed and analyzed (visibility map, statistics).
  for (const service of ["managed-ai", "ledger"] as const) await stack.sql(service, "VACUUM ANALYZE");
  // The seed's WAL (about 1.5 GB) written out now, so its checkpoints do not fall into the first measured runs.
  await stack.sql("managed-ai", "CHECKPOINT");
  return { seconds: (Date.now() - started) / 1000, managedAi: await tableSizes(stack, "managed-ai"), ledger: await tableSizes(stack, "ledger") };
}

/** Rows and bytes (heap + indexes + TOAST) of a service's biggest tables. */
export async function tableSizes(stack: Stack, service: "managed-ai" | "ledger"): Promise<TableSizes> {
  const rows = await stack.sql<{ relname: string; n: string; bytes: string }>(
    service,
    `SELECT relname, n_live_tup::text AS n, pg_total_relation_size(relid)::text AS bytes FROM pg_stat_user_tables
     ORDER BY pg_total_relation_size(relid) DESC LIMIT 6`,
  );
  return Object.fromEntries(rows.map((r) => [r.relname, { rows: Number(r.n), bytes: Number(r.bytes) }]));
}
