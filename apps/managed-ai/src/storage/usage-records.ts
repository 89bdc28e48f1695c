import { GroupCommit } from "@gateway/db-kit";
import type { Statements } from "@gateway/events-runtime";
import type { Logger } from "@gateway/logger";
import type { InTx, OpenedRecord, RecordMove, RecordToOpen, RecordToSettle, RecordWrites } from "../domain/ports.js";

export type { RecordToOpen };

/*
 * Both statements take their rows as parallel arrays (one round trip, one commit
 * for the whole batch); a batch of one goes to OPEN_ONE and SETTLE_ONE below. A row
 * that changed records its statement's transaction id (a settlement also appends its
 * event to the log usage_record_settlements): the relay reads the events from there.
 * A key claimed in the last 24 hours makes its record's row write nothing; the
 * same key twice in one batch makes PostgreSQL refuse the statement, and the
 * batch is then written row by row (GroupCommit), where the second finds the
 * first's claim.
 */
export const OPEN = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::boolean[],
      $10::int[], $11::int[], $12::bigint[], $13::timestamptz[], $14::text[], $15::text[], $16::text[])
    AS i(id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, stream,
      input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, idempotency_key, mode, api)),
  key_claim AS (
    INSERT INTO idempotency_keys (tenant_id, api_key_id, key, request_id)
    SELECT tenant_id, api_key_id, idempotency_key, id FROM input WHERE idempotency_key IS NOT NULL AND api_key_id IS NOT NULL
    ON CONFLICT (tenant_id, api_key_id, key) DO UPDATE SET request_id = EXCLUDED.request_id, created_at = now()
    WHERE idempotency_keys.created_at < now() - interval '24 hours'
    RETURNING request_id),
  admitted AS (
    SELECT * FROM input WHERE idempotency_key IS NULL OR api_key_id IS NULL OR id IN (SELECT request_id FROM key_claim)),
  live AS (
    SELECT a.id, a.tenant_id, a.hold_id, a.units - a.claimed - a.carved - a.frozen AS free FROM allotments a
    WHERE a.state = 'open' AND a.tenant_id = ANY (ARRAY(SELECT tenant_id FROM admitted WHERE mode = 'managed' AND reserved_units > 0))
    ORDER BY a.id FOR UPDATE),
  wanted AS (
    SELECT d.id, d.reserved_units, l.id AS allotment_id, l.hold_id, l.free,
      sum(d.reserved_units) OVER (PARTITION BY d.tenant_id ORDER BY d.id) AS running
    FROM admitted d JOIN live l ON l.tenant_id = d.tenant_id
    WHERE d.mode = 'managed' AND d.reserved_units > 0),
  -- The claims are taken by an update that checks the row as it stands when it is
  -- updated (the free room read above can be a concurrent statement's stale view):
  -- an allotment that no longer has room for the batch's claims takes none of them,
  -- and those records hold for themselves.
  took AS (
    UPDATE allotments a SET claimed = a.claimed + g.units, version = a.version + 1, last_claim_at = now(), updated_at = now()
    FROM (SELECT allotment_id, sum(reserved_units) AS units FROM wanted WHERE running <= free GROUP BY allotment_id) g
    WHERE a.id = ANY (ARRAY(SELECT allotment_id FROM wanted WHERE running <= free)) AND a.id = g.allotment_id
      AND a.state = 'open' AND a.units - a.claimed - a.carved - a.frozen >= g.units
    RETURNING a.id),
  rec AS (
    INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
      input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, updated_at, mode, api, allotment_id, opened_txid)
    SELECT d.id, d.tenant_id, d.api_key_id, d.service_alias, d.model_alias, d.price_id, d.upstream_id, d.discount_bps, 'reserved', d.stream,
      d.input_tokens_bound, d.output_tokens_cap, d.reserved_units, d.hold_expires_at, now(), d.mode, d.api,
      CASE WHEN w.running <= w.free AND w.allotment_id IN (SELECT id FROM took) THEN w.allotment_id END,
      pg_current_xact_id()::text::bigint
    FROM admitted d LEFT JOIN wanted w ON w.id = d.id
    RETURNING id, allotment_id, reserved_units)
  SELECT rec.id, rec.allotment_id, w.hold_id, w.allotment_id AS live_id, (SELECT count(*) FROM took) AS took
  FROM rec LEFT JOIN wanted w ON w.id = rec.id`;

/*
 * The settlement is a PL/pgSQL function (migration 20261127200000_settle_planned_by_key,
 * docs/decisions/0280) that plans with sequential scans disabled: it only ever touches rows
 * by key, and planned while usage_records has no statistics (a new database) its generic
 * plan read the whole table on every call until the first autoanalyze. It updates the
 * batch's `reserved` records (each found by its key), appends their events to the log the
 * relay tails (usage_record_settlements: no index of usage_records holds a column the
 * update changes, so it is HOT, docs/decisions/0242) and gives back to their allotments
 * what they did not use.
 */
export const SETTLE = `SELECT id FROM usage_records_settle($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])`;

/*
 * A batch of one record goes to PL/pgSQL functions of plain statements that do for one row
 * what OPEN and the settlement do for many (migration 20261128140000, docs/decisions/0332):
 * the batch statements' plans cost about as much to start and end as to run for one row.
 * Same parameters, one value each.
 */
export const OPEN_ONE = `SELECT * FROM usage_records_open_one($1, $2, $3, $4, $5, $6, $7, $8::int, $9::boolean, $10::int, $11::int, $12::bigint,
  $13::timestamptz, $14, $15, $16)`;
export const SETTLE_ONE = `SELECT id FROM usage_records_settle_one($1, $2, $3, $4, $5::bigint, $6)`;

/**
 * The invocation hot path's writes to usage records, group-committed: opens
 * that arrive while earlier ones are being written go together in one
 * statement, and so do settlements. Each answers whether its own row changed.
 * `log` is the relay that tails the records' events: told after every write.
 */
export class UsageRecordWriter implements RecordWrites {
  private readonly opens: GroupCommit<RecordToOpen, OpenedRecord | null>;
  private readonly settles: GroupCommit<RecordToSettle, boolean>;

  constructor(
    sql: Pick<Statements, "query">,
    logger: Logger,
    log: { kick(): void } | undefined,
    options: {
      maxBatch?: number;
      concurrency?: number;
      onBatch?: (kind: "open" | "settle", size: number) => void;
      /** false: a batch of one goes to the batch statements too (tests compare the two). */
      singleRow?: boolean;
    } = {},
  ) {
    // Named statements: parsed once per connection, and planned once when PostgreSQL keeps
    // the generic plan (docs/decisions/0167; usage-records.plans.test.ts checks those plans).
    const changedIds = async (name: string, text: string, values: unknown[], ids: string[]) => {
      const changed = new Set((await sql.query<{ id: string }>(text, values, name)).map((r) => r.id));
      if (changed.size > 0) log?.kick();
      return ids.map((id) => changed.has(id));
    };
    const onBatchFailure = (what: string) => (err: unknown, size: number) =>
      logger.warn({ err, records: size }, `usage record ${what} batch failed; writing its records one by one`);
    const { onBatch, singleRow = true, ...sizes } = options;
    this.opens = new GroupCommit({
      ...sizes,
      onBatch: (size) => onBatch?.("open", size),
      onBatchFailure: onBatchFailure("open"),
      run: async (rows) => {
        type Row = { id: string; allotment_id: string | null; hold_id: string | null; live_id: string | null };
        const columns = (r: RecordToOpen) => [
          r.id,
          r.tenantId,
          r.apiKeyId,
          r.serviceAlias,
          r.modelAlias,
          r.priceId,
          r.upstreamId,
          r.discountBps,
          r.stream,
          r.inputTokensBound,
          r.outputTokensCap,
          r.reservedUnits.toString(),
          r.holdExpiresAt.toISOString(),
          r.idempotencyKey,
          r.mode ?? "managed",
          r.api ?? null,
        ];
        const written =
          rows.length === 1 && singleRow
            ? await sql.query<Row>(OPEN_ONE, columns(rows[0]!), "usage_records_open_one")
            : await sql.query<Row>(OPEN, transpose(rows.map(columns)), "usage_records_open");
        if (written.length > 0) log?.kick();
        const byId = new Map(written.map((r) => [r.id, r]));
        return rows.map((r) => {
          const w = byId.get(r.id);
          if (!w) return null;
          return { allotmentId: w.allotment_id, allotmentHoldId: w.allotment_id ? w.hold_id : null, ranOut: w.allotment_id ? null : w.live_id };
        });
      },
    });
    this.settles = new GroupCommit({
      ...sizes,
      onBatch: (size) => onBatch?.("settle", size),
      onBatchFailure: onBatchFailure("settlement"),
      run: (rows) => {
        const columns = (r: RecordToSettle) => [r.id, r.status, r.errorCode, r.holdId, r.finalUnits?.toString() ?? null, r.usageJson];
        const ids = rows.map((r) => r.id);
        return rows.length === 1 && singleRow
          ? changedIds("usage_records_settle_one", SETTLE_ONE, columns(rows[0]!), ids)
          : changedIds("usage_records_settle", SETTLE, transpose(rows.map(columns)), ids);
      },
    });
  }

  /** Opens the record; null when its Idempotency-Key was claimed in the last 24 hours (nothing written). */
  open(record: RecordToOpen): Promise<OpenedRecord | null> {
    return this.opens.submit(record);
  }

  /** Settles a `reserved` record; false when it was no longer `reserved` (nothing written). */
  settle(record: RecordToSettle): Promise<boolean> {
    return this.settles.submit(record);
  }
}

/**
 * Moves a record on if it is still as it was read (status, error code, `updated_at`):
 * true when it changed. A record moved to review keeps no final charge, and is due
 * for the reconciler at once.
 */
export async function moveRow(
  tx: InTx,
  row: { id: string; status: string; errorCode: string | null; updatedAt: Date },
  holdId: string | null,
  next: RecordMove,
): Promise<boolean> {
  const changed = await tx.$executeRawUnsafe(
    `UPDATE usage_records SET status = $5, error_code = $6, hold_id = $7,
       final_units = CASE WHEN $5 = 'review' THEN NULL ELSE COALESCE($8::bigint, final_units) END,
       refunded_units = COALESCE($9::bigint, refunded_units),
       settled_at = CASE WHEN $5 <> 'review' THEN now() ELSE settled_at END, updated_at = now(), recheck_at = NULL
     WHERE id = $1 AND status = $2 AND error_code IS NOT DISTINCT FROM $3 AND updated_at = $4::timestamptz`,
    row.id,
    row.status,
    row.errorCode,
    row.updatedAt.toISOString(),
    next.status,
    next.errorCode,
    holdId,
    next.finalUnits?.toString() ?? null,
    next.refundedUnits?.toString() ?? null,
  );
  return changed > 0;
}

/** A completed record whose capture failed goes to review (`settlement_failed`, its usage kept, nothing charged yet). */
export async function toSettlementFailed(tx: InTx, id: string): Promise<boolean> {
  const changed = await tx.$executeRawUnsafe(
    `UPDATE usage_records SET status = 'review', error_code = 'settlement_failed', final_units = NULL, settled_at = NULL, updated_at = now()
     WHERE id = $1 AND status = 'completed'`,
    id,
  );
  return changed > 0;
}

/**
 * A request the ledger refused: its `reserved` record and its Idempotency-Key claim go
 * (true when the record was there). The record's `request_reserved` event goes into the
 * outbox first, copied from the log that tails the records (view usage_record_events:
 * its id, payload and time are the view's, the one place they are derived), because the
 * relay that tails the records may not have read the row before it goes; if it did, the
 * second copy is dropped as a duplicate. The same event is kept in usage_record_refusals,
 * where the request view finds it once the record is gone (docs/decisions/0330).
 */
export async function deleteRefused(tx: InTx, r: { id: string; tenantId: string; apiKeyId: string | null; idempotencyKey: string | null }): Promise<boolean> {
  await tx.$executeRawUnsafe(
    `WITH ev AS (
       SELECT l.id, l.type, l.payload, l.request_id, l.created_at FROM usage_record_events l
       WHERE l.request_id = $1 AND l.type = 'managed_ai.request_reserved'
         AND EXISTS (SELECT 1 FROM usage_records u WHERE u.id = $1 AND u.status = 'reserved')),
     kept AS (
       INSERT INTO usage_record_refusals (request_id, tenant_id, event_id, payload, created_at)
       SELECT request_id, payload->>'tenant_id', id, payload, created_at FROM ev
       ON CONFLICT (request_id) DO NOTHING)
     INSERT INTO outbox_events (id, type, payload, request_id, created_at)
     SELECT id, type, payload, request_id, created_at FROM ev`,
    r.id,
  );
  const gone = await tx.$executeRawUnsafe(`DELETE FROM usage_records WHERE id = $1 AND status = 'reserved'`, r.id);
  if (gone === 0) return false;
  if (r.apiKeyId && r.idempotencyKey)
    await tx.$executeRawUnsafe(
      "DELETE FROM idempotency_keys WHERE tenant_id = $1 AND api_key_id = $2 AND key = $3 AND request_id = $4",
      r.tenantId,
      r.apiKeyId,
      r.idempotencyKey,
      r.id,
    );
  return true;
}

/** Counts an allotment's claims again from its records (the row locked first). */
export async function recountIn(tx: InTx, allotmentId: string): Promise<void> {
  await tx.$executeRawUnsafe("SELECT allotment_recount($1)", allotmentId);
}

/** Rows of values to one array per column (the batch statements' parameters). */
function transpose(rows: unknown[][]): unknown[][] {
  return rows[0]!.map((_, i) => rows.map((row) => row[i]));
}
