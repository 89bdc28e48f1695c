-- The ledger's events, one per transfer, with the event catalog's payloads
-- (@gateway/events). The relay tails this view by seq (decision 0161).
--
-- History: 20261122170000_ledger_pending_posted, 20261125180000_ledger_allotments
-- (posted, released).
CREATE OR REPLACE VIEW "ledger_events" AS
SELECT t."seq", t."event_id" AS "id",
       'ledger.' || CASE t."kind" WHEN 'credit' THEN 'credited' WHEN 'reserve' THEN 'reserved' WHEN 'capture' THEN 'captured'
         WHEN 'post' THEN 'posted' WHEN 'release' THEN 'released' ELSE 'voided' END AS "type",
       CASE t."kind"
         WHEN 'credit' THEN jsonb_build_object('tenant_id', t."tenant_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'units', t."units"::TEXT, 'available_units', t."available_after"::TEXT, 'reason', t."reason")
         WHEN 'reserve' THEN jsonb_build_object('tenant_id', t."tenant_id", 'hold_id', t."hold_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'units', t."units"::TEXT, 'expires_at', to_char(t."expires_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'available_units', t."available_after"::TEXT, 'reserved_units', t."held_after"::TEXT)
         WHEN 'post' THEN jsonb_build_object('tenant_id', t."tenant_id", 'hold_id', t."hold_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'units', t."units"::TEXT, 'available_units', t."available_after"::TEXT, 'reserved_units', t."held_after"::TEXT)
         WHEN 'release' THEN jsonb_build_object('tenant_id', t."tenant_id", 'hold_id', t."hold_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'units', t."units"::TEXT, 'available_units', t."available_after"::TEXT, 'reserved_units', t."held_after"::TEXT)
         ELSE jsonb_build_object('tenant_id', t."tenant_id", 'hold_id', t."hold_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'released_units', (t."pending_units" - CASE WHEN t."kind" = 'capture' THEN t."units" ELSE 0 END)::TEXT,
           'available_units', t."available_after"::TEXT, 'reserved_units', t."held_after"::TEXT)
           || CASE WHEN t."kind" = 'capture' THEN jsonb_build_object('units', t."units"::TEXT) ELSE '{}'::JSONB END
       END AS "payload",
       t."request_id", t."created_at"
FROM "transfers" t;
