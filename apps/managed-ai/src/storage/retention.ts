import { mkdir, open, rename } from "node:fs/promises";
import { join } from "node:path";
import type { MonthOutcome, RetentionPool } from "../domain/ports.js";
import { monthStart } from "../domain/usage/retain.js";

/*
 * Usage retention's statements (docs/decisions/0241): which months may leave, and one
 * month's export and removal in a single REPEATABLE READ transaction, so the rows that
 * are deleted are exactly the rows that were written out.
 */

export type { MonthOutcome, RetentionPool } from "../domain/ports.js";

/** The first day (UTC) of every month before `cutoff` that still holds usage records, oldest first. */
export async function monthsBefore(pool: RetentionPool, cutoff: Date): Promise<Date[]> {
  const client = await pool.connect();
  try {
    // min() walks the created_at index from its start: one probe whatever the history.
    const { rows } = await client.query<{ first: Date | null }>("SELECT min(created_at) AS first FROM usage_records");
    const first = rows[0]?.first;
    const months: Date[] = [];
    if (!first) return months;
    for (let m = monthStart(first); m < cutoff; m = nextMonth(m)) months.push(m);
    return months;
  } finally {
    client.release();
  }
}

export function nextMonth(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** One line of the export: the record as the console shows it, money as strings. */
const LINE = `json_build_object('id', id, 'tenant_id', tenant_id, 'api_key_id', api_key_id, 'service_alias', service_alias,
  'model_alias', model_alias, 'price_id', price_id, 'upstream_id', upstream_id, 'discount_bps', discount_bps, 'mode', mode,
  'api', api, 'status', status, 'stream', stream, 'input_tokens_bound', input_tokens_bound, 'output_tokens_cap', output_tokens_cap,
  'reserved_units', reserved_units::text, 'final_units', final_units::text, 'refunded_units', refunded_units::text,
  'usage', usage_json::jsonb, 'error_code', error_code, 'hold_id', hold_id, 'allotment_id', allotment_id,
  'released_by', released_by, 'release_reason', release_reason,
  'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'settled_at', to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`;

/**
 * Writes the month's records to `<dir>/<YYYY-MM>/<tenant>.ndjson` (one JSON object a
 * line, in creation order), then deletes them, in one REPEATABLE READ transaction: a
 * row changed meanwhile makes the delete fail, and the next pass writes the month again
 * (the same files, replaced whole). A month that still holds a record in `reserved` or
 * `review` (money not settled) is left as it is until it holds none. Each file is written
 * beside its place, flushed to disk and renamed into it before the delete commits.
 */
export async function exportAndDeleteMonth(pool: RetentionPool, month: Date, dir: string, batch = 5_000): Promise<MonthOutcome> {
  const end = nextMonth(month);
  const name = month.toISOString().slice(0, 7);
  const range = [month.toISOString(), end.toISOString()];
  const client = await pool.connect();
  let committed = false;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
    const { rows: unsettled } = await client.query<{ n: number }>(
      // The records not settled yet, a small table of their own (docs/decisions/0242).
      "SELECT count(*)::int AS n FROM usage_records_unsettled WHERE created_at >= $1 AND created_at < $2",
      range,
    );
    if ((unsettled[0]?.n ?? 0) > 0) return { month: name, outcome: "unsettled", tenants: 0, records: unsettled[0]!.n };
    await client.query(
      `DECLARE retiring NO SCROLL CURSOR FOR SELECT tenant_id, ${LINE} AS line FROM usage_records
       WHERE created_at >= '${range[0]}' AND created_at < '${range[1]}' ORDER BY tenant_id, created_at, id`,
    );
    const folder = join(dir, name);
    await mkdir(folder, { recursive: true });
    let tenants = 0;
    let records = 0;
    let current: { tenant: string; file: Awaited<ReturnType<typeof open>>; lines: string[] } | undefined;
    const finish = async () => {
      if (!current) return;
      await current.file.write(current.lines.join(""));
      await current.file.sync();
      await current.file.close();
      await rename(join(folder, `.${fileName(current.tenant)}.ndjson.part`), join(folder, `${fileName(current.tenant)}.ndjson`));
      current = undefined;
    };
    for (;;) {
      const { rows } = await client.query<{ tenant_id: string; line: string }>(`FETCH ${batch} FROM retiring`);
      for (const r of rows) {
        if (current?.tenant !== r.tenant_id) {
          await finish();
          current = { tenant: r.tenant_id, file: await open(join(folder, `.${fileName(r.tenant_id)}.ndjson.part`), "w"), lines: [] };
          tenants++;
        }
        current!.lines.push(`${r.line}\n`);
        records++;
      }
      if (current && current.lines.length >= batch) {
        await current.file.write(current.lines.join(""));
        current.lines = [];
      }
      if (rows.length < batch) break;
    }
    await finish();
    await client.query("CLOSE retiring");
    if (records === 0) return { month: name, outcome: "empty", tenants: 0, records: 0 };
    await client.query("DELETE FROM usage_records WHERE created_at >= $1 AND created_at < $2", range);
    // The month's refused requests' reservations go with its records (docs/decisions/0330).
    await client.query("DELETE FROM usage_record_refusals WHERE created_at >= $1 AND created_at < $2", range);
    await client.query("COMMIT");
    committed = true;
    return { month: name, outcome: "exported", tenants, records };
  } finally {
    if (!committed) await client.query("ROLLBACK").catch(() => undefined);
    client.release();
  }
}

/** A tenant id as a file name (ids are [A-Za-z0-9_] today; anything else is escaped). */
function fileName(tenantId: string): string {
  return encodeURIComponent(tenantId);
}
