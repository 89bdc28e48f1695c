-- Issue 36 (docs/decisions/0280): the settlement probes usage_records by key from its first
-- call, whatever the statistics say. Written by hand (a function is not in schema.prisma's language).
--
-- On a new database usage_records has never been analyzed: the planner takes it for 10 pages
-- of a few hundred rows, estimates one `reserved` row among them and plans the settlement's
-- "the reserved records with these ids" (twice: the allotments to lock, and the update) as a
-- sequential scan joined to the batch. The prepared statement keeps that generic plan until
-- the first autoanalyze, while every call reads the whole, growing table (98 -> 360 buffer
-- hits a call over the first 3,000 requests; docs/benchmarks/seeded.md, "First calls").
-- An ANALYZE of the empty tables at migration time is worse: planned on 0 pages, it scans
-- allotments and usage_records alike until the next one.
--
-- The settlement only ever touches rows by key, so:
--  - it runs as a PL/pgSQL function that plans with sequential scans disabled (the SET clause
--    holds for the call only, its triggers' statements included), as the log relay's select
--    already does (LOG_RELAY_SETTINGS); PL/pgSQL keeps its plans per connection (custom, then
--    generic), as the named prepared statement did;
--  - the allotments to lock are read by one subquery per input row (the record by its key),
--    not a join: joined, the planner read the batch's records from usage_records'
--    allotment_id index (every record charged from an allotment) once seq scans were off.
-- Its text was storage/usage-records.ts's SETTLE, otherwise unchanged: a change to it is a
-- new migration (CREATE OR REPLACE FUNCTION).

CREATE FUNCTION "usage_records_settle"(text[], text[], text[], text[], bigint[], text[])
  RETURNS TABLE (id text)
  LANGUAGE plpgsql SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])
      AS i(id, status, error_code, hold_id, final_units, usage_json)),
    locked AS (
      SELECT a.id FROM allotments a
      -- A record's allotment by its key, once per input row (a subquery per row, not a join:
      -- joined, the planner could read the batch's records from another index, or all of them).
      WHERE a.id = ANY (ARRAY(SELECT (SELECT r.allotment_id FROM usage_records r WHERE r.id = i.id AND r.status = 'reserved') FROM input i))
      ORDER BY a.id FOR UPDATE),
    upd AS (
      UPDATE usage_records u SET status = i.status, error_code = i.error_code, hold_id = i.hold_id,
        final_units = COALESCE(i.final_units, u.final_units), usage_json = COALESCE(i.usage_json, u.usage_json),
        settled_at = CASE WHEN i.status <> 'review' THEN now() ELSE u.settled_at END, updated_at = now(),
        settled_txid = pg_current_xact_id()::text::bigint, settled_event_at = now(), settled_status = i.status,
        settled_error_code = i.error_code, settled_final_units = i.final_units
      FROM input i WHERE u.id = i.id AND u.status = 'reserved'
      RETURNING u.id, u.allotment_id, u.status, u.hold_id, u.reserved_units, u.final_units, u.tenant_id, u.api_key_id, u.settled_txid,
        u.settled_status, u.settled_final_units, u.settled_error_code, u.settled_event_at),
    -- The settlement's event goes into the log the relay tails (the row says what it says):
    -- no index of usage_records holds a column this update changes, so it is HOT (docs/decisions/0242).
    ev AS (
      INSERT INTO usage_record_settlements (seq, record_id, tenant_id, api_key_id, status, reserved_units, final_units, error_code, created_at)
      SELECT settled_txid, id, tenant_id, api_key_id, settled_status, reserved_units, settled_final_units, settled_error_code, settled_event_at FROM upd),
    back AS (
      UPDATE allotments a SET
        claimed = a.claimed - coalesce((SELECT sum(u.reserved_units - allotment_claim(u.status, u.hold_id, u.reserved_units, u.final_units)) FROM upd u WHERE u.allotment_id = a.id), 0),
        carved = a.carved + coalesce((SELECT sum(CASE WHEN u.hold_id IS NOT NULL THEN u.reserved_units ELSE 0 END) FROM upd u WHERE u.allotment_id = a.id), 0),
        version = a.version + 1, updated_at = now()
      WHERE a.id = ANY (ARRAY(SELECT id FROM locked))
      RETURNING a.id)
    SELECT id FROM upd;
END $fn$;
